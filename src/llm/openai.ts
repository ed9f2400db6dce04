/**
 * `@llamaindex/openai`'s `OpenAI`, with the two things stepflow's agent needs fixed:
 *
 * - Tool calls stream correctly from every OpenAI-compatible server. Upstream tracks one
 *   "current" call and `JSON.parse`s its arguments when the id changes; with the servers
 *   people use it throws a SyntaxError when the id is repeated on every chunk (vLLM),
 *   throws on `""` arguments (tools without parameters), and drops the second of two calls
 *   sent in one delta (Ollama). `ToolCallAccumulator` gathers calls by `index` and id as the
 *   OpenAI SDK's own docs do, and the complete calls are emitted once, on the last chunk.
 * - Unknown model names (every Ollama/vLLM model) get a 128k context window instead of
 *   upstream's 1,024-token fallback, which trims the agent's memory to the last message or two.
 *
 * - A streaming call costs less than the OpenAI SDK's own stream: upstream's `chat` wraps the
 *   SDK's stream (itself three async generators over a web-stream iterator) in two more, takes
 *   `AsyncLocalStorage` snapshots for its callbacks,
 *   and runs each call inside `AsyncLocalStorage.run()`, which switches on Node's promise hooks
 *   for the whole process. Here the SDK sends the request and one generator reads the response
 *   body (openai-stream.ts) and dispatches the same LlamaIndex `llm-start`, `llm-stream`
 *   and `llm-end` events, with `reason: null`.
 *
 * Everything else (message and tool conversion, sessions, non-streaming and structured-output
 * calls) is upstream's.
 */
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { Settings } from "@llamaindex/core/global";
import type { JSONObject } from "@llamaindex/core/global";
import type {
  ChatMessage,
  ChatResponse,
  ChatResponseChunk,
  LLMChatParamsNonStreaming,
  LLMChatParamsStreaming,
  LLMMetadata,
  PartialToolCall,
  ToolCall,
  ToolCallLLMMessageOptions,
} from "@llamaindex/core/llms";
import { OpenAI as LlamaIndexOpenAI } from "@llamaindex/openai";
import { ConfigurationError, StepflowError, isRecord } from "../core/internal.ts";
import { COPY_AGAIN, headerValueProblem } from "./header-value.ts";
import { redactError, secretRedactor } from "../tools/secrets.ts";
import { openChatStream } from "./openai-stream.ts";
import { LLMReplyCutOffError, LLMReplyStoppedError } from "./reply-errors.ts";
import { replyFormatOf, strictSchema } from "./response-format.ts";
import type { ReplyFormat } from "./response-format.ts";
export { LLMStreamError } from "./openai-stream.ts";
export { LLMReplyCutOffError, LLMReplyStoppedError } from "./reply-errors.ts";
export { retryAfter } from "./retry-after.ts";
import type { ToolCallDelta } from "./openai-stream.ts";

export type { ToolCallDelta } from "./openai-stream.ts";

type OpenAIClient = Awaited<LlamaIndexOpenAI["session"]>;
type CreateParams = Parameters<OpenAIClient["chat"]["completions"]["create"]>[0];
type OpenAIAdditionalChatOptions = NonNullable<LlamaIndexOpenAI["additionalChatOptions"]>;
/** The constructor options of {@link OpenAI}: upstream's, plus `contextWindow`. */
export type OpenAIOptions = NonNullable<ConstructorParameters<typeof LlamaIndexOpenAI>[0]> & {
  /** Tokens the model accepts; default: upstream's table for OpenAI models, else 128,000. */
  readonly contextWindow?: number;
};

const UNKNOWN_MODEL_WINDOW = 1024; // what upstream reports for a model missing from its table
const DEFAULT_CONTEXT_WINDOW = 128_000;

/**
 * Gathers streamed tool-call fragments into complete calls, whatever the server's style.
 * @example
 * const calls = new ToolCallAccumulator();
 * calls.add([{ index: 0, id: "call_1", function: { name: "add", arguments: '{"x":1,' } }]);
 * calls.add([{ index: 0, function: { arguments: '"y":2}' } }]);
 * calls.finish(); // [{ id: "call_1", name: "add", input: { x: 1, y: 2 } }]
 */
