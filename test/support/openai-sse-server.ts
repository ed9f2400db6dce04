/**
 * An OpenAI-compatible `/v1/chat/completions` server on 127.0.0.1 that replays scripted turns
 * as real servers stream them (SSE `data:` chunks, `finish_reason`, `[DONE]`), in the styles of
 * OpenAI, vLLM, Ollama and llama.cpp. It records every request body, so tests can assert what
 * a client really sent.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One assistant turn to replay. `arguments` is sent as given when a string (e.g. `""`). */
export interface ServerTurn {
  readonly text?: string | readonly string[];
  readonly toolCalls?: readonly { readonly id: string; readonly name: string; readonly arguments: string | Record<string, unknown> }[];
  /** The usage reported for this turn; default: about a token per 4 characters of the request's messages and tools, and of the reply. */
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly cached_tokens?: number };
}

/**
 * How tool calls are streamed:
 * - `openai`: id and name on a call's first chunk, arguments in small fragments (OpenAI);
 * - `repeat-id`: id, type and name repeated on every fragment (vLLM);
 * - `whole-call`: each call complete in one chunk (Ollama, llama.cpp);
 * - `two-calls-one-delta`: every call of the turn, complete, in a single delta (Ollama).
 */
export type StreamVariant = "openai" | "repeat-id" | "whole-call" | "two-calls-one-delta";

export interface OpenAIServerOptions {
  readonly turns: readonly ServerTurn[] | ((body: ChatRequestBody, index: number) => ServerTurn);
  readonly variant?: StreamVariant;
  /** Answer every request with this HTTP status and an OpenAI-style error body. */
  readonly status?: number;
  /** With `status`: the error repeats the request's API key, as careless servers do. */
  readonly echoKey?: boolean;
  /** Stream one text chunk, then an `error` event repeating the request's API key. */
  readonly errorMidStream?: boolean;
  /** Keep every request in `requests` (default true); false for benchmarks, so memory stays flat. */
  readonly keepRequests?: boolean;
}

