/**
 * What stepflow's model classes on the providers' own SDKs (Anthropic, Gemini, Ollama) share:
 * LlamaIndex's `chat` in its streaming and non-streaming forms on top of one streaming method,
 * the run's abort signal passed to the request, and the API key kept out of every error.
 */
import type { JSONObject } from "@llamaindex/core/global";
import { ToolCallLLM } from "@llamaindex/core/llms";
import type {
  BaseTool,
  ChatMessage,
  ChatResponse,
  ChatResponseChunk,
  LLMChatParamsNonStreaming,
  LLMChatParamsStreaming,
  LLMMetadata,
  MessageContent,
  PartialToolCall,
  ToolCall,
  ToolCallLLMMessageOptions,
} from "@llamaindex/core/llms";
import { redactError, secretRedactor } from "../tools/secrets.ts";
import { toolCallInput } from "../tools/tool-calls.ts";
import { replyFormatOf } from "./response-format.ts";
import type { ReplyFormat, ReplyFormatSupport } from "./response-format.ts";

/** A chunk of a streamed reply, as LlamaIndex's adapters yield them. */
export type ReplyChunk = ChatResponseChunk<ToolCallLLMMessageOptions>;

/** The chat options every provider model takes: the run's signal, which aborts the request, and whether the reply must call a tool. */
export interface ProviderChatOptions {
  readonly signal?: AbortSignal;
  /** `"required"`: the reply must call one of the tools (Anthropic's `tool_choice: any`). */
  readonly toolChoice?: "required";
}

/**
 * What a call asks of the reply besides answering the messages: an answer in a JSON schema
 * (`format`, given in LlamaIndex's `responseFormat`), or a call of one of the tools (`toolRequired`).
 * @example const request: ReplyRequest = { format: replyFormat("answer", schema) };
 */
export interface ReplyRequest {
  readonly format?: ReplyFormat | undefined;
  readonly toolRequired?: boolean;
}

/** Options every provider model takes. */
export interface ProviderModelOptions {
  /** The provider's model name, e.g. `claude-sonnet-5-5`, `gemini-2.5-flash`, `llama3.1:8b`. */
  readonly model: string;
  readonly temperature?: number;
  readonly topP?: number;
  /** Most tokens of one reply. */
  readonly maxTokens?: number;
  /** Tokens the model accepts (memory is trimmed to fit). */
  readonly contextWindow?: number;
}

/**
 * A `ToolCallLLM` whose subclass only streams: `chat({ stream: false })` gathers the stream.
 * @example
 * class Echo extends ProviderLLM {
 *   readonly replyFormat = "tool-choice";
 *   protected async *streamReply(messages: ChatMessage[]) { yield { raw: null, delta: String(messages.at(-1)?.content) }; }
 * }
 */
export abstract class ProviderLLM extends ToolCallLLM<ProviderChatOptions> {
  readonly supportToolCall = true;
  /** The agent passes its run's signal in `additionalChatOptions.signal`: a cancelled run closes its request. */
  readonly supportsAbortSignal = true;
  readonly model: string;
  readonly temperature: number | undefined;
  readonly topP: number | undefined;
  readonly maxTokens: number | undefined;
  readonly #contextWindow: number;

  constructor(options: ProviderModelOptions, defaultContextWindow: number) {
    super();
    this.model = options.model;
    this.temperature = options.temperature;
    this.topP = options.topP;
    this.maxTokens = options.maxTokens;
    this.#contextWindow = options.contextWindow ?? defaultContextWindow;
  }

  get metadata(): LLMMetadata {
    return {
      model: this.model,
      temperature: this.temperature ?? 1,
      topP: this.topP ?? 1,
      maxTokens: this.maxTokens,
      contextWindow: this.#contextWindow,
      tokenizer: undefined,
      structuredOutput: false,
    };
  }

  /**
   * How the model answers in a JSON schema (response-format.ts): natively, or by a call of a
   * tool it is made to call; `undefined`, neither (the agent offers it the tool without forcing it).
   */
  abstract readonly replyFormat: ReplyFormatSupport | undefined;

  /** The reply to `messages`: text deltas as they come, then the complete tool calls on one last chunk. */
  protected abstract streamReply(
    messages: ChatMessage[],
    tools: readonly BaseTool[],
    signal: AbortSignal | undefined,
    request: ReplyRequest,
  ): AsyncIterable<ReplyChunk>;

