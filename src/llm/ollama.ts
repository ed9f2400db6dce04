/**
 * Local models through Ollama's native `/api/chat`, on Ollama's official client (`ollama`, an
 * optional peer dependency loaded on first use).
 *
 * Why not `@llamaindex/ollama`: it sends assistant messages as `{ role, content }` only, dropping
 * their `tool_calls`, so the model never sees which tools it called before the results it reads,
 * and its usage (`prompt_eval_count`, `eval_count` on the last chunk) was not read. This class
 * keeps `tool_calls` in the history, answers them with `tool` messages naming the tool, and
 * passes the last chunk on so its usage is reported. (Ollama's OpenAI-compatible `/v1` works
 * with `stepflow/llm/openai` too.)
 */
import { randomUUID } from "node:crypto";
import type { BaseTool, ChatMessage, PartialToolCall, ToolCall } from "@llamaindex/core/llms";
import type { ChatRequest, Message, Ollama as OllamaClient, Tool } from "ollama";
import { toolCallsOf } from "./chat-history.ts";
import { quietOllamaFetch } from "./ollama-fetch.ts";
import { loadProviderPackage } from "./provider-package.ts";
import { ProviderLLM, callArguments, contentText, toolParameters } from "./provider-llm.ts";
import type { ProviderModelOptions, ReplyChunk, ReplyRequest } from "./provider-llm.ts";
import { brokenOff, connectionLost, networkDetail } from "./stream-error.ts";
export { LLMStreamError } from "./stream-error.ts";
export { retryAfter } from "./retry-after.ts";

/** Options of {@link Ollama}. */
export interface OllamaOptions extends Partial<ProviderModelOptions> {
  /** The server. Default: the `OLLAMA_HOST` environment variable, else `http://127.0.0.1:11434`. */
  readonly host?: string;
  /** Sent as `Authorization: Bearer …`, for a hosted Ollama that needs a key. Default: `OLLAMA_API_KEY`. */
  readonly apiKey?: string;
}

const DEFAULT_MODEL = "llama3.1:8b";
/** The client's error for a stream that ended without its `done: true` line. */
const NO_DONE = "Did not receive done or success response in stream.";

/**
 * A model served by Ollama as the agent's model.
 * @example
 * import { Ollama } from "stepflow/llm/ollama";
 * const llm = new Ollama({ model: "llama3.1:8b" }); // http://127.0.0.1:11434, or OLLAMA_HOST
 * const agent = new FunctionCallingAgent({ llm, tools: calculatorTools });
 */
export class Ollama extends ProviderLLM {
  /** An answer in a schema is asked for with `format`: Ollama constrains the model's output to it. */
  readonly replyFormat = "json-schema";
  readonly #options: OllamaOptions;
  #client: Promise<OllamaClient> | undefined;

  constructor(options: OllamaOptions = {}) {
    // Ollama's own default window is small (its num_ctx); 128k is what current tool-calling models take.
    super({ ...options, model: options.model ?? DEFAULT_MODEL }, 128_000);
    this.#options = options;
  }

