/**
 * What the agent makes of its tool calls around running them: each call's idempotency key, a
 * result a run may record, what the model reads for a call whose outcome is unknown, and the
 * chat message that carries a result back to the model.
 */
import type { ChatMessage, ToolCall } from "@llamaindex/core/llms";
import type { Context } from "../src/index.ts";
import type { OnceResult } from "../src/journal/index.ts";
import type { ToolSource } from "../src/tools/tool-calls.ts";
import { flatUUID } from "./flat-uuid.ts";

/**
 * A new idempotency key for each call, by call id.
 * @example idempotencyKeys([{ id: "c1", name: "add", input: {} }]).c1; // "3b241101-…"
 */
export function idempotencyKeys(calls: readonly ToolCall[]): Record<string, string> {
  // A null-prototype object is a hash table from the start: an object literal would get a new
  // hidden class for each call id, and call ids never repeat.
  const keys = Object.create(null) as Record<string, string>;
  for (const call of calls) keys[call.id] = flatUUID();
  return keys;
}

/**
 * `Promise.all(calls.map(call))`, but a turn of one call (most are) is awaited alone, without
 * `Promise.all`'s aggregate and its closures.
 * @example const results = await allOf(ev.toolCalls, (call) => runCall(call));
 */
export function allOf<T>(calls: readonly ToolCall[], call: (call: ToolCall) => T | Promise<T>): Promise<T[]> {
  if (calls.length !== 1) return Promise.all(calls.map(call));
  const only = call(calls[0] as ToolCall);
  return only instanceof Promise ? only.then((result) => [result]) : Promise.resolve([only]);
}

/**
 * A tool's result as `ctx.once` may record it: not one cut short by the end of the run, as the call may still take effect.
 * @example await ctx.once(`call ${call.id}`, () => recordable(runToolCall(call, tools, options), ctx.signal));
 */
export function recordable(result: ToolSource | Promise<ToolSource>, signal: AbortSignal): ToolSource | Promise<ToolSource> {
  const check = (source: ToolSource): ToolSource => {
    if (signal.aborted) throw signal.reason;
    return source;
  };
  return result instanceof Promise ? result.then(check) : check(result);
}

/**
 * What the model reads for a call that an earlier attempt started without recording its
 * outcome, and that is not made again: a human approved it, or its tool does not say that
 * making it twice is safe (tool-repeat-policy.ts).
 * @example if (done.status === "unknown") return unknownOutcome(call);
 */
export function unknownOutcome(call: ToolCall): ToolSource {
  const message = `The call to ${call.name} was started before, by an earlier attempt at this run that did not record its outcome (the process may have stopped while it ran, or another process resumed the same run). It was not made again, as that could apply it twice: it may or may not have taken effect. Check before calling it again.`;
  return { toolCallId: call.id, toolName: call.name, input: call.input, output: message, content: message, isError: true };
}

/**
 * The message that gives the model a tool's result.
 * @example resultMessage(source).options; // { toolResult: { id: "c1", result: "4444", isError: false } }
 */
export function resultMessage(source: ToolSource): ChatMessage {
  return { role: "user", content: source.content, options: { toolResult: { id: source.toolCallId, result: source.content, isError: source.isError } } };
}

/** How long past the tool timeout another attempt's result may take to reach the journal. */
const OUTCOME_GRACE_MS = 5_000;

/**
 * The call's result once another attempt at this run records it under `record`: a process that
 * resumed the same saved run may be running the call right now, and its result, not "unknown",
 * is what the model must read. That attempt's call ends within the tool timeout (a call that
 * times out records its timeout), so the journal is asked again until then; only if no result
 * comes (that attempt stopped mid-call) is the outcome unknown.
 * @example
 * let done = await ctx.once(record, work, options);
 * if (done.status === "unknown") done = await recordedElsewhere(ctx, record, work, options, 60);
 */
export async function recordedElsewhere(
  ctx: Context,
  record: string,
  work: () => ToolSource | Promise<ToolSource>,
  options: { rerunUnfinished: boolean },
  toolTimeoutSeconds: number,
): Promise<OnceResult<ToolSource>> {
  const deadline = Date.now() + toolTimeoutSeconds * 1000 + OUTCOME_GRACE_MS;
  for (let pause = 20; Date.now() < deadline && !ctx.signal.aborted; pause = Math.min(pause * 2, 1000)) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(pause, Math.max(0, deadline - Date.now())));
      function done() {
        clearTimeout(timer);
        ctx.signal.removeEventListener("abort", done);
        resolve();
      }
      ctx.signal.addEventListener("abort", done, { once: true });
    });
    if (ctx.signal.aborted) break;
    const again = await ctx.once(record, work, options);
    if (again.status !== "unknown") return again;
  }
  return { status: "unknown" };
}