  /** The API key, to strip from errors; `undefined` when there is none. */
  protected abstract apiKey(): string | undefined;

  chat(params: LLMChatParamsStreaming<ProviderChatOptions, ToolCallLLMMessageOptions>): Promise<AsyncIterable<ReplyChunk>>;
  chat(params: LLMChatParamsNonStreaming<ProviderChatOptions, ToolCallLLMMessageOptions>): Promise<ChatResponse<ToolCallLLMMessageOptions>>;
  async chat(
    params: LLMChatParamsStreaming<ProviderChatOptions, ToolCallLLMMessageOptions> | LLMChatParamsNonStreaming<ProviderChatOptions, ToolCallLLMMessageOptions>,
  ): Promise<AsyncIterable<ReplyChunk> | ChatResponse<ToolCallLLMMessageOptions>> {
    const options = params.additionalChatOptions;
    const request: ReplyRequest = { format: replyFormatOf(params.responseFormat), toolRequired: options?.toolChoice === "required" };
    const stream = this.#guarded(params.messages, params.tools ?? [], options?.signal, request);
    if (params.stream) return stream;
    let content = "";
    let toolCall: (ToolCall | PartialToolCall)[] = [];
    let extra: Record<string, unknown> | undefined;
    let raw: object | null = null;
    for await (const chunk of stream) {
      content += chunk.delta;
      raw = chunk.raw ?? raw;
      const { toolCall: calls, ...others } = (chunk.options ?? {}) as { toolCall?: (ToolCall | PartialToolCall)[] };
      if (calls) toolCall = calls;
      if (Object.keys(others).length > 0) extra = { ...extra, ...others };
    }
    // What else the provider keeps on its message (Anthropic's signed thinking blocks) stays on it.
    const kept = toolCall.length > 0 ? { ...extra, toolCall } : extra;
    return { raw, message: kept ? { role: "assistant", content, options: kept as ToolCallLLMMessageOptions } : { role: "assistant", content } };
  }

  async *#guarded(messages: ChatMessage[], tools: readonly BaseTool[], signal: AbortSignal | undefined, request: ReplyRequest): AsyncIterable<ReplyChunk> {
    try {
      yield* this.streamReply(messages, tools, signal, request);
    } catch (error) {
      // An aborted request ends the stream quietly, as the OpenAI SDK's does: the caller checks its signal.
      if (signal?.aborted) return;
      throw redactError(error, secretRedactor([this.apiKey()]));
    }
  }
}

/**
 * The text of a message's content: its text parts joined (images and other media are not text).
 * @example contentText([{ type: "text", text: "Hi" }]); // "Hi"
 */
export function contentText(content: MessageContent): string {
  if (typeof content === "string") return content;
  let text = "";
  for (const part of content) if (part.type === "text") text += part.text;
  return text;
}

/**
 * A tool call's arguments as the object providers' APIs require (a JSON string parsed; `{}` for
 * anything that is not an object, which the agent already reported to the model as an error).
 * @example callArguments({ id: "c1", name: "add", input: '{"x":1}' }); // { x: 1 }
 */
export function callArguments(call: ToolCall | PartialToolCall): JSONObject {
  const input = toolCallInput(call.input);
  return typeof input === "object" && input !== null && !Array.isArray(input) ? (input as JSONObject) : {};
}

/** A tool's JSON schema for its parameters (an empty object schema when it has none). */
export function toolParameters(tool: BaseTool): Record<string, unknown> {
  return (tool.metadata.parameters as Record<string, unknown> | undefined) ?? { type: "object", properties: {} };
}

/**
 * A complete tool call from streamed JSON text: the object it spells, `{}` for none, else the text
 * as it is (LlamaIndex's `PartialToolCall`), for the agent to report to the model.
 * @example finishedCall("toolu_1", "add", '{"x":1}'); // { id: "toolu_1", name: "add", input: { x: 1 } }
 */
export function finishedCall(id: string, name: string, json: string): ToolCall | PartialToolCall {
  if (json.trim() === "") return { id, name, input: {} };
  const input = toolCallInput(json);
  return typeof input === "string" ? { id, name, input } : { id, name, input: input as JSONObject };
}
