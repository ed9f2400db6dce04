/**
 * Claude through Anthropic's Messages API, on Anthropic's official SDK (`@anthropic-ai/sdk`,
 * an optional peer dependency loaded on first use).
 *
 * Why not `@llamaindex/anthropic`: its stream drops `message_start` and `message_delta`, so a
 * run's token usage never arrives, and it sends tool calls as JSON strings. This class sends
 * what the Messages API requires (system prompt apart, roles alternating, each turn's
 * `tool_use` blocks answered by `tool_result` blocks at the start of the next user turn), and
 * reports each call's usage from `message_start` and `message_delta`.
 */
import type { JSONObject } from "@llamaindex/core/global";
import type { BaseTool, ChatMessage, MessageContentDetail, PartialToolCall, ToolCall } from "@llamaindex/core/llms";
import type { Anthropic as AnthropicClient, ClientOptions } from "@anthropic-ai/sdk";
import type { ContentBlockParam, MessageCreateParamsStreaming, MessageParam, RawMessageStreamEvent, Usage } from "@anthropic-ai/sdk/resources/messages";
import { toolCallsOf } from "./chat-history.ts";
import { loadProviderPackage } from "./provider-package.ts";
import { ProviderLLM, callArguments, contentText, finishedCall, toolParameters } from "./provider-llm.ts";
import type { ProviderModelOptions, ReplyChunk, ReplyRequest } from "./provider-llm.ts";
import { LLMReplyCutOffError, LLMReplyStoppedError } from "./reply-errors.ts";
import { brokenOff, connectionLost, networkDetail } from "./stream-error.ts";
export { LLMReplyCutOffError, LLMReplyStoppedError } from "./reply-errors.ts";
export { LLMStreamError } from "./stream-error.ts";

/** Options of {@link Anthropic}. */
export interface AnthropicOptions extends Partial<Omit<ProviderModelOptions, "temperature" | "topP">> {
  /** Default: the `ANTHROPIC_API_KEY` environment variable. */
  readonly apiKey?: string;
  /** Default: `ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`. */
  readonly baseURL?: string;
  /** Retries of a failed request (the SDK's own default is 2). */
  readonly maxRetries?: number;
  /** Milliseconds a request may take. */
  readonly timeout?: number;
}

const DEFAULT_MODEL = "claude-sonnet-5-5";
/** The Messages API requires `max_tokens`. */
const DEFAULT_MAX_TOKENS = 4096;

/**
 * Claude as the agent's model.
 * @example
 * import { Anthropic } from "stepflow/llm/anthropic";
 * const llm = new Anthropic({ model: "claude-sonnet-5-5" }); // reads ANTHROPIC_API_KEY
 * const agent = new FunctionCallingAgent({ llm, tools: calculatorTools });
 */
export class Anthropic extends ProviderLLM {
  /** An answer in a schema comes as a call of the tool that takes it: `tool_choice: any` makes every reply call a tool. */
  readonly replyFormat = "tool-choice";
  readonly #options: AnthropicOptions;
  #client: Promise<AnthropicClient> | undefined;

  constructor(options: AnthropicOptions = {}) {
    // No temperature or top_p: the current Messages API has no sampling parameters.
    super({ ...options, model: options.model ?? DEFAULT_MODEL, maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS }, 200_000);
    this.#options = options;
  }

  protected apiKey(): string | undefined {
    return this.#options.apiKey ?? process.env.ANTHROPIC_API_KEY;
  }

