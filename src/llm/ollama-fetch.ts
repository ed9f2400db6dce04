/**
 * The `fetch` the Ollama class gives Ollama's client, so that the client never writes to the
 * user's console. The client (`ollama` 0.6) prints with `console.log` when an error response is
 * not JSON ("Getting text from response": a proxy's HTML page, Ollama's plain-text 404) or is
 * JSON it cannot parse, and with `console.warn` for each stream line that is not JSON (blank
 * lines included), which it then skips. Here an error response reaches the client as the JSON
 * error it reads without a word (the same message it would have made), blank lines are dropped,
 * and a line that is not JSON fails the stream with an `LLMStreamError` rather than being lost.
 */
import { quoteInput } from "../core/internal.ts";
import { LLMStreamError } from "./stream-error.ts";

/**
 * A `fetch` for Ollama's client, talking to `host`: the answers of `fetch` reshaped so that the
 * client has nothing to print.
 * @example new Client({ host, fetch: quietOllamaFetch(host) });
 */
export function quietOllamaFetch(host: string): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.ok) return await jsonError(response);
    // A whole JSON document (an answer not streamed) may span lines: only a stream is read by lines.
    if (!response.body || response.headers.get("content-type")?.includes("application/json")) return response;
    return new Response(response.body.pipeThrough(jsonLines(host)), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** An error response as JSON `{ error }` with the message the client would have made of it. */
async function jsonError(response: Response): Promise<Response> {
  const fallback = `Error ${response.status}: ${response.statusText}`;
  const text = await response.text().catch(() => "");
  let message = text || fallback;
  // The client's own messages: a JSON body's `error`, else the status (a JSON body it cannot
  // parse included); any other body's text.
  if (response.headers.get("content-type")?.includes("application/json")) {
    let error: unknown;
    try {
      error = (JSON.parse(text) as { error?: unknown } | null)?.error;
    } catch {
      error = undefined;
    }
    message = typeof error === "string" && error !== "" ? error : fallback;
  }
  const headers = new Headers(response.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  return new Response(JSON.stringify({ error: message }), { status: response.status, statusText: response.statusText, headers });
}

/** NDJSON passed on line by line: blank lines dropped, a line that is not JSON an `LLMStreamError`. */
function jsonLines(host: string): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder("utf-8");
  const encoder = new TextEncoder();
  let buffer = "";
  const pass = (line: string, controller: TransformStreamDefaultController<Uint8Array>) => {
    if (line.trim() === "") return;
    try {
      JSON.parse(line);
    } catch (error) {
      throw new LLMStreamError(
        `The server at ${host} sent a line that is not JSON: ${quoteInput(line, 80)}. Is it Ollama's API? Check the host (OLLAMA_HOST).`,
        host,
        "not-json",
        { cause: error },
      );
    }
    controller.enqueue(encoder.encode(`${line}\n`));
  };
  return new TransformStream({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) pass(line, controller);
    },
    flush(controller) {
      pass(buffer + decoder.decode(), controller);
    },
  });
}
