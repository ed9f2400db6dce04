/**
 * What the agent makes of its tool calls around running them: each call's idempotency key, a
 * result a run may record, what the model reads for a call whose outcome is unknown, and the
 * chat message that carries a result back to the model.
 */
import type { ChatMessage, ToolCall } from "@llamaindex/core/llms";
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
 * What the model reads for an approved call that an earlier attempt started without recording its outcome.
 * @example if (done.status === "unknown") return unknownOutcome(call);
 */
export function unknownOutcome(call: ToolCall): ToolSource {
  const message = `The call to ${call.name} was started before, by an earlier attempt at this run that did not record its outcome (the process may have stopped while it ran, or another process resumed the same run), so it was not run again: it may or may not have taken effect. Check before calling it again.`;
  return { toolCallId: call.id, toolName: call.name, input: call.input, output: message, content: message, isError: true };
}

/**
 * The message that gives the model a tool's result.
 * @example resultMessage(source).options; // { toolResult: { id: "c1", result: "4444", isError: false } }
 */
export function resultMessage(source: ToolSource): ChatMessage {
  return { role: "user", content: source.content, options: { toolResult: { id: source.toolCallId, result: source.content, isError: source.isError } } };
}