  #session(): Promise<AnthropicClient> {
    return (this.#client ??= loadProviderPackage("@anthropic-ai/sdk", "Anthropic").then(({ default: SDK }) => {
      const { apiKey, baseURL, maxRetries, timeout } = this.#options;
      const options: ClientOptions = { maxRetries: maxRetries ?? 2 };
      if (apiKey !== undefined) options.apiKey = apiKey;
      if (baseURL !== undefined) options.baseURL = baseURL;
      if (timeout !== undefined) options.timeout = timeout;
      return new SDK(options);
    }));
  }

  protected async *streamReply(
    messages: ChatMessage[],
    tools: readonly BaseTool[],
    signal: AbortSignal | undefined,
    request: ReplyRequest,
  ): AsyncIterable<ReplyChunk> {
    const client = await this.#session();
    const { system, messages: turns } = anthropicMessages(messages);
    const body: MessageCreateParamsStreaming = { model: this.model, max_tokens: this.maxTokens ?? DEFAULT_MAX_TOKENS, messages: turns, stream: true };
    if (system) body.system = system;
    if (tools.length > 0) {
      body.tools = tools.map((tool) => ({
        name: tool.metadata.name,
        description: tool.metadata.description,
        input_schema: toolParameters(tool) as { type: "object" },
      }));
      if (request.toolRequired) body.tool_choice = { type: "any" };
    }
    const stream = await client.messages.create(body, signal ? { signal } : undefined);
    // Blocks by index: a tool_use block's input arrives as JSON text, complete at its
    // content_block_stop. Some Anthropic-compatible servers give the whole input in
    // content_block_start and no deltas: kept as `start`, as the SDK's own MessageStream keeps it.
    const blocks = new Map<number, { id: string; name: string; json: string; start: string }>();
    const calls: (ToolCall | PartialToolCall)[] = [];
    let usage: Usage | undefined;
    let message: { id: string; model: string } | undefined;
    let stopReason: string | null = null;
    let stopped = false;
    try {
      for await (const event of stream as AsyncIterable<RawMessageStreamEvent>) {
        switch (event.type) {
          case "message_start":
            usage = event.message.usage;
            message = { id: event.message.id, model: event.message.model };
            break;
          case "content_block_start":
            if (event.content_block.type === "tool_use") {
              const { id, name, input } = event.content_block;
              blocks.set(event.index, { id, name, json: "", start: isObject(input) && Object.keys(input).length > 0 ? JSON.stringify(input) : "" });
            }
            break;
          case "content_block_delta":
            if (event.delta.type === "text_delta" && event.delta.text) yield { raw: event, delta: event.delta.text };
            else if (event.delta.type === "input_json_delta") {
              const block = blocks.get(event.index);
              if (block) block.json += event.delta.partial_json;
            }
            break;
          case "content_block_stop": {
            const block = blocks.get(event.index);
            if (block) calls.push(finishedCall(block.id, block.name, block.json || block.start));
            break;
          }
          case "message_delta":
            stopReason = event.delta.stop_reason ?? stopReason;
            // message_delta's counts are cumulative; null means "as message_start said".
            if (usage) {
              const delta = event.usage;
              usage = {
                ...usage,
                output_tokens: delta.output_tokens,
                input_tokens: delta.input_tokens ?? usage.input_tokens,
                cache_creation_input_tokens: delta.cache_creation_input_tokens ?? usage.cache_creation_input_tokens,
                cache_read_input_tokens: delta.cache_read_input_tokens ?? usage.cache_read_input_tokens,
              };
            }
            break;
          case "message_stop":
            stopped = true;
            break;
          default:
            break;
        }
      }
    } catch (error) {
      // The SDK passes fetch's bare "terminated" on; the stream error names the server.
      if (signal?.aborted || !connectionLost(error)) throw error;
      throw brokenOff(client.baseURL, networkDetail(error), error);
    }
    // The API ends every message with a stop reason and message_stop: a stream without either
    // was cut (a proxy's timeout, a server restarting), and its text is not the whole answer.
    if (!stopped && stopReason === null && !signal?.aborted)
      throw brokenOff(client.baseURL, "the stream ended before the message's stop_reason and message_stop");
    // Anthropic's streaming classifiers stop a reply they refuse: what came is not the answer.
    if (stopReason === "refusal")
      throw new LLMReplyStoppedError(
        'stop_reason "refusal"',
        `Claude stopped the reply (stop_reason "refusal"): Anthropic's safety classifiers declined it. Rephrase the request, or leave out what the classifiers object to.`,
      );
    // Input cut off by max_tokens or the context window is not the model's mistake to correct:
    // asked again under the same limit it would be cut off again. Earlier tool_use blocks were
    // complete when the next began.
    const last = [...blocks.values()].at(-1);
    const limit = stopReason === "max_tokens" ? "max-tokens" : stopReason === "model_context_window_exceeded" ? "context-window" : undefined;
    if (limit && last && !isJSONObject(last.json || last.start)) throw new LLMReplyCutOffError(last.name, this.maxTokens, `stop_reason "${stopReason}"`, limit);
    // One last chunk: the message as the SDK's finalMessage() would describe it (its usage read
    // by the agent), with the complete tool calls.
    const raw = { type: "message", id: message?.id, model: message?.model, stop_reason: stopReason, usage };
    yield calls.length > 0 ? { raw, delta: "", options: { toolCall: calls } } : { raw, delta: "" };
  }
}

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether `text` is a whole JSON object (`""` is not: a call cut off right after its name). */
function isJSONObject(text: string): boolean {
  try {
    return isObject(JSON.parse(text));
  } catch {
    return false;
  }
}

