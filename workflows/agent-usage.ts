/**
 * The tokens a run's LLM calls take: each reply's cost is added to the run's usage once,
 * however often its step is resumed, and told to the stream (`TokenUsageEvent`) and to the
 * verbose log.
 */
import type { BaseTool } from "@llamaindex/core/llms";
import { TokenUsageEvent } from "../events/index.ts";
import type { Context } from "../src/index.ts";
import { describeCallUsage, toolSpecTokens, usageSums } from "../src/llm/token-usage.ts";
import type { LLMCallUsage, TokenUsage } from "../src/llm/token-usage.ts";

/** What one LLM call took, as its reply records it (absent from replies saved by stepflow 0.1). @example `const cost: CallCost = callCost(usage, tools, 12);` */
export type CallCost = Omit<LLMCallUsage, "call">;

/**
 * The run's LLM calls, at ctx.store "usage", and the memory size of the last reply counted, so
 * a step resumed after counting its reply does not count it again.
 * @example const record: UsageRecord = { calls: [], lastAt: -1 };
 */
export interface UsageRecord {
  calls: readonly LLMCallUsage[];
  lastAt: number;
}

/**
 * The cost of a call that sent `tools` out of `toolsAvailable`, with the usage the model reported.
 * @example callCost({ inputTokens: 20, outputTokens: 5 }, [add], 2)
 */
export function callCost(usage: TokenUsage | undefined, tools: readonly BaseTool[], toolsAvailable: number): CallCost {
  return { usage, toolSpecTokens: toolSpecTokens(tools), toolsSent: tools.length, toolsAvailable };
}

/**
 * Adds the cost of the reply written at memory size `at` to the run's usage (once, however
 * often the step is resumed), and tells the stream and, given `log`, the verbose log.
 * @example countUsage(ctx, run.usage, reply.at, reply.cost, this.verbose ? (line) => this.trace(line) : undefined);
 */
export function countUsage(ctx: Context, record: UsageRecord, at: number, cost: CallCost | undefined, log?: (line: string) => void): void {
  if (!cost || at <= record.lastAt || ctx.signal.aborted) return;
  const { usage, toolSpecTokens, toolsSent, toolsAvailable } = cost; // those fields only: a saved reply is JSON from another version
  const call: LLMCallUsage = { call: record.calls.length + 1, usage, toolSpecTokens, toolsSent, toolsAvailable };
  // A list one longer, not a push: a run makes a few calls, and push's first growth would
  // keep 16 spare slots alive with each session in flight.
  record.calls = [...record.calls, call];
  record.lastAt = at;
  ctx.writeEventToStream(new TokenUsageEvent({ call, run: usageSums(record.calls) }));
  log?.(`Tokens of LLM call ${call.call}: ${describeCallUsage(call)}`); // toLocaleString is slow: only when shown
}
