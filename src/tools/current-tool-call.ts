/**
 * Which tool call a tool's function is running for, with the call's idempotency key: the same
 * for every attempt at that call, in any process, so a server can recognise a repeated request.
 */

/** The call a tool's function was started for. @example `{ id: "call_1", name: "fire_employee", idempotencyKey: "5f0c…" }` */
export interface CurrentToolCall {
  /** The model's id of the call. */
  readonly id: string;
  readonly name: string;
  /** Unique to this call of this run, kept in the saved run: send it as an `Idempotency-Key`. */
  readonly idempotencyKey: string | undefined;
}

/**
 * One slot for the process, set only while a tool's function starts (synchronously): the one
 * module-level variable the tool runner keeps, on purpose. A slot that survived the function's
 * `await`s would need `AsyncLocalStorage.run`, which on Node 20 switches on promise hooks for
 * the whole process; measured on the agent (bench/README.md), that made turns slower in three
 * of four paired processes.
 */
let current: CurrentToolCall | undefined;

/**
 * The call your tool's function is running for. Read it when the function starts, before its
 * first `await`: it is set only while the agent calls the function.
 * @example
 * const charge = tool({ name: "charge", description: "Charge a card.", parameters: z.object({ cents: z.number() }), execute: ({ cents }) => {
 *   const key = currentToolCall()?.idempotencyKey;
 *   return payments.charge(cents, { idempotencyKey: key });
 * } });
 */
export function currentToolCall(): CurrentToolCall | undefined {
  return current;
}

/**
 * Runs `start` (a tool's call, which starts its function synchronously) with `call` as the current call.
 * @example startingToolCall({ id: call.id, name: call.name, idempotencyKey }, () => tool.call(args));
 */
export function startingToolCall<T>(call: CurrentToolCall, start: () => T): T {
  const previous = current;
  current = call;
  try {
    return start();
  } finally {
    current = previous;
  }
}
