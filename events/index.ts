/**
 * The function-calling agent's events. Each has a stable `typeName` (the key used when a
 * context is saved), namespaced so it cannot collide with a user's own `InputEvent`.
 */
import type { ChatMessage, ToolCall } from "@llamaindex/core/llms";
import { ConfigurationError, Event, HumanResponseEvent, InputRequiredEvent, describeValue } from "../src/core/internal.ts";
import type { ToolSource } from "../src/tools/tool-calls.ts";
import type { LLMCallUsage, RunUsage } from "../src/llm/token-usage.ts";

/**
 * The chat history to send to the LLM next.
 * @example new InputEvent({ input: [{ role: "user", content: "Hello!" }] })
 */
export class InputEvent extends Event<{ input: ChatMessage[] }> {
  static readonly typeName = "agent.InputEvent";
}

/**
 * One piece of the LLM's reply as it streams (written to the event stream only).
 * @example
 * for await (const ev of handler.streamEvents()) if (ev instanceof StreamEvent) process.stdout.write(ev.delta);
 */
export class StreamEvent extends Event<{ delta: string }> {
  static readonly typeName = "agent.StreamEvent";
}

/**
 * The tool calls of one LLM turn, in the order the model made them (also written to the
 * stream), and the `approvalId` of each call a human must approve (`needsApproval`), fixed
 * when the reply arrived so that a run restored from a saved context asks the same questions.
 * @example new ToolCallEvent({ toolCalls: [{ id: "call_1", name: "add", input: { x: 1, y: 2 } }] })
 */
export class ToolCallEvent extends Event<{ toolCalls: ToolCall[]; approvals?: Readonly<Record<string, string>> }> {
  static readonly typeName = "agent.ToolCallEvent";
}

/**
 * The result of one tool call, written to the stream as soon as that call finishes.
 * @example
 * if (ev instanceof FunctionOutputEvent) console.log(ev.output.toolName, "→", ev.output.content);
 */
export class FunctionOutputEvent extends Event<{ output: ToolSource }> {
  static readonly typeName = "agent.FunctionOutputEvent";
}

/**
 * The agent asks a human whether to run a tool call (one `needsApproval` selects), and waits
 * for a {@link ToolApprovalEvent} with the same `approvalId`. It is an `InputRequiredEvent`, so
 * an app that shows every `InputRequiredEvent`'s `prefix` shows this one too; the answer,
 * though, must be a `ToolApprovalEvent`.
 * @example
 * if (ev instanceof ToolApprovalRequestEvent) console.log(ev.prefix); // 'Run fire_employee with {"id":7}? (yes/no)'
 */
export class ToolApprovalRequestEvent extends InputRequiredEvent<{ prefix: string; toolCall: ToolCall; approvalId: string }> {
  static readonly typeName = "agent.ToolApprovalRequestEvent";
}

/** The fields of a {@link ToolApprovalEvent}. */
export interface ToolApproval {
  /** The `approvalId` of the request answered. */
  readonly approvalId: string;
  /** `true` runs the call; `false` does not, and the model is told so. */
  readonly approved: boolean;
  /** Why not, for the model to read. */
  readonly reason?: string | undefined;
}

/**
 * A human's answer to a {@link ToolApprovalRequestEvent}. Each request has its own
 * `approvalId`, so an answer sent twice, or late, never approves another call.
 * @example
 * handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: false, reason: "Ask HR first." }));
 */
export class ToolApprovalEvent extends HumanResponseEvent<ToolApproval> {
  static readonly typeName = "agent.ToolApprovalEvent";
  constructor(fields: ToolApproval) {
    const { approvalId, approved, reason } = (fields ?? {}) as Partial<Record<keyof ToolApproval, unknown>>;
    const wrong =
      typeof approvalId !== "string"
        ? "approvalId"
        : typeof approved !== "boolean"
          ? "approved"
          : reason !== undefined && typeof reason !== "string"
            ? "reason"
            : undefined;
    if (wrong) {
      const message = `ToolApprovalEvent takes { approvalId, approved, reason? }: the approvalId of the ToolApprovalRequestEvent answered, approved true or false, and an optional reason text; got ${describeValue(fields)}.`;
      throw new ConfigurationError(message, wrong, { approvalId, approved, reason }[wrong]);
    }
    super(fields);
  }
}

/**
 * The tokens of one LLM call of the agent (written to the stream when its reply is complete):
 * the server's figures (`call.usage`, when it reports them), the tool specs' weight counted
 * locally, and the run's sums so far (`run`, without the per-call list).
 * @example
 * if (ev instanceof TokenUsageEvent) console.log(`call ${ev.call.call}: ${ev.call.usage?.promptTokens ?? "?"} prompt tokens; run so far ${ev.run.totalTokens}`);
 */
export class TokenUsageEvent extends Event<{ call: LLMCallUsage; run: Omit<RunUsage, "calls"> }> {
  static readonly typeName = "agent.TokenUsageEvent";
}
