/**
 * `@llamaindex/openai`'s `OpenAI`, with the two things stepflow's agent needs fixed:
 *
 * - Tool calls stream correctly from every OpenAI-compatible server. Upstream tracks one
 *   "current" call and `JSON.parse`s its arguments when the id changes; measured against the
 *   servers people use it throws a SyntaxError when the id is repeated on every chunk (vLLM),
 *   throws on `""` arguments (tools without parameters), and drops the second of two calls
 *   sent in one delta (Ollama). `ToolCallAccumulator` gathers calls by `index` and id as the
 *   OpenAI SDK's own docs do, and the complete calls are emitted once, on the last chunk.
 * - Unknown model names (every Ollama/vLLM model) get a 128k context window instead of
 *   upstream's 1,024-token fallback, which trims the agent's memory to the last message or two.
 *
 * - A streaming call costs less than the OpenAI SDK's own stream: upstream's `chat` wraps the
 *   SDK's stream (itself three async generators over a web-stream iterator) in two more, takes
 *   `AsyncLocalStorage` snapshots for its callbacks (5–10% of a turn against a local server),
 *   and runs each call inside `AsyncLocalStorage.run()`, which switches on Node's promise hooks
 *   for the whole process. Here the SDK sends the request and one generator reads the response
 *   body (server-sent-events.ts) and dispatches the same LlamaIndex `llm-start`, `llm-stream`
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
import { StepflowError } from "../errors.ts";
import { quoteInput } from "../user-text.ts";
import { ServerSentEventParser } from "./server-sent-events.ts";

type OpenAIClient = Awaited<LlamaIndexOpenAI["session"]>;
type CreateParams = Parameters<OpenAIClient["chat"]["completions"]["create"]>[0];
type OpenAIAdditionalChatOptions = NonNullable<LlamaIndexOpenAI["additionalChatOptions"]>;
/** One `choices[0].delta.tool_calls[i]` of a streamed chunk, as servers really send it. */
export interface ToolCallDelta {
  readonly index?: number | undefined;
  readonly id?: string | undefined;
  readonly function?: { readonly name?: string | undefined; readonly arguments?: string | undefined } | undefined;
}

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
  readonly #calls: { id: string; name: string; args: string }[] = [];
  readonly #byIndex = new Map<number, { id: string; name: string; args: string }>();
  readonly #byId = new Map<string, { id: string; name: string; args: string }>();

  add(deltas: readonly ToolCallDelta[]): void {
    for (const delta of deltas) {
      // The id names the call when present (some servers repeat it on every chunk, some reuse
      // index 0 for every call); otherwise the index does; a server sending neither continues the last call.
      let call = delta.id ? this.#byId.get(delta.id) : undefined;
      if (!call && !delta.id) call = delta.index !== undefined ? this.#byIndex.get(delta.index) : this.#calls.at(-1);
      if (!call) {
        call = { id: delta.id ?? "", name: "", args: "" };
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
      const text = call.args.trim();
      if (text === "") return { id, name: call.name, input: {} };
      try {
        const parsed: unknown = JSON.parse(text);
        if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return { id, name: call.name, input: parsed as JSONObject };
      } catch {
        // not JSON: handed on as text
      }
      return { id, name: call.name, input: call.args };
    });
  }
}

/**
 * The model's reply reached its token limit (`finish_reason: "length"`) in the middle of a
 * tool call, so the call's arguments are incomplete.
 * @example
 * try { await agent.run({ input }); } catch (e) { if (e instanceof LLMReplyCutOffError) … } // raise maxTokens
 */
export class LLMReplyCutOffError extends StepflowError {
  override name = "LLMReplyCutOffError";
  constructor(tool: string, maxTokens: number | undefined) {
    super(`The model's reply was cut off by its token limit (finish_reason "length") in the middle of a call to tool ${tool}, so its arguments are incomplete. Raise maxTokens${maxTokens === undefined ? "" : ` (now ${maxTokens})`} or ask for less.`);
  }
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
  readonly #contextWindow: number | undefined;
  /** The SDK client once `session` has resolved: saves an await per call. */
  #client: OpenAIClient | undefined;

