/**
 * Which tool call a tool's function runs for, with the call's idempotency key: the same for
 * every attempt at that call, in any process, so a server can recognise a repeated request.
 * The tool runner hands it to each call as an argument (`tool.call(input, call)`), which stays
 * valid across the function's `await`s, and keeps `currentToolCall()` for the tools that
 * cannot take it.
 */
import type { BaseTool } from "@llamaindex/core/llms";

/**
 * The call a tool's function runs for, given to it as an argument: the third of a function made
 * with stepflow's `tool()` (after a `.bind()` argument), the second of a `BaseTool`'s own `call`.
 * @example
 * const charge = tool({
 *   name: "charge",
 *   description: "Charge a card.",
 *   parameters: z.object({ cents: z.number() }),
 *   execute: async ({ cents }, _bound, call) => {
 *     const customer = await customers.current();
 *     return payments.charge(customer, cents, { idempotencyKey: call?.idempotencyKey, signal: call?.signal });
 *   },
 * });
 */
export interface ToolCallDetails {
  /** The model's id of the call. */
  readonly id: string;
  readonly name: string;
  /** Unique to this call of this run, kept in the saved run: send it as an `Idempotency-Key`. */
  readonly idempotencyKey: string | undefined;
  /**
   * Aborted when the call is no longer waited for: it ran past the agent's `toolTimeout`, or the
   * run ended (cancelled, timed out). Pass it to `fetch` or an SDK so that the work stops too.
   */
  readonly signal?: AbortSignal;
}

/** The call `currentToolCall()` returns: {@link ToolCallDetails}. @example `{ id: "call_1", name: "fire_employee", idempotencyKey: "5f0c…" }` */
export type CurrentToolCall = ToolCallDetails;

/**
 * One slot for the process, set only while a tool's function starts (synchronously): the one
 * module-level variable the tool runner keeps, on purpose, for tools that cannot take the call
 * as an argument (a LlamaIndex `FunctionTool` made elsewhere). A slot that survived the
 * function's `await`s would need `AsyncLocalStorage.run`, which on Node 20 switches on promise
 * hooks for the whole process; measured on the agent (bench/README.md), that made turns slower
 * in three of four paired processes.
 */
let current: ToolCallDetails | undefined;

/**
 * The call your tool's function is running for, when it cannot take the call as an argument:
 * read it when the function starts, before its first `await` (it is set only while the agent
 * starts the function; after an `await` it is gone, or another call's). A function made with
 * stepflow's `tool()` gets the call as its third argument instead, valid throughout.
 * @example
 * const charge = FunctionTool.from(({ cents }: { cents: number }) => {
 *   const key = currentToolCall()?.idempotencyKey; // before any await
 *   return payments.charge(cents, { idempotencyKey: key });
 * }, { name: "charge", description: "Charge a card.", parameters: { type: "object", properties: { cents: { type: "number" } }, required: ["cents"] } });
 */
export function currentToolCall(): ToolCallDetails | undefined {
  return current;
}

/**
 * Starts `tool`'s call with `input`, handing it `call` as the second argument of its `call`
 * (which stepflow's `tool()`, MCP and OpenAPI tools take) and as `currentToolCall()` while it
 * starts (for the tools that ignore the argument). Given `parsed`, the tool's function for
 * arguments already parsed, calls that instead.
 * @example const result = startToolCall(add, { x: 1, y: 2 }, { id: "c1", name: "add", idempotencyKey: undefined });
 */
export function startToolCall(
  tool: BaseTool & { call: NonNullable<BaseTool["call"]> },
  input: unknown,
  call: ToolCallDetails,
  parsed?: (input: unknown, call: ToolCallDetails) => unknown,
): unknown {
  const previous = current;
  current = call;
  try {
    return parsed ? parsed(input, call) : (tool as { call(input: unknown, call: ToolCallDetails): unknown }).call(input, call);
  } finally {
    current = previous;
  }
}
