/**
 * Gemini through the Gemini API, on Google's official SDK (`@google/genai`, an optional peer
 * dependency loaded on first use).
 *
 * Why not `@llamaindex/google`: it drops the model's text from a turn that also called a
 * function, so the model later reads its own turn without what it said. This class sends each
 * model turn whole (text, then its `functionCall` parts with their thought signatures, which
 * Gemini 3 requires back), answers a turn's calls with as many `functionResponse` parts in one
 * user turn, and reports usage from `usageMetadata`. A refused request's `ApiError` gets what
 * the SDK drops: the response's `headers`, and `retryAfter`, the seconds Google asked to wait
 * (`Retry-After`, or the body's `RetryInfo.retryDelay`).
 */
import { randomUUID } from "node:crypto";
import type { BaseTool, ChatMessage, PartialToolCall, ToolCall } from "@llamaindex/core/llms";
import type { Content, FunctionCallingConfigMode, GenerateContentConfig, GoogleGenAI, GoogleGenAIOptions, Part } from "@google/genai";
import { toolCallsOf } from "./chat-history.ts";
import { loadProviderPackage } from "./provider-package.ts";
import { brokenOff, connectionLost, networkDetail } from "./stream-error.ts";
import { ProviderLLM, callArguments, contentText, toolParameters } from "./provider-llm.ts";
import type { ProviderModelOptions, ReplyChunk, ReplyRequest } from "./provider-llm.ts";
import { LLMReplyStoppedError } from "./reply-errors.ts";
import { bodyRetryDelay, headerDelay } from "./retry-after.ts";
export { LLMReplyStoppedError } from "./reply-errors.ts";
export { retryAfter } from "./retry-after.ts";
export { LLMStreamError } from "./stream-error.ts";

/** Options of {@link Gemini}. */
export interface GeminiOptions extends Partial<ProviderModelOptions> {
  /** Default: the `GEMINI_API_KEY` environment variable, else `GOOGLE_API_KEY`. */
  readonly apiKey?: string;
  /** Default: `GOOGLE_GEMINI_BASE_URL`, else Google's endpoint. */
  readonly baseURL?: string;
}

const DEFAULT_MODEL = "gemini-2.5-flash";
/**
 * A tool call's id carries the thought signature of its `functionCall` part after this mark: the
 * signature must go back with the call, and the id is what LlamaIndex's messages (and so memory,
 * saved runs and sessions) keep of a call besides its name and arguments.
 */
const SIGNATURE_MARK = "~sig~";

/**
 * Gemini as the agent's model.
 * @example
 * import { Gemini } from "stepflow/llm/gemini";
 * const llm = new Gemini({ model: "gemini-2.5-flash" }); // reads GEMINI_API_KEY
 * const agent = new FunctionCallingAgent({ llm, tools: calculatorTools });
 */
export class Gemini extends ProviderLLM {
  /** An answer in a schema is asked for with `responseMimeType: "application/json"` and `responseJsonSchema`. */
  readonly replyFormat = "json-schema";
  readonly #options: GeminiOptions;
  #client: Promise<GoogleGenAI> | undefined;

  constructor(options: GeminiOptions = {}) {
    super({ ...options, model: options.model ?? DEFAULT_MODEL }, 1_048_576);
    this.#options = options;
  }

  protected apiKey(): string | undefined {
    return this.#options.apiKey ?? (process.env.GEMINI_API_KEY || process.env.GOOGLE_API_KEY);
  }