export class ToolCallAccumulator {
  readonly #calls: StreamedCall[] = [];
  readonly #byIndex = new Map<number, StreamedCall>();
  readonly #byId = new Map<string, StreamedCall>();

  add(deltas: readonly ToolCallDelta[]): void {
    for (const delta of deltas) {
      // The id names the call when present (some servers repeat it on every chunk, some reuse
      // index 0 for every call); otherwise the index does; a server sending neither continues the last call.
      let call = delta.id ? this.#byId.get(delta.id) : undefined;
      if (call && delta.index !== undefined && call.index !== undefined && call.index !== delta.index) {
        // One id at another index is another call (DeepSeek and GLM give parallel calls one id):
        // the call begun at this index with this id goes on, else a new one begins.
        const begun = this.#byIndex.get(delta.index);
        call = begun?.id === delta.id ? begun : undefined;
      }
      if (!call && !delta.id) call = delta.index !== undefined ? this.#byIndex.get(delta.index) : this.#calls.at(-1);
      if (!call) {
        call = { id: delta.id ?? "", name: "", args: "", index: delta.index };
        this.#calls.push(call);
        if (delta.id) this.#byId.set(delta.id, call);
      }
      if (delta.index !== undefined) this.#byIndex.set(delta.index, call);
      const name = delta.function?.name;
      if (name && !call.name) call.name = name;
      call.args += delta.function?.arguments ?? "";
    }
  }

  /**
   * The complete calls in the order they began. Empty arguments become `{}`; arguments that
   * are not a JSON object stay a string, so the tool runner can tell the model what was wrong.
   */
  finish(): (ToolCall | PartialToolCall)[] {
    return this.#calls.map((call, i) => {
      const id = call.id || `call_${i}`;
      if (call.args.trim() === "") return { id, name: call.name, input: {} };
      const input = jsonObject(call.args);
      return input ? { id, name: call.name, input } : { id, name: call.name, input: call.args };
    });
  }

  /**
   * The name of the last call if its arguments are not yet a JSON object (`""` included): what
   * a reply cut off by the token limit leaves. Earlier calls were complete when the next began.
   */
  unfinished(): string | undefined {
    const last = this.#calls.at(-1);
    return last && jsonObject(last.args) === undefined ? last.name : undefined;
  }
}

/** A call as its fragments arrive: `index` is the one it began at, if the server gave one. */
interface StreamedCall {
  id: string;
  name: string;
  args: string;
  readonly index: number | undefined;
}

function jsonObject(text: string): JSONObject | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) return parsed as JSONObject;
  } catch {
    // not JSON
  }
  return undefined;
}

/** A key fetch cannot send fails when the client is made, not at its first call, and without the key in the message. */
function checkApiKey(key: string | undefined): void {
  const problem = key === undefined ? undefined : headerValueProblem(key);
  if (problem)
    throw new ConfigurationError(
      `OpenAI: apiKey (or OPENAI_API_KEY) has a character that cannot be sent in an HTTP header (${problem}). ${COPY_AGAIN}`,
      "apiKey",
      problem, // where the bad character is: the key itself stays out of the error
    );
}

/**
 * A drop-in replacement for `@llamaindex/openai`'s `OpenAI` (same options) for OpenAI and any
 * OpenAI-compatible server: Ollama, vLLM, llama.cpp server, LM Studio.
 * @example
 * const llm = new OpenAI({ model: "llama3.1:8b", baseURL: "http://127.0.0.1:11434/v1", apiKey: "ollama" });
 * const agent = new FunctionCallingAgent({ llm, tools: calculatorTools });
 */
export class OpenAI extends LlamaIndexOpenAI {
  /**
   * Streaming calls stop when `additionalChatOptions.signal` aborts (it is taken out of the
   * request body and given to the OpenAI SDK), so a cancelled or timed-out run does not leave
   * a request open. The agent passes the run's signal to LLMs that say they support this; one
   * signal may serve any number of requests.
   */
  readonly supportsAbortSignal = true;
  /** An answer in a JSON schema (response-format.ts) is asked for with `response_format: { type: "json_schema" }`, streamed. */
  readonly replyFormat = "json-schema";
  readonly #contextWindow: number | undefined;
  /** The SDK client once `session` has resolved: saves an await per call. */
  #client: OpenAIClient | undefined;

