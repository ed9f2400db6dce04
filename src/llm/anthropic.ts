/**
 * Claude through Anthropic's Messages API, on Anthropic's official SDK (`@anthropic-ai/sdk`,
 * an optional peer dependency loaded on first use).
 *
 * Why not `@llamaindex/anthropic`: its stream drops `message_start` and `message_delta`, so a
 * run's token usage never arrives, and it sends tool calls as JSON strings. This class sends
 * what the Messages API requires (system prompt apart, roles alternating, each turn's
 * `tool_use` blocks answered by `tool_result` blocks at the start of the next user turn), and
 * reports each call's usage from `message_start` and `message_delta`.
 *
 * Extended thinking (the `thinking` option): the Messages API checks that an assistant turn
 * which called tools comes back with its `thinking` blocks (signed) and `redacted_thinking`
 * blocks unchanged and in their place, or it refuses the next request with a 400. A reply's
 * blocks are kept, in order, on its message (`options.anthropic.content`, plain JSON, so they
 * live through memory, saved contexts and sessions) and sent back as they came.
 */
import type { JSONObject } from "@llamaindex/core/global";
import type { BaseTool, ChatMessage, MessageContentDetail, PartialToolCall, ToolCall } from "@llamaindex/core/llms";
import type { Anthropic as AnthropicClient, ClientOptions } from "@anthropic-ai/sdk";
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  RedactedThinkingBlockParam,
  ThinkingBlockParam,
  ThinkingConfigParam,
  Usage,
} from "@anthropic-ai/sdk/resources/messages";
import { ConfigurationError } from "../core/internal.ts";
import { toolCallsOf } from "./chat-history.ts";
import { keptReplyBlocks } from "./kept-thinking.ts";
import { loadProviderPackage } from "./provider-package.ts";
import { ProviderLLM, callArguments, contentText, finishedCall, toolParameters } from "./provider-llm.ts";
import type { ProviderModelOptions, ReplyChunk, ReplyRequest } from "./provider-llm.ts";
import type { ReplyFormatSupport } from "./response-format.ts";
import { LLMReplyCutOffError, LLMReplyStoppedError } from "./reply-errors.ts";
import { brokenOff, connectionLost, networkDetail } from "./stream-error.ts";
export { LLMReplyCutOffError, LLMReplyStoppedError } from "./reply-errors.ts";
export { LLMStreamError } from "./stream-error.ts";
export { retryAfter } from "./retry-after.ts";

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
  /**
   * Claude's extended thinking, in the SDK's own shape, sent as the request's `thinking`:
   * `{ type: "enabled", budget_tokens: 2048 }` (at least 1024, and below `maxTokens`, which
   * thinking counts towards), or `{ type: "adaptive" }` on models that decide how much to think.
   * Default: none sent, the model's own default. The thinking is kept out of the answer's text;
   * read it with {@link anthropicThinking}. With thinking on, the API lets no request force a
   * tool call, so `responseFormat` offers the `respond` tool without forcing it. With
   * `type: "enabled"`, a tool-use loop that began without thinking (saved before thinking was
   * turned on) is finished without it, as the API requires; the next question thinks again.
   */
  readonly thinking?: ThinkingConfigParam;
}

/**
 * A block of Claude's reply as its message keeps it, in the order the API gave them: thinking
 * blocks whole (they go back unchanged, signature and all), text blocks whole, a `tool_use`
 * block by its id (its name and input are the message's tool call of that id).
 * @example const kept: AnthropicReplyBlock[] = [{ type: "thinking", thinking: "2+2…", signature: "EqQB…" }, { type: "tool_use", id: "toolu_1" }];
 */
export type AnthropicReplyBlock = ThinkingBlockParam | RedactedThinkingBlockParam | { type: "text"; text: string } | { type: "tool_use"; id: string };

/**
 * What an assistant message from {@link Anthropic} keeps in `options.anthropic` when the reply
 * had thinking in it: its blocks in order, to send back as they came.
 * @example (message.options as { anthropic?: AnthropicMessageOptions }).anthropic?.content;
 */
export interface AnthropicMessageOptions {
  readonly content: readonly AnthropicReplyBlock[];
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
  /**
   * An answer in a schema comes as a call of the tool that takes it: `tool_choice: any` makes
   * every reply call a tool. With thinking on the API refuses `tool_choice: any`: the tool is
   * offered, not forced (`undefined`), and the agent asks again for an answer given in text.
   */
  readonly replyFormat: ReplyFormatSupport | undefined;
  readonly #options: AnthropicOptions;
  readonly #thinking: boolean;
  #client: Promise<AnthropicClient> | undefined;

