/**
 * A whole REST API as one tool, as in seed 000's HR assistant (`call_rest_api`): the model
 * picks the method, the path (with its query) and the JSON body, and reads the status and the
 * answer. Requests stay on the API: the model gives a path under `baseURL`, never a URL;
 * redirects are reported, not followed; `headers` (keys) never reach the model, not even when
 * the API echoes them: every configured secret is hidden in what the tool returns.
 */
import type { JSONValue } from "@llamaindex/core/global";
import { z } from "zod";
import { currentToolCall } from "../../src/tools/current-tool-call.ts";
import { tool } from "../../src/tools/tool.ts";
import { secretRedactor } from "../../src/tools/secrets.ts";
import type { Redactor } from "../../src/tools/secrets.ts";
import { ConfigurationError } from "../../src/index.ts";
import { checkTimeout, startTimer } from "../../src/core/timers.ts";
import { maskCredentials } from "../../src/core/user-text.ts";
import { describeOpenApi, openApiEndpoints, openApiServerPath } from "./openapi.ts";
import type { OpenApiDocument, OpenApiEndpoint } from "./openapi.ts";

/** Options of {@link restApiTool}. */
export interface RestApiToolOptions {
  /** The API root every path is under, e.g. `http://127.0.0.1:8080` or `https://hr.example.com/v2`. Its query, if any, goes with every request. */
  readonly baseURL: string;
  /** What the API offers, for the model to choose from: its endpoints and what they take. Optional with `openApi`. */
  readonly description?: string;
  /**
   * The API's OpenAPI 3 document (parsed): the model reads a line per endpoint (with the `path`
   * argument), and a request for an endpoint the document does not have is answered with an
   * error, not sent. A `baseURL` without a path takes the document's first server path.
   */
  readonly openApi?: OpenApiDocument;
  /** The tool's name. Default `call_rest_api`. */
  readonly name?: string;
  /**
   * Sent with every request (say, an `authorization` header), over the tool's own; never shown
   * to the model: their values (and those of `baseURL`'s query) are replaced by `***` wherever
   * the API's answer repeats them, as written or URL-encoded.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The header that carries the call's idempotency key on every request but a GET, so that the
   * API can recognise a request repeated by a resumed run; `false` sends none. Default
   * `Idempotency-Key`. The key is the same for every attempt at one call of one run.
   */
  readonly idempotencyKeyHeader?: string | false;
  /** Other values the model must never read (say, a key the API may repeat in its answers): hidden like the headers' values. */
  readonly secrets?: readonly string[];
  /** Seconds a request may take, its body included. Default 30. */
  readonly timeout?: number;
  /** Characters of a response body the model reads; the rest is not even downloaded. Default 20,000. */
  readonly maxBodyChars?: number;
}

/** What the model reads after a request: the HTTP status, the body (JSON, or text) and, for a redirect, where it points. */
export interface RestApiResult {
  readonly [key: string]: JSONValue;
  readonly status: number;
  readonly body: JSONValue;
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

// A refinement, not a regex `pattern`: some local servers (llama.cpp) turn patterns into
// grammars and refuse ones that are not anchored at both ends. The tool runner enforces it.
const restRequest = (pathDescription: string) =>
  z
    .object({
      method: z.enum(METHODS).describe("The HTTP method."),
      path: z
        .string()
        .refine((path) => path.startsWith("/") && !/^\/[/\\]/.test(path), "must be a path on the API starting with one /, e.g. /api/users?page=2, not a URL")
        .describe(pathDescription),
      body: z.record(z.string(), z.unknown()).optional().describe("The JSON body of a POST, PUT, PATCH or DELETE."),
    })
    .refine((request) => request.method !== "GET" || request.body === undefined, {
      path: ["body"],
      message: "a GET request has no body; put its parameters in the path's query string",
    });

const PATH_DESCRIPTION = "The path on the API, with its query string if any, e.g. /api/users?page=2.";

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
  const { root, query } = apiRoot(options.baseURL, options.openApi ? openApiServerPath(options.openApi) : "");
  const timeout = options.timeout ?? 30;
  checkTimeout(timeout, "timeout", "the default is 30", "restApiTool: timeout");
  const maxBodyChars = options.maxBodyChars ?? 20_000;
  if (!Number.isInteger(maxBodyChars) || maxBodyChars < 1)
    throw new ConfigurationError(`restApiTool: maxBodyChars must be a whole number ≥ 1, got ${String(maxBodyChars)}.`, "maxBodyChars", maxBodyChars);
  const extraHeaders = checkedHeaders(options.headers);
  const keyHeader = options.idempotencyKeyHeader === undefined ? "Idempotency-Key" : options.idempotencyKeyHeader;
  if (keyHeader !== false) checkedHeaders({ [keyHeader]: "key" });
  const secrets = [...extraHeaders.map(([, value]) => value), ...[...query.values()], ...(options.secrets ?? [])];
  const redact = secretRedactor(secrets);
  // Characters read past maxBodyChars, so that a secret cut at the limit is still recognised and hidden.
  const slack = redact.longest;
  const endpoints = options.openApi ? openApiEndpoints(options.openApi) : undefined;
  const title = options.openApi?.info?.title;
  const about = options.description?.trim() || (typeof title === "string" && title.trim() ? `The ${title.trim()}.` : endpoints ? "A REST API." : "");
  if (!about)
    throw new ConfigurationError(
      "restApiTool: give a description of the API (its endpoints and what they take), or its OpenAPI document as openApi.",
      "description",
      options.description,
    );
  // The endpoint list goes with the path argument, not in the tool's description: OpenAI
  // refuses tool descriptions over 1,024 characters, which a dozen endpoints exceed.
  return tool({
    name: options.name ?? "call_rest_api",
    description: `${about}\nSends one request to this API and returns its status and body.${endpoints ? " The endpoints are listed with the path argument." : ""}`,
    parameters: restRequest(options.openApi ? `${PATH_DESCRIPTION}\n${describeOpenApi(options.openApi, endpoints)}` : PATH_DESCRIPTION),
    execute: ({ method, path, body }): Promise<RestApiResult> =>
      // Read as the call starts: the agent sets it only while starting the tool.
      send(method, path, body, method === "GET" || keyHeader === false ? undefined : currentToolCall()?.idempotencyKey).catch((error: unknown) => {
        // Error texts reach the model too (a URL in a fetch failure may carry the query's key).
        throw error instanceof Error ? new Error(redact(error.message)) : error;
      }),
  });

