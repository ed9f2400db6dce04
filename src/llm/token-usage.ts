/**
 * Tokens an agent spends: what the server says each LLM call cost (OpenAI's `usage`, sent as
 * the last chunk of a stream asked for with `stream_options: { include_usage: true }`, and the
 * other providers' own fields), and
 * what the tool specs sent on each call weigh, counted locally.
 */
import type { BaseTool } from "@llamaindex/core/llms";
import { tokenizers } from "@llamaindex/env/tokenizers";
import { isRecord } from "../core/internal.ts";
import { KNOWN_SPEC_TOKENS } from "./known-spec-tokens.ts";

/**
 * What one LLM call cost, as the server reported it.
 * @example const usage: TokenUsage = { promptTokens: 1210, completionTokens: 42, totalTokens: 1252, cachedTokens: 1024 };
 */
export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  /** Prompt tokens the server read from its cache (OpenAI's `prompt_tokens_details.cached_tokens`), when it says. */
  readonly cachedTokens?: number;
}

/**
 * One LLM call of an agent run.
 * @example
 * if (ev instanceof TokenUsageEvent) console.log(ev.call.usage?.promptTokens, ev.call.toolSpecTokens);
 */
export interface LLMCallUsage {
  /** 1 for the run's first LLM call, 2 for the next, … */
  readonly call: number;
  /** The server's figures; `undefined` when it sent none (a local model, or a server without `include_usage`). */
  readonly usage: TokenUsage | undefined;
  /** Tokens of the tool specs sent on this call, counted locally (cl100k_base, on their JSON): part of `promptTokens`. */
  readonly toolSpecTokens: number;
  /** Tools sent on this call, and tools the agent has (fewer are sent with `maxToolsPerCall`). */
  readonly toolsSent: number;
  readonly toolsAvailable: number;
}

/**
 * The LLM calls of one agent run, and their sums.
 * @example
 * const { usage } = await agent.run({ input: "What is 2 + 2?" });
 * console.log(`${usage.llmCalls} calls, ${usage.promptTokens} prompt tokens (${usage.toolSpecTokens} of them tool specs)`);
 */
export interface RunUsage extends TokenUsage {
  readonly llmCalls: number;
  /** Calls whose server reported its usage: the token sums cover these. */
  readonly reportedCalls: number;
  readonly toolSpecTokens: number;
  readonly calls: readonly LLMCallUsage[];
}

const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined);

/**
 * The usage in a raw streamed chunk or response, if it carries one, in each provider's own fields:
 * - OpenAI's chat completions (`usage.prompt_tokens`, `completion_tokens`) and its Responses API
 *   (`usage.input_tokens`, `output_tokens`, cached tokens among the input);
 * - Anthropic (`usage.input_tokens`, `output_tokens`, with cache reads and writes counted apart
 *   from `input_tokens`: the prompt is their sum);
 * - Gemini (`usageMetadata.promptTokenCount`, `candidatesTokenCount`, `thoughtsTokenCount`);
 * - Ollama's `/api/chat` (`prompt_eval_count`, `eval_count` on the chunk with `done: true`).
 * @example usageOf({ usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }); // { promptTokens: 10, completionTokens: 2, totalTokens: 12 }
 */
export function usageOf(raw: unknown): TokenUsage | undefined {
  if (!isRecord(raw)) return undefined;
  const usage = raw.usage;
  if (isRecord(usage)) return "cache_read_input_tokens" in usage || "cache_creation_input_tokens" in usage ? anthropicUsage(usage) : openAIUsage(usage);
  if (isRecord(raw.usageMetadata)) return geminiUsage(raw.usageMetadata);
  // Ollama leaves prompt_eval_count out when the whole prompt came from its cache.
  if (raw.done === true && count(raw.eval_count) !== undefined)
    return tokenUsage(count(raw.prompt_eval_count) ?? 0, count(raw.eval_count), undefined, undefined);
  return undefined;
}

function openAIUsage(usage: Record<string, unknown>): TokenUsage | undefined {
  const details = usage.prompt_tokens_details ?? usage.input_tokens_details;
  const cached = isRecord(details) ? count(details.cached_tokens) : undefined;
  return tokenUsage(
    count(usage.prompt_tokens) ?? count(usage.input_tokens),
    count(usage.completion_tokens) ?? count(usage.output_tokens),
    count(usage.total_tokens),
    cached,
  );
}

function anthropicUsage(usage: Record<string, unknown>): TokenUsage | undefined {
  const input = count(usage.input_tokens);
  const read = count(usage.cache_read_input_tokens) ?? 0;
  const written = count(usage.cache_creation_input_tokens) ?? 0;
  return tokenUsage(input === undefined ? undefined : input + read + written, count(usage.output_tokens), undefined, read > 0 ? read : undefined);
}