  constructor(options: OpenAIOptions = {}) {
    const { contextWindow, ...upstream } = options;
    // Upstream retries 10 times with backoff, so a wrong URL hangs for minutes; the SDK's own default is 2.
    super({ maxRetries: 2, ...upstream });
    this.#contextWindow = contextWindow;
    // Upstream's @wrapEventCaller gives each instance its own chat/streamChat that runs every call
    // inside AsyncLocalStorage.run(). The first such run switches on Node's promise hooks for the
    // whole process, and from then on every await anywhere costs more (README, Benchmarks). Calls
    // go to the prototype methods instead; the cost is `reason: null` on the llm-* events.
    for (const method of ["chat", "streamChat"]) if (Object.hasOwn(this, method)) Reflect.deleteProperty(this, method);
  }

  override get metadata(): LLMMetadata {
    const metadata = super.metadata;
    const known = metadata.contextWindow !== UNKNOWN_MODEL_WINDOW;
    return { ...metadata, contextWindow: this.#contextWindow ?? (known ? metadata.contextWindow : DEFAULT_CONTEXT_WINDOW) };
  }

  override chat(params: LLMChatParamsStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions>): Promise<AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>>>;
  override chat(params: LLMChatParamsNonStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions>): Promise<ChatResponse<ToolCallLLMMessageOptions>>;
  override async chat(
    params: LLMChatParamsStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions> | LLMChatParamsNonStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions>,
  ): Promise<AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>> | ChatResponse<ToolCallLLMMessageOptions>> {
    if (!params.stream || params.responseFormat) return super.chat(params as LLMChatParamsNonStreaming<OpenAIAdditionalChatOptions, ToolCallLLMMessageOptions>);
    // The request upstream's chat() builds for a streaming call without structured output; an
    // abort signal among the chat options goes to the SDK's request options instead.
    const { signal, ...chatOptions } = { ...this.additionalChatOptions, ...params.additionalChatOptions } as OpenAIAdditionalChatOptions & { signal?: AbortSignal };
    const body: Record<string, unknown> = {
      model: this.model,
      temperature: /^o[34]/.test(this.model) ? undefined : this.temperature,
      reasoning_effort: this.reasoningEffort,
      max_tokens: this.maxTokens,
      tools: params.tools?.length ? params.tools.map((tool) => LlamaIndexOpenAI.toTool(tool)) : undefined,
      messages: LlamaIndexOpenAI.toOpenAIMessage(params.messages),
      top_p: this.topP,
      ...chatOptions,
      stream: true,
    };
    return this.#stream(body as unknown as CreateParams, signal, params.messages);
  }

  protected override streamChat(params: CreateParams): AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>> {
    const { signal, ...body } = params as CreateParams & { signal?: AbortSignal };
    return this.#stream({ ...body, stream: true }, signal, undefined);
  }

  /**
   * One generator between the HTTP response and the caller: every layer of async generator adds
   * promises to each chunk, and a turn of the agent has few chunks but many turns. The SDK sends
   * the request (headers, retries, HTTP errors as its `APIError`s); the body is read here, not
   * by the SDK's stream (server-sent-events.ts says why). With `messages`, dispatches
   * LlamaIndex's `llm-start`, `llm-stream` and `llm-end` events as upstream's chat() does.
   */
  async *#stream(body: CreateParams, signal: AbortSignal | undefined, messages: ChatMessage[] | undefined): AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>> {
    const callbacks = messages ? Settings.callbackManager : undefined;
    const id = randomUUID();
    if (messages) callbacks?.dispatchEvent("llm-start", { id, messages });
    const client = this.#client ?? (this.#client = await this.session);
    if (signal) countRequest(signal);
    const response = await client.chat.completions.create(body as CreateParams & { stream: true }, { signal }).asResponse();
    const reader = response.body?.getReader();
    const decoder = new TextDecoder();
    const parser = new ServerSentEventParser();
    const calls = new ToolCallAccumulator();
    const raw: ChatResponseChunk<ToolCallLLMMessageOptions>[] = [];
    let content = "";
    let parts = 0;
    let finishReason: string | null | undefined;
    let sawDone = false;
    let bodyEnded = false;
    try {
      while (reader && !bodyEnded) {
        const { done, value } = await reader.read().catch((error: unknown) => {
          throw signal?.aborted ? error : new StepflowError(`The server at ${client.baseURL} broke off its reply: ${networkDetail(error)}. Try again; if it happens again, check the server and the network between.`, { cause: error });
        });
        bodyEnded = done;
        for (const event of parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }))) {
          // After [DONE] the rest of the body is read and ignored, as the SDK does, so the
          // connection goes back to the pool instead of being closed.
          if (sawDone) continue;
          if (event.data.startsWith("[DONE]")) {
            sawDone = true;
            continue;
          }
          const part = parseChunk(event.data, client, response.headers);
          parts++;
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
      // An aborted request ends the stream quietly, as the SDK's does: the caller checks its signal.
      if (signal?.aborted) return;
      throw error;
    } finally {
      // The caller stopped early, or reading failed: close the request rather than leave it open.
      if (!bodyEnded) reader?.cancel().catch(() => undefined);
    }
    // A 200 answer that is not server-sent events (a JSON completion from a server that ignores
    // "stream", a web page at a wrong base URL) holds no events: not an empty reply, an error.
    if (parts === 0 && !signal?.aborted) {
      throw new StepflowError(`The server at ${client.baseURL} answered without streaming: it is not an OpenAI-compatible chat completions API, or it ignores "stream": true. Check the base URL (OPENAI_BASE_URL).`);
    }
    const toolCall = calls.finish();
    // Arguments cut off by the token limit are not the model's mistake to correct: asked again
    // under the same limit it would be cut off again, until maxIterations.
    const cutOff = finishReason === "length" ? toolCall.find((call) => typeof call.input === "string") : undefined;
    if (cutOff) throw new LLMReplyCutOffError(cutOff.name, this.maxTokens);
    const options: ToolCallLLMMessageOptions = toolCall.length > 0 ? { toolCall } : {};
    if (toolCall.length > 0) {
      const chunk = { raw: null, delta: "", options };
      callbacks?.dispatchEvent("llm-stream", { id, chunk });
      raw.push(chunk);
      yield chunk;
    }
    callbacks?.dispatchEvent("llm-end", { id, response: { raw, message: { role: "assistant", content, options } } });
  }
}