  async function send(
    method: (typeof METHODS)[number],
    path: string,
    body: Record<string, unknown> | undefined,
    idempotencyKey: string | undefined,
  ): Promise<RestApiResult> {
    const url = requestURL(root, query, path);
    if (endpoints) checkEndpoint(endpoints, method, `/${url.pathname.slice(root.pathname.length)}`);
    const headers = new Headers({ accept: "application/json" });
    if (body !== undefined) headers.set("content-type", "application/json");
    if (idempotencyKey !== undefined && keyHeader !== false) headers.set(keyHeader, idempotencyKey);
    for (const [name, value] of extraHeaders) headers.set(name, value);
    const deadline = new AbortController();
    const cancelTimer = startTimer(timeout, () => deadline.abort());
    const late = () => new Error(`The API at ${root.href} did not answer ${method} ${path} within ${timeout} s.`);
    try {
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          redirect: "manual",
          signal: deadline.signal,
        });
      } catch (error) {
        if (deadline.signal.aborted) throw late();
        const cause = (error as Error).cause as { code?: unknown; message?: unknown } | undefined;
        throw new Error(`Cannot reach the API at ${root.href}: ${String(cause?.code ?? cause?.message ?? (error as Error).message)}.`);
      }
      const raw = await readText(response, maxBodyChars + slack).catch((error: unknown) => {
        throw deadline.signal.aborted ? late() : new Error(`The API at ${root.href} broke off its answer to ${method} ${path}: ${(error as Error).message}.`);
      });
      const text = redactedBody(raw, redact, maxBodyChars, slack);
      const location = response.headers.get("location");
      // A redirect is the API's answer to report: following it could leave the API, taking the headers along.
      return {
        status: response.status,
        body: readable(text, response.headers.get("content-type")),
        ...(location === null ? {} : { location: redact(location) }),
      };
    } finally {
      cancelTimer();
    }
  }
}

/**
 * The body the model reads: secrets hidden, then cut to `maxChars`. Of a body read only in part,
 * the last `slack` characters are dropped first: they may hold the start of a secret.
 */
function redactedBody(raw: { text: string; done: boolean }, redact: Redactor, maxChars: number, slack: number): { text: string; cut: boolean } {
  const text = redact(raw.done ? raw.text : raw.text.slice(0, raw.text.length - slack));
  if (raw.done && text.length <= maxChars) return { text, cut: false };
  const cut = text.slice(0, /[\uD800-\uDBFF]/.test(text.charAt(maxChars - 1)) ? maxChars - 1 : maxChars); // never half a character
  return { text: `${cut}… (cut after ${maxChars} characters; ask for less, e.g. a page or one item)`, cut: true };
}

/**
 * The API root as a URL ending in "/", so that a path is added under it, and its query apart.
 * A `baseURL` without a path of its own takes the OpenAPI document's server path (`/api/v3`).
 */