/** The parts of a request body the tests look at (the rest is kept too). */
export interface ChatRequestBody {
  readonly model: string;
  readonly stream?: boolean;
  readonly messages: {
    role: string;
    content?: unknown;
    tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  readonly tools?: { type: string; function: { name: string; description?: string; parameters?: Record<string, unknown> } }[];
  readonly [key: string]: unknown;
}

export interface OpenAIServer {
  /** e.g. `http://127.0.0.1:41234/v1`: pass as `baseURL` / `OPENAI_BASE_URL`. */
  readonly baseURL: string;
  readonly requests: { body: ChatRequestBody; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}

/** The three turns of "What is (2123 + 2321) * 312?" (add, then multiply, then the answer). */
export function calculatorTurns(): ServerTurn[] {
  return [
    { toolCalls: [{ id: "call_add", name: "add", arguments: { x: 2123, y: 2321 } }] },
    { toolCalls: [{ id: "call_mul", name: "multiply", arguments: { x: 4444, y: 312 } }] },
    { text: ["(2123 + 2321)", " * 312", " = 1386528."] },
  ];
}

/**
 * @example
 * const server = await startOpenAIServer({ turns: calculatorTurns(), variant: "repeat-id" });
 * const llm = new OpenAI({ baseURL: server.baseURL, apiKey: "test", model: "gpt-4o-mini" });
 * …
 * await server.close();
 */
export async function startOpenAIServer(options: OpenAIServerOptions): Promise<OpenAIServer> {
  const requests: OpenAIServer["requests"] = [];
  let served = 0;
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (raw += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) return sendError(res, 404, `No route ${req.method} ${req.url}`);
      const body = JSON.parse(raw) as ChatRequestBody;
      const index = served++;
      if (options.keepRequests ?? true) requests.push({ body, headers: req.headers });
      const key = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
      if (options.status && options.echoKey)
        return sendError(res, options.status, `Incorrect API key provided: ${key}. Headers seen: ${JSON.stringify(req.headers)}`);
      if (options.status) return sendError(res, options.status, options.status === 401 ? "Incorrect API key provided." : `Scripted status ${options.status}.`);
      if (options.errorMidStream) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta: { content: "Hel" }, finish_reason: null }] })}\n\n`,
        );
        return res.end(`data: ${JSON.stringify({ error: { message: `Key ${key} is over quota`, type: "server_error", code: key } })}\n\n`);
      }
      const turn = typeof options.turns === "function" ? options.turns(body, index) : options.turns[index];
      // 400, not 500: the SDK retries 5xx, and a missing turn is a bug in the test to report at once.
      if (!turn) return sendError(res, 400, `The test server has no turn #${index + 1} (it was given ${(options.turns as readonly ServerTurn[]).length}).`);
      if (!body.stream) return sendJSON(res, 200, { ...completion(turn, body.model), usage: usageOf(turn, body) });
      // As OpenAI does with stream_options.include_usage: `usage: null` on every chunk, then one
      // chunk with no choices and the usage.
      const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      for (const chunk of chunks(turn, body.model, options.variant ?? "openai"))
        res.write(`data: ${JSON.stringify(includeUsage ? { ...chunk, usage: null } : chunk)}\n\n`);
      // Sent with [DONE]: OpenAI's arrive together.
      const usageChunk = () => ({
        id: "chatcmpl-test",
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: body.model,
        choices: [],
        usage: usageOf(turn, body),
      });
      res.end(`${includeUsage ? `data: ${JSON.stringify(usageChunk())}\n\n` : ""}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Res = import("node:http").ServerResponse;
const sendJSON = (res: Res, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};
const sendError = (res: Res, status: number, message: string) => sendJSON(res, status, { error: { message, type: "invalid_request_error", code: null } });

const argumentsOf = (call: NonNullable<ServerTurn["toolCalls"]>[number]) =>
  typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
const textOf = (turn: ServerTurn) => (typeof turn.text === "string" ? [turn.text] : [...(turn.text ?? [])]);

/** OpenAI's usage object for a turn: the turn's own figures, else about a token per 4 characters. */
function usageOf(turn: ServerTurn, body: ChatRequestBody) {
  const estimate = (text: string) => Math.ceil(text.length / 4);
  const prompt = turn.usage?.prompt_tokens ?? estimate(JSON.stringify({ messages: body.messages, tools: body.tools ?? [] }));
  const completion = turn.usage?.completion_tokens ?? estimate(textOf(turn).join("") + (turn.toolCalls ?? []).map(argumentsOf).join(""));
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: turn.usage?.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function completion(turn: ServerTurn, model: string) {
  const calls = turn.toolCalls ?? [];
  return {
    id: "chatcmpl-test",
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [
      {
        index: 0,
        finish_reason: calls.length > 0 ? "tool_calls" : "stop",
        message: {
          role: "assistant",
          content: textOf(turn).join("") || null,
          ...(calls.length > 0
            ? { tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: argumentsOf(c) } })) }
            : {}),
        },
      },
    ],
  };
}

function* chunks(turn: ServerTurn, model: string, variant: StreamVariant) {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const calls = turn.toolCalls ?? [];
  yield chunk({ role: "assistant", content: calls.length > 0 ? null : "" });
  for (const text of textOf(turn)) yield chunk({ content: text });
  if (variant === "two-calls-one-delta" && calls.length > 0) {
    yield chunk({ tool_calls: calls.map((c, index) => ({ index, id: c.id, type: "function", function: { name: c.name, arguments: argumentsOf(c) } })) });
  } else {
    for (const [index, call] of calls.entries()) {
      const args = argumentsOf(call);
      if (variant === "whole-call") {
        yield chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: args } }] });
        continue;
      }
      const fragments = args === "" ? [""] : (args.match(/.{1,7}/gs) ?? []);
      if (variant === "openai") {
        yield chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] });
        for (const fragment of args === "" ? [] : fragments) yield chunk({ tool_calls: [{ index, function: { arguments: fragment } }] });
      } else {
        for (const fragment of fragments)
          yield chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: fragment } }] });
      }
    }
  }
  yield chunk({}, calls.length > 0 ? "tool_calls" : "stop");
}