  constructor(options: AnthropicOptions = {}) {
    // No temperature or top_p: the current Messages API has no sampling parameters.
    const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    super({ ...options, model: options.model ?? DEFAULT_MODEL, maxTokens }, 200_000);
    const { thinking } = options;
    // Checked here, not by a 400 on the first request: maxTokens' default is ours, not the API's.
    if (thinking?.type === "enabled" && !(thinking.budget_tokens < maxTokens))
      throw new ConfigurationError(
        `Anthropic: thinking.budget_tokens (${thinking.budget_tokens}) must be less than maxTokens (${maxTokens}${options.maxTokens === undefined ? ", the default" : ""}): thinking counts towards the reply's tokens. Raise maxTokens above the budget, e.g. maxTokens: ${thinking.budget_tokens + DEFAULT_MAX_TOKENS}.`,
        "thinking",
        thinking,
      );
    this.#options = options;
    this.#thinking = thinking !== undefined && thinking.type !== "disabled";
    this.replyFormat = this.#thinking ? undefined : "tool-choice";
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
    const { thinking } = this.#options;
    if (thinking && !(thinking.type === "enabled" && turnStartedWithoutThinking(turns))) body.thinking = thinking;
    if (tools.length > 0) {
      body.tools = tools.map((tool) => ({
        name: tool.metadata.name,
        description: tool.metadata.description,
        input_schema: toolParameters(tool) as { type: "object" },
      }));
      if (request.toolRequired) {
        if (this.#thinking)
          throw new ConfigurationError(
            `Anthropic: a reply cannot be made to call a tool (toolChoice "required", sent as tool_choice "any") while thinking is on: the Messages API allows only tool_choice "auto" or "none" with thinking. Leave toolChoice unset, or turn thinking off for this model.`,
            "toolChoice",
            "required",
          );
        body.tool_choice = { type: "any" };
      }
    }
    const stream = await client.messages.create(body, signal ? { signal } : undefined);
    // Blocks by index: a tool_use block's input arrives as JSON text, complete at its
    // content_block_stop. Some Anthropic-compatible servers give the whole input in
    // content_block_start and no deltas: kept as `start`, as the SDK's own MessageStream keeps it.
    const blocks = new Map<number, { id: string; name: string; json: string; start: string }>();
    // Every block of the reply by index, as the message keeps it: with thinking in the reply
    // the API wants the turn back as it came (thinking blocks before the tool_use blocks).
    const kept = new Map<number, AnthropicReplyBlock>();
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
          case "content_block_start": {
            const block = event.content_block;
            if (block.type === "tool_use") {
              const { id, name, input } = block;
              blocks.set(event.index, { id, name, json: "", start: isObject(input) && Object.keys(input).length > 0 ? JSON.stringify(input) : "" });
              kept.set(event.index, { type: "tool_use", id });
            } else if (block.type === "thinking") kept.set(event.index, { type: "thinking", thinking: block.thinking, signature: block.signature });
            else if (block.type === "redacted_thinking") kept.set(event.index, { type: "redacted_thinking", data: block.data });
            else if (block.type === "text") kept.set(event.index, { type: "text", text: block.text });
            break;
          }
          case "content_block_delta": {
            const delta = event.delta;
            const block = kept.get(event.index);
            if (delta.type === "text_delta") {
              if (block?.type === "text") block.text += delta.text;
              if (delta.text) yield { raw: event, delta: delta.text };
            } else if (delta.type === "input_json_delta") {
              const call = blocks.get(event.index);
              if (call) call.json += delta.partial_json;
            } else if (block?.type === "thinking") {
              // Thinking is not the answer: kept on the message, never in its text.
              if (delta.type === "thinking_delta") block.thinking += delta.thinking;
              else if (delta.type === "signature_delta") block.signature += delta.signature;
            }
            break;
          }
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
    const options: { toolCall?: (ToolCall | PartialToolCall)[]; anthropic?: AnthropicMessageOptions } = {};
    if (calls.length > 0) options.toolCall = calls;
    // Only a reply with thinking keeps its blocks: any other is its text and calls, in that order.
    const content = [...kept.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
    if (content.some(isThinking)) options.anthropic = { content };
    yield Object.keys(options).length > 0 ? { raw, delta: "", options: options as ReplyChunk["options"] } : { raw, delta: "" };
  }
}

const isThinking = (block: { type: string }): block is ThinkingBlockParam | RedactedThinkingBlockParam =>
  block.type === "thinking" || block.type === "redacted_thinking";

/**
 * Whether `turns` continue an assistant turn that began without thinking: a tool-use loop (the
 * assistant messages after the last user message that is more than tool results) whose first
 * message does not start with a thinking block, as one saved before thinking was turned on.
 *
 * With manual thinking (`type: "enabled"`) the Messages API refuses such a request ("Expected
 * `thinking` or `redacted_thinking`, but found `tool_use`"): a tool-use loop is one assistant
 * turn, with one thinking configuration, and a thinking block cannot be made up (it is signed).
 * The turn is finished as it began, without thinking, and the next question thinks again. Only
 * the loop's first message counts: without interleaved thinking Claude thinks once, at the
 * start of the turn, and its replies to tool results have no thinking. Adaptive thinking is
 * sent as it is: the model may answer any request without thinking, so the API cannot require it.
 */
function turnStartedWithoutThinking(turns: readonly MessageParam[]): boolean {
  let first: MessageParam | undefined;
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i] as MessageParam;
    if (turn.role === "assistant") first = turn;
    else if (typeof turn.content === "string" || turn.content.some((block) => block.type !== "tool_result")) break;
  }
  if (!first) return false;
  const opening = typeof first.content === "string" ? { type: "text" } : first.content[0];
  return opening === undefined || !isThinking(opening);
}

