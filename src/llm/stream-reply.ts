/**
 * One streamed LLM call with tools, gathered into the assistant message it makes: its text as
 * it streams, and its tool calls complete.
 */
import type { BaseTool, ChatMessage, ChatResponseChunk, ToolCall, ToolCallLLM, ToolCallLLMMessageOptions } from "@llamaindex/core/llms";
import { sharedRunObservers } from "../core/internal.ts";
import type { ObservedAttributes, RunObservers } from "../core/internal.ts";
import { withToolCallInput } from "../tools/tool-calls.ts";
import type { ReplyRequest } from "./provider-llm.ts";
import { usageOf } from "./token-usage.ts";
import type { TokenUsage } from "./token-usage.ts";

/**
 * Streams `llm`'s reply to `messages`, calling `onDelta` with each piece of text, and returns
 * the reply as one assistant message (`options.toolCall` when the model called tools). Throws
 * the signal's reason when `signal` aborts meanwhile, so that a cut-off reply is never taken
 * for a whole one (the OpenAI SDK ends an aborted stream quietly). `onUsage` gets the token
 * usage the server reported in a chunk's `raw` (OpenAI's last chunk, with `include_usage`), if any.
 * The call is a `chat {model}` operation for `observers` (`stepflow/otel`): give the workflow's
 * (`this.observers` in a step); by default those registered for the process. `request` asks
 * for an answer in a JSON schema (`format`, as LlamaIndex's `responseFormat`) or for a tool call
 * (`toolRequired`, as the chat option `toolChoice: "required"`).
 * @example
 * const reply = await streamReply(llm, history, tools, ctx.signal, (delta) => process.stdout.write(delta));
 */
export function streamReply(
  llm: ToolCallLLM,
  messages: ChatMessage[],
  tools: readonly BaseTool[],
  signal: AbortSignal,
  onDelta: (delta: string) => void,
  onUsage?: (usage: TokenUsage) => void,
  observers: RunObservers = sharedRunObservers,
  request?: ReplyRequest,
): Promise<ChatMessage> {
  // Without an observer the call is only the stream: no operation, no raw chunks read for one,
  // and gather's own promise is returned (not awaited in one more async frame that the session
  // would keep alive while it waits for the model).
  if (!observers.observing()) return gather(llm, messages, tools, signal, onDelta, onUsage, undefined, request);
  return observed(llm, messages, tools, signal, onDelta, onUsage, observers, request);
}

async function observed(
  llm: ToolCallLLM,
  messages: ChatMessage[],
  tools: readonly BaseTool[],
  signal: AbortSignal,
  onDelta: (delta: string) => void,
  onUsage: ((usage: TokenUsage) => void) | undefined,
  observers: RunObservers,
  request: ReplyRequest | undefined,
): Promise<ChatMessage> {
  const model = llm.metadata.model;
  const operation = observers.observeOperation({
    kind: "llm",
    name: `chat ${model}`,
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": providerName(llm),
      "gen_ai.request.model": model,
      "gen_ai.request.temperature": llm.metadata.temperature,
    },
  });
  const seen: ResponseFacts = {};
  try {
    const report = (usage: TokenUsage) => ((seen.usage = usage), onUsage?.(usage));
    const message = await gather(llm, messages, tools, signal, onDelta, report, seen, request);
    operation.end(responseAttributes(seen, message));
    return message;
  } catch (error) {
    operation.end(responseAttributes(seen), error);
    throw error;
  }
}

function gather(
  llm: ToolCallLLM,
  messages: ChatMessage[],
  tools: readonly BaseTool[],
  signal: AbortSignal,
  onDelta: (delta: string) => void,
  onUsage: ((usage: TokenUsage) => void) | undefined,
  seen: ResponseFacts | undefined,
  request: ReplyRequest | undefined,
): Promise<ChatMessage> {
  // An LLM that can abort a request (stepflow's OpenAI) gets the signal: an aborted run closes its request.
  const abortable = (llm as { supportsAbortSignal?: boolean }).supportsAbortSignal === true;
  const params = request
    ? withRequest(messages, tools, abortable ? signal : undefined, request)
    : abortable
      ? { messages, tools: tools as BaseTool[], stream: true as const, additionalChatOptions: { signal } }
      : { messages, tools: tools as BaseTool[], stream: true as const };
  // The model's answer is waited for here, where little is alive: a session keeps this
  // closure, not the reading loop's frame, while it waits (most of a call's time).
  let answer: Promise<AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>>>;
  try {
    answer = Promise.resolve(llm.chat(params)); // the same promise when it is one
  } catch (error) {
    return Promise.reject(error as Error); // a throw as the async function it replaces gave it
  }
  return answer.then((stream) => read(stream, signal, onDelta, onUsage, seen));
}