  /** The server, as the SDK picks it, to name in an error. */
  #baseURL(): string {
    return this.#options.baseURL ?? (process.env.GOOGLE_GEMINI_BASE_URL || "https://generativelanguage.googleapis.com");
  }

  #session(): Promise<GoogleGenAI> {
    return (this.#client ??= loadProviderPackage("@google/genai", "Gemini").then(({ GoogleGenAI: Client }) => {
      // The Gemini API, never Vertex AI, whatever GOOGLE_GENAI_USE_VERTEXAI says: Vertex takes other credentials.
      const options: GoogleGenAIOptions = { vertexai: false };
      const apiKey = this.apiKey();
      if (apiKey !== undefined) options.apiKey = apiKey;
      if (this.#options.baseURL !== undefined) options.httpOptions = { baseUrl: this.#options.baseURL };
      return new Client(options);
    }));
  }

  protected async *streamReply(
    messages: ChatMessage[],
    tools: readonly BaseTool[],
    signal: AbortSignal | undefined,
    request: ReplyRequest,
  ): AsyncIterable<ReplyChunk> {
    const client = await this.#session();
    const { system, contents } = geminiContents(messages);
    const config: GenerateContentConfig = {};
    if (system) config.systemInstruction = system;
    if (this.temperature !== undefined) config.temperature = this.temperature;
    if (this.topP !== undefined) config.topP = this.topP;
    if (this.maxTokens !== undefined) config.maxOutputTokens = this.maxTokens;
    if (signal) config.abortSignal = signal;
    // The SDK's ApiError keeps the status and body, not the headers: the refused response is
    // seen here, per request, for its Retry-After.
    let refused: Headers | undefined;
    config.httpOptions = {
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (!response.ok) refused = response.headers;
        return response;
      },
    };
    if (request.format) {
      // The JSON Schema form of responseSchema: it takes the schema zod writes as it is.
      config.responseMimeType = "application/json";
      config.responseJsonSchema = request.format.schema;
    }
    if (request.toolRequired && tools.length > 0) config.toolConfig = { functionCallingConfig: { mode: "ANY" as FunctionCallingConfigMode } };
    if (tools.length > 0) {
      config.tools = [
        {
          functionDeclarations: tools.map((tool) => ({
            name: tool.metadata.name,
            description: tool.metadata.description,
            parametersJsonSchema: toolParameters(tool),
          })),
        },
      ];
    }
    const stream = await client.models.generateContentStream({ model: this.model, contents, config }).catch((error: unknown) => {
      throw withRetryDelay(error, refused);
    });
    const calls: (ToolCall | PartialToolCall)[] = [];
    let said = false;
    let finishReason: string | undefined;
    let blockReason: string | undefined;
    try {
      for await (const part of stream) {
        finishReason = part.candidates?.[0]?.finishReason ?? finishReason;
        blockReason = part.promptFeedback?.blockReason ?? blockReason;
        let text = "";
        for (const piece of part.candidates?.[0]?.content?.parts ?? []) {
          if (piece.thought) continue; // the model's thinking summary is not its answer
          if (piece.text) text += piece.text;
          if (piece.functionCall) {
            const id = `${piece.functionCall.id ?? `call_${randomUUID()}`}${piece.thoughtSignature ? `${SIGNATURE_MARK}${piece.thoughtSignature}` : ""}`;
            calls.push({
              id,
              name: piece.functionCall.name ?? "",
              input: callArguments({ id, name: "", input: (piece.functionCall.args ?? {}) as ToolCall["input"] }),
            });
          }
        }
        if (text) said = true;
        // Every chunk carries usageMetadata so far; the last one is the call's.
        if (text || part.usageMetadata) yield { raw: part, delta: text };
      }
    } catch (error) {
      // The SDK passes fetch's bare "terminated" on; the stream error names the server.
      if (signal?.aborted || !connectionLost(error)) throw withRetryDelay(error, refused);
      throw brokenOff(this.#baseURL(), networkDetail(error), error);
    }
    // The API's last chunk has the finishReason (or the prompt's blockReason): a stream without
    // one was cut (a proxy's timeout, a server restarting), and its text is not the whole answer.
    if (finishReason === undefined && blockReason === undefined && !signal?.aborted)
      throw brokenOff(this.#baseURL(), "the stream ended before a chunk with its finishReason");
    const stopped = stopError(finishReason, blockReason, said || calls.length > 0, this.maxTokens);
    if (stopped) throw stopped;
    if (calls.length > 0) yield { raw: null, delta: "", options: { toolCall: calls } };
  }
}

/**
 * The SDK's `ApiError` with what it dropped: `headers`, the refused response's (none for an
 * error sent mid-stream), and `retryAfter`, the seconds Google asked to wait, from
 * `Retry-After` or else the body's `RetryInfo` detail. Any other error as it is.
 */
