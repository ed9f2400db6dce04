/**
 * The names of the agent's `ctx.once` records: the side effects of its steps (the size of
 * memory a step writes at, the model's reply, a tool turn's keys, each tool call and each
 * human's answer). They are part of the saved format: a context saved by one version is
 * resumed by the next, which must find its records under the same names.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import type { CallCost } from "./agent-usage.ts";
import { toolCallRecord } from "./tool-call-record.ts";

/**
 * The record names, by what they record.
 * @example const at = await ctx.once(RECORDS.memorySize, () => run.size, { rerunUnfinished: true });
 */
export const RECORDS = {
  /** The size of memory when the question arrived: where it is written. */
  memorySize: "memory size",
  /** The model's reply (with the calls a human must approve and what it cost). */
  reply: "reply",
  /** A tool turn: where its results go in memory, and each call's idempotency key. */
  turn: "turn",
  /** One tool call's result (ids too long for a name are hashed: tool-call-record.ts). */
  call: (callId: string): string => toolCallRecord("call", callId),
  /** A human's answer to one tool call. */
  approval: (callId: string): string => toolCallRecord("approval", callId),
  /** The approval id asked under when the agent's own policy covers a call its reply did not mark. */
  approvalId: (callId: string): string => toolCallRecord("approval id", callId),
} as const;

/**
 * `ctx.once`'s options for work that is safe to do again when an attempt did not record it.
 * @example await ctx.once(RECORDS.reply, ask, RERUN_UNFINISHED);
 */
export const RERUN_UNFINISHED = { rerunUnfinished: true } as const;

/**
 * The model's reply as `ctx.once` records it (`RECORDS.reply`): the size of memory before it,
 * the questions it raises and what it cost.
 * @example const reply: Reply = { message: { role: "assistant", content: "Hi." }, at: 1 };
 */
export interface Reply {
  readonly message: ChatMessage;
  readonly at: number;
  /** The `approvalId` of each call a human must approve (tool-approval.ts's `ApprovalMarks`). */
  readonly approvals?: Readonly<Record<string, string>> | undefined;
  /** What the call took (absent from replies saved by stepflow 0.1). */
  readonly cost?: CallCost | undefined;
}