function geminiUsage(usage: Record<string, unknown>): TokenUsage | undefined {
  const candidates = count(usage.candidatesTokenCount) ?? 0;
  const thoughts = count(usage.thoughtsTokenCount) ?? 0;
  // A chunk before the reply's first token says only promptTokenCount: not yet a call's usage.
  const completion = usage.candidatesTokenCount === undefined && usage.thoughtsTokenCount === undefined ? undefined : candidates + thoughts;
  return tokenUsage(count(usage.promptTokenCount), completion, count(usage.totalTokenCount), count(usage.cachedContentTokenCount));
}

function tokenUsage(
  promptTokens: number | undefined,
  completionTokens: number | undefined,
  total: number | undefined,
  cachedTokens: number | undefined,
): TokenUsage | undefined {
  if (promptTokens === undefined || completionTokens === undefined) return undefined;
  const totalTokens = total ?? promptTokens + completionTokens;
  return cachedTokens === undefined ? { promptTokens, completionTokens, totalTokens } : { promptTokens, completionTokens, totalTokens, cachedTokens };
}

/**
 * The sums of `calls`.
 * @example runUsage([]); // { llmCalls: 0, reportedCalls: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, toolSpecTokens: 0, calls: [] }
 */
export function runUsage(calls: readonly LLMCallUsage[]): RunUsage {
  return sum(calls, true) as RunUsage;
}

/**
 * The sums of `calls`, without the list: what an agent reports after each call (one object,
 * not the whole usage and a copy of it without `calls`).
 * @example usageSums([]); // { llmCalls: 0, reportedCalls: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, toolSpecTokens: 0 }
 */
export function usageSums(calls: readonly LLMCallUsage[]): Omit<RunUsage, "calls"> {
  return sum(calls, false);
}

function sum(calls: readonly LLMCallUsage[], withCalls: boolean): Omit<RunUsage, "calls"> {
  let promptTokens = 0;
  let completionTokens = 0;
  let totalTokens = 0;
  let cachedTokens: number | undefined;
  let reportedCalls = 0;
  let toolSpecTokens = 0;
  for (const call of calls) {
    toolSpecTokens += call.toolSpecTokens;
    if (!call.usage) continue;
    reportedCalls++;
    promptTokens += call.usage.promptTokens;
    completionTokens += call.usage.completionTokens;
    totalTokens += call.usage.totalTokens;
    if (call.usage.cachedTokens !== undefined) cachedTokens = (cachedTokens ?? 0) + call.usage.cachedTokens;
  }
  const llmCalls = calls.length;
  const sums: { -readonly [K in keyof RunUsage]?: RunUsage[K] } = withCalls
    ? { llmCalls, reportedCalls, promptTokens, completionTokens, totalTokens, toolSpecTokens, calls }
    : { llmCalls, reportedCalls, promptTokens, completionTokens, totalTokens, toolSpecTokens };
  if (cachedTokens !== undefined) sums.cachedTokens = cachedTokens;
  return sums as Omit<RunUsage, "calls">;
}

/**
 * The tool's spec as OpenAI-compatible servers receive it in `tools`.
 * @example toolSpec(add); // { type: "function", function: { name: "add", description: "Add two numbers.", parameters: { … } } }
 */
export function toolSpec(tool: BaseTool): { type: "function"; function: { name: string; description: string; parameters: unknown } } {
  const { name, description, parameters } = tool.metadata;
  return { type: "function", function: { name, description, parameters: parameters ?? { type: "object", properties: {} } } };
}

const specTokens = new WeakMap<BaseTool, number>();

/**
 * Tokens of the tools' specs (their JSON, in cl100k_base: `gpt-tokenizer` when installed, else
 * js-tiktoken), counted once per tool (the calculator tools' counts are known without a
 * tokenizer: known-spec-tokens.ts). The server's own count differs a little: OpenAI rewrites
 * specs into its own format before the model reads them.
 * @example toolSpecTokens([add, multiply]); // 92
 */
export function toolSpecTokens(tools: readonly BaseTool[]): number {
  let total = 0;
  for (const tool of tools) {
    let tokens = specTokens.get(tool);
    if (tokens === undefined) {
      const json = JSON.stringify(toolSpec(tool));
      tokens = KNOWN_SPEC_TOKENS.get(json) ?? tokenizers.tokenizer().encode(json).length;
      specTokens.set(tool, tokens);
    }
    total += tokens;
  }
  return total;
}

/**
 * A line for a log: `prompt 1,210 (1,024 cached), completion 42; tool specs 640 (5 of 300 tools)`.
 * @example describeCallUsage(ev.call);
 */
export function describeCallUsage(call: LLMCallUsage): string {
  const n = (value: number) => value.toLocaleString("en-US");
  const usage = call.usage;
  const server = usage
    ? `prompt ${n(usage.promptTokens)}${usage.cachedTokens ? ` (${n(usage.cachedTokens)} cached)` : ""}, completion ${n(usage.completionTokens)}`
    : "usage not reported by the server";
  const tools = call.toolsSent === call.toolsAvailable ? `${call.toolsSent} tools` : `${call.toolsSent} of ${call.toolsAvailable} tools`;
  return `${server}; tool specs ${n(call.toolSpecTokens)} (${tools})`;
}