  constructor(options: OpenAIOptions = {}) {
    const { contextWindow, ...upstream } = options;
    // Upstream retries 10 times with backoff, so a wrong URL hangs for minutes; the SDK's own default is 2.
    super({ maxRetries: 2, ...upstream });
    checkApiKey(this.apiKey ?? process.env.OPENAI_API_KEY);
    this.#contextWindow = contextWindow;
    // Upstream's @wrapEventCaller gives each instance its own chat/streamChat that runs every call
    // inside AsyncLocalStorage.run(). The first such run switches on Node's promise hooks for the
    // whole process, which slows every await anywhere from then on (docs/benchmarks.md). Calls
    // go to the prototype methods instead; the cost is `reason: null` on the llm-* events.
    for (const method of ["chat", "streamChat"]) if (Object.hasOwn(this, method)) Reflect.deleteProperty(this, method);
  }

  /**
   * A server may echo the key in its error body (a 401's "Incorrect API key provided: sk-…"),
   * which the SDK copies into the error's message and stack: hidden before anyone can print it.
   */
  #withoutKey(error: unknown): unknown {
    return redactError(error, secretRedactor([this.apiKey, this.#client?.apiKey ?? undefined]));
  }

  override get metadata(): LLMMetadata {
    const metadata = super.metadata;
    const known = metadata.contextWindow !== UNKNOWN_MODEL_WINDOW;
    return { ...metadata, contextWindow: this.#contextWindow ?? (known ? metadata.contextWindow : DEFAULT_CONTEXT_WINDOW) };
  }

  override chat(
    params: LLMChatParamsStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions>,
  ): Promise<AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>>>;
  override chat(params: LLMChatParamsNonStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions>): Promise<ChatResponse<ToolCallLLMMessageOptions>>;
  override async chat(
    params:
      | LLMChatParamsStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions>
      | LLMChatParamsNonStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions>,
  ): Promise<AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>> | ChatResponse<ToolCallLLMMessageOptions>> {
    const format = replyFormatOf(params.responseFormat);
    if (!params.stream || (params.responseFormat && !format)) {
      return super.chat(params as LLMChatParamsNonStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions>).catch((error: unknown) => {
        throw this.#withoutKey(error);
      });
    }
    // The request upstream's chat() builds for a streaming call without structured output; an
    // abort signal among the chat options goes to the SDK's request options instead.
    const { signal, toolChoice, chatOptions } = splitChatOptions(this.additionalChatOptions, params.additionalChatOptions);
    const body: Record<string, unknown> = {
      model: this.model,
      temperature: /^o[34]/.test(this.model) ? undefined : this.temperature,
      reasoning_effort: this.reasoningEffort,
      max_tokens: this.maxTokens,
      tools: params.tools?.length ? params.tools.map((tool) => LlamaIndexOpenAI.toTool(tool)) : undefined,
      messages: LlamaIndexOpenAI.toOpenAIMessage(params.messages),
      top_p: this.topP,
      // The last chunk then carries the call's token usage (OpenAI, vLLM, Ollama, llama.cpp
      // send it); `additionalChatOptions: { stream_options: … }` replaces this.
      stream_options: { include_usage: true },
      response_format: format ? jsonSchemaFormat(format) : undefined,
      tool_choice: toolChoice && params.tools?.length ? toolChoice : undefined,
    };
    // Chat options come after the fields they may replace, and `stream` last, as upstream sends them.
    const request = chatOptions ? { ...body, ...chatOptions, stream: true } : body;
    if (!chatOptions) body.stream = true;
    return this.#stream(request as unknown as CreateParams, signal, params.messages);
  }

  protected override streamChat(params: CreateParams): AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>> {
    const { signal, ...body } = params as CreateParams & { signal?: AbortSignal };
    return this.#stream({ ...body, stream: true }, signal, undefined);
  }

  /**
   * One generator between the HTTP response and the caller: every layer of async generator adds
   * promises to each chunk, and a turn of the agent has few chunks but many turns. The body is
   * read by openai-stream.ts, not by the SDK's stream (it says why). With `messages`, dispatches
   * LlamaIndex's `llm-start`, `llm-stream` and `llm-end` events as upstream's chat() does.
   */
  async *#stream(
    body: CreateParams,
    signal: AbortSignal | undefined,
    messages: ChatMessage[] | undefined,
  ): AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>> {
    const callbacks = messages ? Settings.callbackManager : undefined;
    const id = randomUUID();
    if (messages) callbacks?.dispatchEvent("llm-start", { id, messages });
    const client = this.#client ?? (this.#client = await this.session);
    if (signal) countRequest(signal);
    const stream = await openChatStream(client, body, signal).catch((error: unknown) => {
      throw this.#withoutKey(error);
    });
    const calls = new ToolCallAccumulator();
    const raw: ChatResponseChunk<ToolCallLLMMessageOptions>[] = [];
    let content = "";
    let finishReason: string | null | undefined;
    const end = (options: ToolCallLLMMessageOptions) =>
      callbacks?.dispatchEvent("llm-end", { id, response: { raw, message: { role: "assistant", content, options } } });
    try {
      for (let parts = await stream.next(); parts; parts = await stream.next()) {
        for (const part of parts) {
          const choice = part.choices?.[0];
          finishReason = choice?.finish_reason ?? finishReason;
          const delta = choice?.delta;
          if (delta?.tool_calls) calls.add(delta.tool_calls);
          const chunk = delta?.content ? { raw: part, delta: delta.content } : part.usage ? { raw: part, delta: "" } : undefined;
          if (!chunk) continue;
          content += chunk.delta;
          callbacks?.dispatchEvent("llm-stream", { id, chunk });
          raw.push(chunk);
          yield chunk;
        }
      }
    } catch (error) {
      // An aborted request ends the stream quietly, as the SDK's does (the caller checks its
      // signal), with what came before the abort and without its unfinished tool calls.
      if (!signal?.aborted) throw this.#withoutKey(error);
      end({});
      return;
    } finally {
      stream.close();
    }
    // Arguments cut off by the token limit are not the model's mistake to correct: asked again
    // under the same limit it would be cut off again, until maxIterations.
    // A content filter (OpenAI's, Azure's) stops the reply where it objects: what came is not the answer.
    if (finishReason === "content_filter")
      throw new LLMReplyStoppedError(
        'finish_reason "content_filter"',
        `The server at ${client.baseURL} stopped the reply (finish_reason "content_filter"): its content filter objected to it. Rephrase the request, or leave out what the filter objects to.`,
      );
    const cutOff = finishReason === "length" ? calls.unfinished() : undefined;
    if (cutOff !== undefined) throw new LLMReplyCutOffError(cutOff, this.maxTokens);
    const toolCall = calls.finish();
    const options: ToolCallLLMMessageOptions = toolCall.length > 0 ? { toolCall } : {};
    if (toolCall.length > 0) {
      const chunk = { raw: null, delta: "", options };
      callbacks?.dispatchEvent("llm-stream", { id, chunk });
      raw.push(chunk);
      yield chunk;
    }
    end(options);
  }
}

/** OpenAI's `response_format` for `format`: strict (the answer always matches) when strict mode takes the schema. */
function jsonSchemaFormat(format: ReplyFormat): Record<string, unknown> {
  return { type: "json_schema", json_schema: { name: format.name, schema: format.schema, strict: strictSchema(format.schema) } };
}

/** What a streaming call's chat options hold: its signal, `toolChoice`, and the rest (none, mostly), for the request body. */
interface ChatOptions {
  readonly signal: AbortSignal | undefined;
  readonly toolChoice: "required" | undefined;
  readonly chatOptions: Record<string, unknown> | undefined;
}

/**
 * The LLM's `additionalChatOptions` and the call's, the call's winning, split: what
 * `const { signal, toolChoice, ...rest } = { ...own, ...call }` gives, without the object rest
 * (a runtime call in V8) and the two copies when the call's options are only its signal.
 */
function splitChatOptions(own: object | undefined, call: object | undefined): ChatOptions {
  const merged = (own === undefined ? call : { ...own, ...call }) as { signal?: AbortSignal; toolChoice?: "required" } | undefined;
  if (merged === undefined) return { signal: undefined, toolChoice: undefined, chatOptions: undefined };
  let rest = false;
  for (const key in merged) if (Object.hasOwn(merged, key) && key !== "signal" && key !== "toolChoice") rest = true;
  if (!rest) return { signal: merged.signal, toolChoice: merged.toolChoice, chatOptions: undefined };
  const { signal, toolChoice, ...chatOptions } = merged;
  return { signal, toolChoice, chatOptions };
}

// The OpenAI SDK adds an abort listener to the signal of every request and never removes it, so
// a signal shared by many requests (a run's, for all its LLM calls) would trip Node's leak
// warning at 10 listeners. Raising the limit costs per signal, so only signals that need it pay.
const requestsBySignal = new WeakMap<AbortSignal, number>();
const REQUESTS_BEFORE_RAISING_LIMIT = 8; // below Node's 10, leaving room for other listeners

function countRequest(signal: AbortSignal): void {
  const requests = (requestsBySignal.get(signal) ?? 0) + 1;
  requestsBySignal.set(signal, requests);
  if (requests === REQUESTS_BEFORE_RAISING_LIMIT) setMaxListeners(0, signal);
}

/** Where a request went, to name it in an error message. */
export interface OpenAITarget {
  readonly baseURL: string;
  readonly model: string;
}

/**
 * One line for a user saying what went wrong talking to an OpenAI-compatible server and how
 * to fix it; `undefined` for errors that are not about the server, and for stepflow's own errors
 * (their message already says it). Never includes the API key.
 * @example
 * describeOpenAIError(error, { baseURL: "http://127.0.0.1:11434/v1", model: "llama3.1" });
 * // "Cannot reach the OpenAI-compatible server at http://127.0.0.1:11434/v1: ECONNREFUSED. Is it running? Check OPENAI_BASE_URL."
 */
export function describeOpenAIError(error: unknown, target: OpenAITarget): string | undefined {
  // stepflow's own errors already say what went wrong, and a cause they wrap (the ECONNRESET
  // under "broke off its reply") must not turn them into "Cannot reach the server".
  if (!(error instanceof Error) || error instanceof StepflowError) return undefined;
  const { baseURL, model } = target;
  const status = (error as { status?: unknown }).status;
  if (error.name === "APIConnectionTimeoutError" || error.constructor.name === "APIConnectionTimeoutError") {
    return `The server at ${baseURL} did not answer in time. Is it overloaded or still loading ${model}? Try again, or check OPENAI_BASE_URL.`;
  }
  if (typeof status !== "number") {
    const code = connectionErrorCode(error);
    if (code === undefined && error.constructor.name !== "APIConnectionError") return undefined;
    return `Cannot reach the OpenAI-compatible server at ${baseURL}${code ? `: ${code}` : ""}. Is it running? Check OPENAI_BASE_URL.`;
  }
  if (status === 401 || status === 403) return `The server at ${baseURL} rejected the API key (${status}). Check OPENAI_API_KEY.`;
  if (status === 404) {
    return `The server at ${baseURL} answered 404 for model "${model}": check --model, and that OPENAI_BASE_URL is the API root (e.g. http://127.0.0.1:11434/v1).`;
  }
  const message = serverMessage(error);
  if (status === 429) return `The server at ${baseURL} refused the request (429 rate limit or quota)${message}. Wait and retry, or check your plan.`;
  return `The server at ${baseURL} answered ${status}${message}.`;
}

function connectionErrorCode(error: Error): string | undefined {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    // A file system error (it names a path: mkdir, open) is not the server's, whatever its E-code.
    if (typeof (cause as { path?: unknown }).path === "string") return undefined;
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}

function serverMessage(error: Error): string {
  const inner = (error as { error?: { message?: unknown } }).error?.message;
  const text = typeof inner === "string" ? inner : pageText(error.message);
  return text ? `: ${text.replace(/\s+/g, " ").slice(0, 300).replace(/\.$/, "")}` : "";
}

/**
 * The words of an HTML error page (a proxy's 502, a load balancer's 503), which the SDK puts
 * in its message after the status: "502 <html>…<h1>502 Bad Gateway</h1>…" is "502 Bad Gateway".
 */
function pageText(message: string): string {
  if (!/<\/?(?:html|head|body|h1|title|p|center|pre)\b/i.test(message)) return message;
  const words = message
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return words.replace(/^(\d{3}) (?=\1\b)/, "");
}