function withRetryDelay(error: unknown, headers: Headers | undefined): unknown {
  if (!(error instanceof Error) || error.name !== "ApiError" || typeof (error as { status?: unknown }).status !== "number") return error;
  const seconds = (headers && headerDelay(headers)) ?? bodyRetryDelay(error.message);
  Object.assign(error, headers ? { headers } : {}, seconds === undefined ? {} : { retryAfter: seconds });
  return error;
}

const SAFETY_STOPS = new Set(["SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT"]);

/**
 * Why the reply is not an answer, if it is not. `MAX_TOKENS` cuts text, which stays an answer
 * (as other providers' "length"), unless nothing came: a thinking model can spend all its
 * tokens thinking. Function calls come whole in one part, never cut.
 */
function stopError(
  finishReason: string | undefined,
  blockReason: string | undefined,
  said: boolean,
  maxTokens: number | undefined,
): LLMReplyStoppedError | undefined {
  if (blockReason !== undefined && !said) {
    const reason = `blockReason "${blockReason}"`;
    return new LLMReplyStoppedError(
      reason,
      `Gemini refused the prompt (${reason}): its filters blocked the conversation before the model answered. Rephrase the request, or leave out what the filters object to.`,
    );
  }
  if (finishReason === undefined || finishReason === "STOP" || finishReason === "FINISH_REASON_UNSPECIFIED") return undefined;
  const reason = `finishReason "${finishReason}"`;
  if (finishReason === "MAX_TOKENS") {
    if (said) return undefined;
    return new LLMReplyStoppedError(
      reason,
      `Gemini's reply reached its token limit (${reason}) before the model said anything: a thinking model can spend every token thinking. Raise maxTokens${maxTokens === undefined ? "" : ` (now ${maxTokens})`}.`,
    );
  }
  const why = SAFETY_STOPS.has(finishReason)
    ? "its safety filters stopped the reply. Rephrase the request, or leave out what the filters object to"
    : finishReason === "RECITATION"
      ? "the reply repeated a source too closely. Ask for the answer in other words"
      : finishReason === "MALFORMED_FUNCTION_CALL" || finishReason === "UNEXPECTED_TOOL_CALL"
        ? "the model wrote a function call Gemini could not read. Try again; tools with simpler parameters help"
        : "the reply is not the model's whole answer. Try again";
  return new LLMReplyStoppedError(reason, `Gemini stopped the reply (${reason}): ${why}.`);
}

/**
 * LlamaIndex messages as Gemini's `contents`: system messages as the system instruction, the
 * assistant as role `model` with its text and its calls in one turn, the results of a turn's
 * calls as `functionResponse` parts of one user turn.
 * @example geminiContents([{ role: "user", content: "Hi" }]); // { system: "", contents: [{ role: "user", parts: [{ text: "Hi" }] }] }
 */
export function geminiContents(messages: readonly ChatMessage[]): { system: string; contents: Content[] } {
  const system: string[] = [];
  const contents: { role: "user" | "model"; parts: Part[] }[] = [];
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    if (message.role === "system" || message.role === "developer") {
      system.push(contentText(message.content));
      continue;
    }
    const role = message.role === "assistant" ? "model" : "user";
    const parts: Part[] = [];
    const result = (message.options as { toolResult?: { id: string; result: unknown; isError?: boolean } } | undefined)?.toolResult;
    if (role === "user" && result) {
      const [id] = result.id.split(SIGNATURE_MARK) as [string];
      const output = typeof result.result === "string" ? result.result : JSON.stringify(result.result);
      const response = result.isError ? { error: output } : { output };
      parts.push({ functionResponse: { ...(id.startsWith("call_") ? {} : { id }), name: toolNames.get(result.id) ?? "", response } });
    } else {
      const text = contentText(message.content);
      if (text.trim() !== "") parts.push({ text });
      for (const call of toolCallsOf(message)) {
        toolNames.set(call.id, call.name);
        const [id, signature] = call.id.split(SIGNATURE_MARK) as [string, string | undefined];
        const functionCall = { ...(id.startsWith("call_") ? {} : { id }), name: call.name, args: callArguments(call) };
        parts.push(signature ? { functionCall, thoughtSignature: signature } : { functionCall });
      }
    }
    if (parts.length === 0) continue; // Gemini refuses a turn without parts
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return { system: system.filter(Boolean).join("\n\n"), contents };
}