/**
 * The text of Claude's thinking in a reply from {@link Anthropic} (its thinking blocks joined
 * by blank lines), or `""` when it did not think or the thinking was redacted or omitted.
 * @example
 * const { response } = await agent.run({ input: "What is (2123 + 2321) * 312?" });
 * console.log(anthropicThinking(response));
 */
export function anthropicThinking(message: ChatMessage): string {
  return keptBlocks(message)
    .flatMap((block) => (block.type === "thinking" && block.thinking !== "" ? [block.thinking] : []))
    .join("\n\n");
}

/** The reply's blocks `message` keeps (`options.anthropic.content`), or none. */
const keptBlocks = (message: ChatMessage): readonly AnthropicReplyBlock[] => keptReplyBlocks(message) as readonly AnthropicReplyBlock[];

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
  const kept = keptBlocks(message);
  if (kept.length > 0) return replyBlocks(message, kept);
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

/**
 * An assistant turn with thinking, as Claude gave it: its blocks in their order, thinking
 * blocks unchanged, each `tool_use` block from the message's call of that id (the agent may
 * have dropped a call, as it drops the `respond` call answered with others). Text that is no
 * longer the blocks' text (changed since) goes after the thinking, as one block.
 */
function replyBlocks(message: ChatMessage, kept: readonly AnthropicReplyBlock[]): ContentBlockParam[] {
  const calls = new Map(toolCallsOf(message).map((call) => [call.id, call]));
  const toolUse = (call: ToolCall): ContentBlockParam => ({ type: "tool_use", id: call.id, name: call.name, input: callArguments(call) as JSONObject });
  const text = contentText(message.content);
  const keptText = kept.map((block) => (block.type === "text" ? block.text : "")).join("");
  const blocks: ContentBlockParam[] = [];
  const textSent = text === keptText;
  for (const block of kept) {
    if (block.type === "tool_use") {
      const call = calls.get(block.id);
      if (call) blocks.push(toolUse(call));
      calls.delete(block.id);
      continue;
    }
    if (block.type === "text") {
      if (textSent && block.text.trim() !== "") blocks.push({ type: "text", text: block.text });
      continue;
    }
    blocks.push(
      block.type === "thinking" ? { type: "thinking", thinking: block.thinking, signature: block.signature } : { type: "redacted_thinking", data: block.data },
    );
  }
  if (!textSent && text.trim() !== "") {
    const at = blocks.findIndex((block) => !isThinking(block));
    blocks.splice(at < 0 ? blocks.length : at, 0, { type: "text", text });
  }
  for (const call of calls.values()) blocks.push(toolUse(call)); // calls the blocks do not name: after them
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