  /** The server's URL, as the client is given it. */
  get host(): string {
    return (this.#options.host ?? process.env.OLLAMA_HOST ?? "http://127.0.0.1:11434").replace(/\/+$/, "");
  }

  protected apiKey(): string | undefined {
    return this.#options.apiKey ?? process.env.OLLAMA_API_KEY;
  }

  #session(): Promise<OllamaClient> {
    return (this.#client ??= loadProviderPackage("ollama", "Ollama").then(({ Ollama: Client }) => {
      const key = this.apiKey();
      // The client prints to the console on error responses and lines that are not JSON: a
      // library must not, so its fetch gives it answers it reads without a word (ollama-fetch.ts).
      return new Client({ host: this.host, fetch: quietOllamaFetch(this.host), ...(key ? { headers: { Authorization: `Bearer ${key}` } } : {}) });
    }));
  }

  protected async *streamReply(
    messages: ChatMessage[],
    tools: readonly BaseTool[],
    signal: AbortSignal | undefined,
    request: ReplyRequest,
  ): AsyncIterable<ReplyChunk> {
    const client = await this.#session();
    const options: NonNullable<ChatRequest["options"]> = {};
    if (this.temperature !== undefined) options.temperature = this.temperature;
    if (this.topP !== undefined) options.top_p = this.topP;
    if (this.maxTokens !== undefined) options.num_predict = this.maxTokens;
    const body: ChatRequest & { stream: true } = { model: this.model, messages: ollamaMessages(messages), stream: true, options };
    if (request.format) body.format = request.format.schema;
    if (tools.length > 0) {
      body.tools = tools.map((tool): Tool => ({
        type: "function",
        function: { name: tool.metadata.name, description: tool.metadata.description, parameters: toolParameters(tool) as Tool["function"]["parameters"] },
      }));
    }
    const stream = await client.chat(body);
    // The client aborts a request through its stream; the run's signal is passed on to it.
    const abort = () => stream.abort();
    signal?.addEventListener("abort", abort, { once: true });
    const calls: (ToolCall | PartialToolCall)[] = [];
    try {
      for await (const part of stream) {
        for (const call of part.message.tool_calls ?? []) {
          // Ollama's calls have no ids: the agent needs one to pair each result with its call.
          calls.push({ id: `call_${randomUUID()}`, name: call.function.name, input: callArguments({ id: "", name: "", input: call.function.arguments }) });
        }
        if (part.message.content) yield { raw: part, delta: part.message.content };
        // The last chunk carries the call's usage.
        else if (part.done) yield { raw: part, delta: "" };
      }
    } catch (error) {
      // The client passes fetch's bare "terminated" on, and says a stream without its last line
      // "Did not receive done or success response in stream.": the stream error names the server.
      if (signal?.aborted) throw error;
      if (connectionLost(error)) throw brokenOff(this.host, networkDetail(error), error);
      if (error instanceof Error && error.message === NO_DONE) throw brokenOff(this.host, "the stream ended before its last line (done: true)", error);
      throw error;
    } finally {
      signal?.removeEventListener("abort", abort);
    }
    if (calls.length > 0) yield { raw: null, delta: "", options: { toolCall: calls } };
  }
}

/**
 * LlamaIndex messages as `/api/chat` takes them: an assistant's tool calls kept in its message,
 * and each result as a `tool` message with the name of the tool it answers.
 * @example ollamaMessages([{ role: "user", content: "Hi" }]); // [{ role: "user", content: "Hi" }]
 */
export function ollamaMessages(messages: readonly ChatMessage[]): Message[] {
  const toolNames = new Map<string, string>();
  const out: Message[] = [];
  for (const message of messages) {
    const result = (message.options as { toolResult?: { id: string; result: unknown } } | undefined)?.toolResult;
    if (message.role !== "assistant" && result) {
      const content = typeof result.result === "string" ? result.result : JSON.stringify(result.result);
      const name = toolNames.get(result.id);
      out.push(name === undefined ? { role: "tool", content } : { role: "tool", content, tool_name: name });
      continue;
    }
    const calls = toolCallsOf(message);
    const images = imagesOf(message);
    const role = message.role === "developer" ? "system" : message.role === "memory" ? "user" : message.role;
    const converted: Message = { role, content: contentText(message.content) };
    if (images.length > 0) converted.images = images;
    if (calls.length > 0) {
      for (const call of calls) toolNames.set(call.id, call.name);
      converted.tool_calls = calls.map((call) => ({ function: { name: call.name, arguments: callArguments(call) } }));
    }
    out.push(converted);
  }
  return out;
}

/** A message's images as Ollama takes them: base64, without a data URL's prefix. */
function imagesOf(message: ChatMessage): string[] {
  if (typeof message.content === "string") return [];
  const images: string[] = [];
  for (const part of message.content) {
    if (part.type !== "image_url") continue;
    const data = /^data:image\/[\w.+-]+;base64,(.*)$/s.exec(part.image_url.url);
    if (data) images.push(data[1] as string);
  }
  return images;
}