async function read(
  stream: AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>>,
  signal: AbortSignal,
  onDelta: (delta: string) => void,
  onUsage: ((usage: TokenUsage) => void) | undefined,
  seen: ResponseFacts | undefined,
): Promise<ChatMessage> {
  let content = "";
  // By id, last seen wins: adapters that emit growing partial calls still end complete. A plain
  // array searched by id, made at the first call: most replies have none and few have more
  // than a handful, and the session keeps this frame alive while it waits for the model (a Map
  // and the spread of its values made ~300 bytes more per reply).
  let calls: ToolCall[] | undefined;
  // Options besides the tool calls that a provider keeps on its message (Anthropic's signed
  // thinking blocks, which must go back with the turn), last seen wins.
  let kept: Record<string, unknown> | undefined;
  for await (const chunk of stream) {
    if (signal.aborted) break;
    if (seen && chunk.raw) noteRaw(chunk.raw, seen);
    if (chunk.delta) {
      content += chunk.delta;
      onDelta(chunk.delta);
    }
    if (onUsage && chunk.raw) {
      const usage = usageOf(chunk.raw);
      if (usage) onUsage(usage);
    }
    const options = chunk.options as { toolCall?: ToolCall[] } | undefined;
    if (options) {
      const chunkCalls = options.toolCall;
      if (chunkCalls) calls = calls ? setById(calls, chunkCalls) : chunkCalls.slice();
      for (const key in options) if (key !== "toolCall") (kept ??= {})[key] = (options as Record<string, unknown>)[key];
    }
  }
  // Arguments sent as a JSON string become the object they spell, before anything reads them:
  // needsApproval, the approval check, the journal, memory and the provider's next request.
  if (calls) for (let i = 0; i < calls.length; i++) calls[i] = withToolCallInput(calls[i] as ToolCall);
  if (calls && calls.length > 1) uniqueIds(calls);
  if (signal.aborted) throw signal.reason;
  if (kept) return { role: "assistant", content, options: (calls && calls.length > 0 ? { ...kept, toolCall: calls } : kept) as ToolCallLLMMessageOptions };
  return calls && calls.length > 0 ? { role: "assistant", content, options: { toolCall: calls } } : { role: "assistant", content };
}

/** A streaming call's parameters with what `request` asks: LlamaIndex's `responseFormat`, the chat option `toolChoice`. */
function withRequest(messages: ChatMessage[], tools: readonly BaseTool[], signal: AbortSignal | undefined, request: ReplyRequest) {
  const additionalChatOptions: { signal?: AbortSignal; toolChoice?: "required" } = {};
  if (signal) additionalChatOptions.signal = signal;
  if (request.toolRequired) additionalChatOptions.toolChoice = "required";
  return { messages, tools: tools as BaseTool[], stream: true as const, responseFormat: request.format, additionalChatOptions };
}

/**
 * `calls` with each of `chunkCalls` in place of the one with its id, else at the end. Two calls
 * of one chunk with one id are two calls (DeepSeek and GLM give parallel calls one id): the
 * n-th of a chunk replaces the n-th of that id so far.
 */
function setById(calls: ToolCall[], chunkCalls: readonly ToolCall[]): ToolCall[] {
  let replaced: Set<number> | undefined;
  for (const call of chunkCalls) {
    let at = -1;
    for (let i = 0; i < calls.length; i++) {
      if ((calls[i] as ToolCall).id === call.id && !replaced?.has(i)) {
        at = i;
        break;
      }
    }
    if (at < 0) at = calls.push(call) - 1;
    else calls[at] = call;
    if (chunkCalls.length > 1) (replaced ??= new Set()).add(at);
  }
  return calls;
}

/**
 * Gives each call of a reply its own id: a call that repeats an earlier one's id gets it with
 * `_2`, `_3`, … after it. The agent answers each call under its id and keys its record and its
 * idempotency key by it, and providers refuse a history with one id twice
 * ("Duplicate value for 'tool_call_id'"), so two calls of one id would lose one of them.
 */
function uniqueIds(calls: ToolCall[]): void {
  const taken = new Set(calls.map((call) => call.id));
  if (taken.size === calls.length) return;
  const kept = new Set<string>();
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as ToolCall;
    if (!kept.has(call.id)) {
      kept.add(call.id);
      continue;
    }
    let id = call.id;
    for (let n = 2; taken.has(id); n++) id = `${call.id}_${n}`;
    taken.add(id);
    calls[i] = { ...call, id };
  }
}

/** What the server said about its response, read from OpenAI-style raw chunks when they carry it. */
interface ResponseFacts {
  id?: string;
  model?: string;
  finishReasons?: string[];
  usage?: TokenUsage;
}

function noteRaw(raw: object, seen: ResponseFacts): void {
  const part = raw as {
    id?: unknown;
    model?: unknown;
    choices?: { finish_reason?: unknown }[];
  };
  if (typeof part.id === "string") seen.id = part.id;
  if (typeof part.model === "string") seen.model = part.model;
  for (const choice of Array.isArray(part.choices) ? part.choices : []) {
    if (typeof choice?.finish_reason === "string") (seen.finishReasons ??= []).push(choice.finish_reason);
  }
}

function responseAttributes(seen: ResponseFacts, message?: ChatMessage): ObservedAttributes {
  const calls = (message?.options as { toolCall?: unknown[] } | undefined)?.toolCall?.length ?? 0;
  return {
    "gen_ai.response.id": seen.id,
    "gen_ai.response.model": seen.model,
    // A server that does not say gets the reason the reply itself shows.
    "gen_ai.response.finish_reasons": seen.finishReasons ?? (message ? [calls > 0 ? "tool_calls" : "stop"] : undefined),
    "gen_ai.usage.input_tokens": seen.usage?.promptTokens,
    "gen_ai.usage.output_tokens": seen.usage?.completionTokens,
    "gen_ai.usage.cache_read.input_tokens": seen.usage?.cachedTokens,
  };
}

/** `gen_ai.provider.name`: the well-known names for the clients people use, else the LLM's class name. */
function providerName(llm: ToolCallLLM): string {
  const name = llm.constructor.name;
  if (/openai/i.test(name)) return "openai";
  if (/anthropic/i.test(name)) return "anthropic";
  if (/ollama/i.test(name)) return "ollama";
  if (/gemini/i.test(name)) return "gcp.gemini";
  return name;
}