/** What undici says went wrong ("other side closed"), rather than fetch's bare "terminated". */
function networkDetail(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const detail = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && code !== "" ? `${detail} (${code})` : detail;
}

/** What is read of a streamed chunk: the SDK's `ChatCompletionChunk`, or an `error` some servers send mid-stream. */
interface StreamedChunk {
  readonly choices?: readonly { readonly delta?: { readonly content?: string | null; readonly tool_calls?: readonly ToolCallDelta[] }; readonly finish_reason?: string | null }[];
  readonly usage?: unknown;
  readonly error?: unknown;
}

/** The SDK's error class, reached through its client: `openai` is @llamaindex/openai's dependency, not ours. */
type APIErrorClass = new (status: undefined, error: object, message: undefined, headers: Headers) => Error;

/** One `data:` of the stream as the SDK would give it: JSON, and an `error` in it thrown as the SDK's `APIError`. */
function parseChunk(data: string, client: OpenAIClient, headers: Headers): StreamedChunk {
  let part: StreamedChunk;
  try {
    part = JSON.parse(data) as StreamedChunk;
  } catch {
    throw new StepflowError(`The server at ${client.baseURL} sent a stream event that is not JSON: ${quoteInput(data, 80)}. Is it an OpenAI-compatible chat completions API? Check the base URL (OPENAI_BASE_URL).`);
  }
  if (typeof part !== "object" || part === null) {
    throw new StepflowError(`The server at ${client.baseURL} sent a stream event that is not a JSON object: ${quoteInput(data, 80)}. Is it an OpenAI-compatible chat completions API? Check the base URL (OPENAI_BASE_URL).`);
  }
  if (part.error) throw new (client.constructor as unknown as { APIError: APIErrorClass }).APIError(undefined, part.error as object, undefined, headers);
  return part;
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
 * to fix it; `undefined` for errors that are not about the server. Never includes the API key.
 * @example
 * describeOpenAIError(error, { baseURL: "http://127.0.0.1:11434/v1", model: "llama3.1" });
 * // "Cannot reach the OpenAI-compatible server at http://127.0.0.1:11434/v1: ECONNREFUSED. Is it running? Check OPENAI_BASE_URL."
 */
export function describeOpenAIError(error: unknown, target: OpenAITarget): string | undefined {
  if (!(error instanceof Error)) return undefined;
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
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}

function serverMessage(error: Error): string {
  const inner = (error as { error?: { message?: unknown } }).error?.message;
  const text = typeof inner === "string" ? inner : error.message;
  return text ? `: ${text.replace(/\s+/g, " ").slice(0, 300).replace(/\.$/, "")}` : "";
}
