/**
 * The chunks of one streamed chat completion, read from the HTTP response rather than through
 * the OpenAI SDK's `Stream`: the SDK's stacks three async generators over a web-stream
 * iterator, and reading the body here with one generator costs less per response
 * (docs/benchmarks.md).
 * The SDK still sends the request, retries, and throws its `APIError`s for HTTP errors.
 */
import type { OpenAI as LlamaIndexOpenAI } from "@llamaindex/openai";
import { quoteInput } from "../core/internal.ts";
import { ServerSentEventParser } from "./server-sent-events.ts";
import { LLMStreamError, brokenOff, networkDetail } from "./stream-error.ts";

export { LLMStreamError } from "./stream-error.ts";

type OpenAIClient = Awaited<LlamaIndexOpenAI["session"]>;
type CreateParams = Parameters<OpenAIClient["chat"]["completions"]["create"]>[0];

/** One `choices[0].delta.tool_calls[i]` of a streamed chunk, as servers really send it. */
export interface ToolCallDelta {
  readonly index?: number | undefined;
  readonly id?: string | undefined;
  readonly function?: { readonly name?: string | undefined; readonly arguments?: string | undefined } | undefined;
}

/** What is read of a streamed chunk: the SDK's `ChatCompletionChunk`, or an `error` some servers send mid-stream. */
export interface StreamedChunk {
  readonly choices?: readonly {
    readonly delta?: { readonly content?: string | null; readonly tool_calls?: readonly ToolCallDelta[] };
    readonly finish_reason?: string | null;
  }[];
  readonly usage?: unknown;
  readonly error?: unknown;
}

/**
 * A streamed chat completion, a piece of the response body at a time.
 * @example
 * const stream = await openChatStream(client, { model, messages, stream: true }, signal);
 * try {
 *   for (let chunks; (chunks = await stream.next()); ) for (const chunk of chunks) handle(chunk);
 * } finally {
 *   stream.close();
 * }
 */
export interface ChatStream {
  /** The chunks the next piece of the body completes (often one, possibly none); `undefined` once the stream has ended. */
  next(): Promise<readonly StreamedChunk[] | undefined>;
  /** Closes the request unless the stream was read to its end: for a caller that stops early or fails. */
  close(): void;
}

/**
 * Sends a streaming chat request through the SDK client and returns its chunks. Errors name
 * the server: an `error` sent mid-stream is thrown as the SDK's `APIError` (as the SDK does), a
 * dropped connection as "broke off its reply", a 200 answer that is not a stream as such.
 * When `signal` aborts, reading fails with the abort (the caller decides what that means).
 * @example
 * const stream = await openChatStream(await llm.session, { model: "gpt-4o-mini", messages, stream: true }, undefined);
 */
export async function openChatStream(client: OpenAIClient, body: CreateParams, signal: AbortSignal | undefined): Promise<ChatStream> {
  const request: unknown = client.chat.completions.create({ ...body, stream: true }, { signal });
  // A client wrapped by a tracing library may return a plain promise of the SDK's stream.
  if (typeof (request as { asResponse?: unknown }).asResponse !== "function")
    return sdkStream(await (request as Promise<AsyncIterable<StreamedChunk>>), client.baseURL);
  const response = await (request as { asResponse(): Promise<Response> }).asResponse();
  return new ResponseStream(response, client, signal);
}

interface ByteSource {
  read(): Promise<IteratorResult<Uint8Array, unknown>>;
  cancel(): void;
}

/** The body's bytes: a web stream (fetch), or a Node stream or any async iterable (node-fetch as a custom `fetch`). */
function bytesOf(body: unknown): ByteSource {
  if (typeof (body as ReadableStream | null)?.getReader === "function") {
    const reader = (body as ReadableStream<Uint8Array>).getReader();
    return { read: () => reader.read() as Promise<IteratorResult<Uint8Array, unknown>>, cancel: () => void reader.cancel().catch(() => undefined) };
  }
  if (typeof (body as AsyncIterable<Uint8Array> | null)?.[Symbol.asyncIterator] === "function") {
    const iterator = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    return { read: () => iterator.next(), cancel: () => void iterator.return?.().catch(() => undefined) };
  }
  return { read: async () => ({ done: true, value: undefined }), cancel: () => undefined };
}

const BODY_HEAD = 200; // characters of a body that is not a stream, quoted in the error

class ResponseStream implements ChatStream {
  readonly #bytes: ByteSource;
  readonly #decoder = new TextDecoder();
  readonly #parser = new ServerSentEventParser();
  readonly #response: Response;
  readonly #APIError: APIErrorClass;
  readonly #baseURL: string;
  readonly #signal: AbortSignal | undefined;
  #ended = false;
  #sawEvent = false;
  #sawDone = false;
  /** A chunk said why the reply ended (`finish_reason`): the answer is whole, [DONE] or not. */
  #sawFinish = false;
  /** The start of the body while no event has come: quoted if it turns out not to be a stream. */
  #head = "";