function apiRoot(baseURL: string, serverPath: string): { root: URL; query: URLSearchParams } {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch (error) {
    const shown = maskCredentials(baseURL);
    throw new ConfigurationError(
      `restApiTool: baseURL must be an absolute http(s) URL, e.g. http://127.0.0.1:8080; got ${JSON.stringify(shown)}.`,
      "baseURL",
      shown,
      { cause: error },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigurationError(
      `restApiTool: baseURL must be an http(s) URL; got ${JSON.stringify(maskCredentials(baseURL))}.`,
      "baseURL",
      maskCredentials(baseURL),
    );
  if (url.username || url.password)
    throw new ConfigurationError(
      'restApiTool: baseURL must not hold a user name or password (fetch refuses such URLs); send credentials in `headers`, e.g. { authorization: "Bearer …" }.',
      "baseURL",
      maskCredentials(baseURL),
    );
  const query = url.searchParams;
  const path = url.pathname === "/" && serverPath ? serverPath : url.pathname;
  const root = new URL(url.origin + path.replace(/\/?$/, "/"));
  return { root, query };
}

/** Header names and values fetch accepts; a bad one fails here, naming the header but not its value (a key). */
function checkedHeaders(headers: Readonly<Record<string, string>> | undefined): [string, string][] {
  const checked: [string, string][] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    try {
      new Headers().set(name, value);
    } catch (error) {
      // `received` is the header's name only: its value may be a key.
      throw new ConfigurationError(
        `restApiTool: header ${JSON.stringify(name)} has a name or value fetch cannot send (a line break, or a character outside Latin-1?).`,
        "headers",
        name,
        { cause: error },
      );
    }
    checked.push([name, value]);
  }
  return checked;
}

/**
 * `path` under `root`, with the base query added. Refused when it could lead elsewhere: a
 * segment that is, or decodes to, `.` or `..` (also `..;`, which some servers read as `..`), or
 * one holding an encoded slash, which a gateway may decode before routing.
 */
function requestURL(root: URL, query: URLSearchParams, path: string): URL {
  const pathPart = path.split(/[?#]/, 1)[0] as string;
  for (const segment of pathPart.split("/")) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      decoded = segment;
    }
    const name = decoded.split(";", 1)[0] as string;
    if (name === "." || name === ".." || /[/\\]/.test(decoded)) throw outside(path, root);
  }
  const url = new URL(root.href + path.slice(1));
  if (url.origin !== root.origin || !url.pathname.startsWith(root.pathname)) throw outside(path, root);
  for (const [key, value] of query) url.searchParams.set(key, value);
  return url;
}

/** A request the OpenAPI document has no endpoint for is a made-up one: say so, and what the path does take. */
function checkEndpoint(endpoints: readonly OpenApiEndpoint[], method: string, pathname: string): void {
  const onPath = endpoints.filter((endpoint) => endpoint.matches(pathname));
  if (onPath.some((endpoint) => endpoint.method === method)) return;
  const here = onPath.length > 0 ? ` ${pathname} takes ${[...new Set(onPath.map((endpoint) => endpoint.method))].join(", ")}.` : "";
  throw new Error(`The API has no endpoint ${method} ${pathname}.${here} Use one of the endpoints listed with the path argument.`);
}

function outside(path: string, root: URL): Error {
  return new Error(
    `The path ${JSON.stringify(path)} leads, or may lead, outside the API at ${root.href}; give a plain path under it, without "." or ".." segments or encoded slashes.`,
  );
}

/** The body as text, in its charset, reading little more than `maxChars` characters' worth of it; `done` if it was read whole. */
async function readText(response: Response, maxChars: number): Promise<{ text: string; done: boolean }> {
  const charset = /charset="?([^";\s]+)/i.exec(response.headers.get("content-type") ?? "")?.[1];
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(charset ?? "utf-8");
  } catch {
    decoder = new TextDecoder("utf-8"); // a charset TextDecoder does not know
  }
  const reader = response.body?.getReader();
  let text = "";
  for (;;) {
    const { done, value } = reader ? await reader.read() : { done: true, value: undefined };
    text += done ? decoder.decode() : decoder.decode(value, { stream: true });
    if (done) return { text, done: true };
    if (text.length > maxChars) {
      void reader?.cancel().catch(() => undefined);
      return { text, done: false };
    }
  }
}

function readable({ text, cut }: { text: string; cut: boolean }, contentType: string | null): JSONValue {
  if (!cut && text.length > 0 && contentType?.includes("json")) {
    try {
      return JSON.parse(text) as JSONValue;
    } catch {
      // not JSON after all: the text
    }
  }
  return text;
}