/**
 * LlamaIndex messages as the Messages API takes them: system messages as the `system` text,
 * consecutive messages of one role merged into one turn (the API wants roles to alternate, and
 * all results of one turn's parallel calls in one user turn, before any text).
 * @example anthropicMessages([{ role: "user", content: "Hi" }]); // { system: "", messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] }
 */
export function anthropicMessages(messages: readonly ChatMessage[]): { system: string; messages: MessageParam[] } {
  const system: string[] = [];
  const turns: { role: "user" | "assistant"; content: ContentBlockParam[] }[] = [];
  for (const message of messages) {
    if (message.role === "system" || message.role === "developer") {
      system.push(contentText(message.content));
      continue;
    }
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue; // the API refuses empty turns
    const last = turns.at(-1);
    if (last?.role === role) {
      // Tool results go before the turn's text: the API wants them first in the user turn.
      const results = blocks.filter((block) => block.type === "tool_result");
      const others = blocks.filter((block) => block.type !== "tool_result");
      const firstOther = last.content.findIndex((block) => block.type !== "tool_result");
      if (firstOther < 0) last.content.push(...results);
      else last.content.splice(firstOther, 0, ...results);
      last.content.push(...others);
    } else turns.push({ role, content: blocks });
  }
  return { system: system.filter(Boolean).join("\n\n"), messages: turns };
}

function blocksOf(message: ChatMessage): ContentBlockParam[] {
  const options = message.options as { toolResult?: { id: string; result: unknown; isError?: boolean } } | undefined;
  if (message.role !== "assistant" && options?.toolResult) {
    const { id, result, isError } = options.toolResult;
    const content = typeof result === "string" ? result : JSON.stringify(result);
    return [{ type: "tool_result", tool_use_id: id, content, is_error: isError === true }];
  }
  const blocks: ContentBlockParam[] = [];
  if (typeof message.content === "string") {
    if (message.content.trim() !== "") blocks.push({ type: "text", text: message.content });
  } else {
    for (const part of message.content) {
      const block = contentBlock(part);
      if (block) blocks.push(block);
    }
  }
  for (const call of toolCallsOf(message)) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: callArguments(call) as JSONObject });
  return blocks;
}

const DATA_URL = /^data:(image\/(?:jpeg|png|gif|webp));base64,(.*)$/s;

function contentBlock(part: MessageContentDetail): ContentBlockParam | undefined {
  if (part.type === "text") return part.text.trim() === "" ? undefined : { type: "text", text: part.text };
  if (part.type === "image_url") {
    const data = DATA_URL.exec(part.image_url.url);
    if (data) return { type: "image", source: { type: "base64", media_type: data[1] as "image/png", data: data[2] as string } };
    return { type: "image", source: { type: "url", url: part.image_url.url } };
  }
  return undefined; // audio, video and files: not something this API takes in a message
}