  constructor(response: Response, client: OpenAIClient, signal: AbortSignal | undefined) {
    this.#bytes = bytesOf(response.body);
    this.#response = response;
    this.#APIError = (client.constructor as unknown as { APIError: APIErrorClass }).APIError;
    this.#baseURL = client.baseURL;
    this.#signal = signal;
  }

  async next(): Promise<readonly StreamedChunk[] | undefined> {
    if (this.#ended) return undefined;
    const { done, value } = await this.#bytes.read().catch((error: unknown) => {
      if (this.#signal?.aborted) throw error;
      throw brokenOff(this.#baseURL, networkDetail(error), error);
    });
    const text = done ? this.#decoder.decode() : this.#decoder.decode(value as Uint8Array, { stream: true });
    if (!this.#sawEvent && this.#head.length < BODY_HEAD) this.#head += text.slice(0, BODY_HEAD - this.#head.length);
    const chunks: StreamedChunk[] = [];
    for (const event of this.#parser.feed(text)) {
      this.#sawEvent = true;
      // After [DONE] the rest of the body is read and ignored, as the SDK does, so the
      // connection goes back to the pool instead of being closed.
      if (this.#sawDone) continue;
      if (event.data.startsWith("[DONE]")) this.#sawDone = true;
      else {
        const chunk = this.#parse(event.data);
        if (!this.#sawFinish && chunk.choices?.[0]?.finish_reason) this.#sawFinish = true;
        chunks.push(chunk);
      }
    }
    if (done) {
      this.#ended = true;
      if (!this.#sawEvent) throw notStreaming(this.#baseURL, this.#head);
      // A body closed cleanly before any finish_reason or [DONE] (a proxy's timeout, a server
      // restarting) holds part of a reply: its text is not the whole answer.
      if (!this.#sawDone && !this.#sawFinish) throw brokenOff(this.#baseURL, "the stream ended before a finish_reason or [DONE]");
      return chunks.length > 0 ? chunks : undefined;
    }
    return chunks;
  }

  close(): void {
    if (!this.#ended) this.#bytes.cancel();
    this.#ended = true;
  }

  /** One `data:` as the SDK would give it: JSON, and an `error` in it thrown as the SDK's `APIError`. */
  #parse(data: string): StreamedChunk {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (error) {
      throw new LLMStreamError(
        `The server at ${this.#baseURL} sent a stream event that is not JSON: ${quoteInput(data, 80)}. Is it an OpenAI-compatible chat completions API? Check the base URL (OPENAI_BASE_URL).`,
        this.#baseURL,
        "not-json",
        { cause: error },
      );
    }
    if (typeof chunk !== "object" || chunk === null) {
      throw new LLMStreamError(
        `The server at ${this.#baseURL} sent a stream event that is not a JSON object: ${quoteInput(data, 80)}. Is it an OpenAI-compatible chat completions API? Check the base URL (OPENAI_BASE_URL).`,
        this.#baseURL,
        "not-object",
      );
    }
    const { error } = chunk as StreamedChunk;
    if (error) throw new this.#APIError(undefined, error as object, undefined, this.#response.headers);
    return chunk as StreamedChunk;
  }
}

/** The SDK's own stream, for a client whose `create` does not give the response. */
function sdkStream(stream: AsyncIterable<StreamedChunk>, baseURL: string): ChatStream {
  const iterator = stream[Symbol.asyncIterator]();
  let ended = false;
  let chunks = 0;
  return {
    async next() {
      if (ended) return undefined;
      const result = await iterator.next();
      if (!result.done) {
        chunks++;
        return [result.value];
      }
      ended = true;
      if (chunks === 0) throw notStreaming(baseURL, undefined);
      return undefined;
    },
    close() {
      if (!ended) void iterator.return?.();
      ended = true;
    },
  };
}

/** The SDK's `APIError`, reached through its client: `openai` is @llamaindex/openai's dependency, not ours. */
type APIErrorClass = new (status: undefined, error: object, message: undefined, headers: Headers) => Error;

function notStreaming(baseURL: string, head: string | undefined): LLMStreamError {
  const shown = Array.from(head?.replace(/\s+/g, " ").trim() ?? "");
  const began = shown.length === 0 ? "" : ` Its answer began: ${shown.slice(0, 120).join("")}${shown.length > 120 ? "…" : ""}`;
  return new LLMStreamError(
    `The server at ${baseURL} answered without streaming: it is not an OpenAI-compatible chat completions API, or it ignores "stream": true. Check the base URL (OPENAI_BASE_URL).${began}`,
    baseURL,
    "not-streaming",
  );
}
