/**
 * A whole REST API as one tool, as in seed 000's HR assistant (`call_rest_api`): the model
 * picks the method, the path (with its query) and the JSON body, and reads the status and the
 * answer. Requests stay on the API's origin: the model gives a path, never a URL.
 */
import type { JSONValue } from "@llamaindex/core/global";
import { z } from "zod";
import { tool } from "../../src/llm/tool.ts";

/** Options of {@link restApiTool}. */
export interface RestApiToolOptions {
  /** The API root every path is relative to, e.g. `http://127.0.0.1:8080` or `https://hr.example.com/v2`. */
  readonly baseURL: string;
  /**
   * What the API offers, for the model to choose from: its endpoints and what they take. The
   * tool's own description of its arguments is added after it.
   */
  readonly description: string;
  /** The tool's name. Default `call_rest_api`. */
  readonly name?: string;
  /** Sent with every request (say, an `authorization` header); never shown to the model. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Seconds a request may take. Default 30. */
  readonly timeout?: number;
  /** Characters of a response body the model reads; longer bodies are cut, saying so. Default 20,000. */
  readonly maxBodyChars?: number;
}

/** What the model reads after a request: the HTTP status and the body (JSON, or text). */
export interface RestApiResult {
  readonly [key: string]: JSONValue;
  readonly status: number;
  readonly body: JSONValue;
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

const restRequest = z.object({
  method: z.enum(METHODS).describe("The HTTP method."),
  path: z
    .string()
    .regex(/^\/(?![/\\])/, "must be a path on the API starting with one /, e.g. /api/users?page=2, not a URL")
    .describe("The path on the API, with its query string if any, e.g. /api/users?page=2."),
  body: z.record(z.string(), z.unknown()).optional().describe("The JSON body of a POST, PUT or PATCH."),
});

/**
 * Makes a tool that sends requests to one REST API. Pair it with the agent's `needsApproval`
 * so that a human approves whatever changes data.
 * @example
 * const hr = restApiTool({
 *   baseURL: "http://127.0.0.1:8080",
 *   description: "The HR API. GET /api/users?page=N lists employees, 6 a page; DELETE /api/users/{id} removes one.",
 * });
 * const agent = new FunctionCallingAgent({ llm, tools: [hr], needsApproval: (call) => (call.input as { method?: string }).method !== "GET" });
 */
export function restApiTool(options: RestApiToolOptions) {
  const base = apiRoot(options.baseURL);
  const timeout = options.timeout ?? 30;
  if (!Number.isFinite(timeout) || timeout <= 0) throw new RangeError(`restApiTool: timeout is in seconds and must be a finite number > 0, got ${String(timeout)}.`);
  const maxBodyChars = options.maxBodyChars ?? 20_000;
  return tool({
    name: options.name ?? "call_rest_api",
    description: `${options.description.trim()}\nSends one request to this API and returns its status and body.`,
    parameters: restRequest,
    execute: async ({ method, path, body }): Promise<RestApiResult> => {
      const url = new URL(base.href + path.slice(1));
      // ".." and its escapes are resolved by URL: what is left must still be under the API root.
      if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) {
        throw new Error(`The path ${JSON.stringify(path)} leads outside the API at ${base.href}; give a path under it.`);
      }
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(timeout * 1000),
        });
      } catch (error) {
        if ((error as Error).name === "TimeoutError") throw new Error(`The API at ${base.href} did not answer ${method} ${path} within ${timeout} s.`);
        const cause = (error as Error).cause as { code?: unknown; message?: unknown } | undefined;
        throw new Error(`Cannot reach the API at ${base.href}: ${String(cause?.code ?? cause?.message ?? (error as Error).message)}.`);
      }
      return { status: response.status, body: readable(await response.text(), response.headers.get("content-type"), maxBodyChars) };
    },
  });
}

/** The API root as a URL ending in "/", so that a path is appended to it rather than replacing its own path. */
function apiRoot(baseURL: string): URL {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new TypeError(`restApiTool: baseURL must be an absolute http(s) URL, e.g. http://127.0.0.1:8080; got ${JSON.stringify(baseURL)}.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`restApiTool: baseURL must be an http(s) URL; got ${JSON.stringify(baseURL)}.`);
  if (url.username || url.password) throw new TypeError("restApiTool: baseURL must not hold a user name or password (fetch refuses such URLs); send credentials in `headers`, e.g. { authorization: \"Bearer …\" }.");
  url.search = "";
  url.hash = "";
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  return url;
}

function readable(text: string, contentType: string | null, maxChars: number): JSONValue {
  if (text.length > maxChars) return `${text.slice(0, maxChars)}… (cut: the body has ${text.length} characters; ask for less, e.g. a page or one item)`;
  if (text === "") return "";
  if (contentType?.includes("json")) {
    try {
      return JSON.parse(text) as JSONValue;
    } catch {
      // not JSON after all: the text
    }
  }
  return text;
}
