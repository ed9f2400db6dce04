/**
 * Sending one request to a REST API on a model's behalf, for the REST tools (`restApiTool`'s
 * one tool, `openApiTools`' tool per operation): the request stays under the API root, its
 * redirects are reported, not followed, its body is read no further than the model will read,
 * and every configured secret is hidden in what comes back, error texts included.
 */
import type { JSONValue } from "@llamaindex/core/global";
import { cutForModel } from "../../src/tools/cut-text.ts";
import { secretRedactor } from "../../src/tools/secrets.ts";
import type { Redactor } from "../../src/tools/secrets.ts";
import { ConfigurationError } from "../../src/index.ts";
import { checkTimeout, startTimer, maskCredentials } from "../../src/core/internal.ts";
import { formBody } from "./form-body.ts";
import { headerArguments, toolHeaderNames } from "./header-parameters.ts";
import type { OpenApiEndpoint } from "./openapi.ts";

/** What the model reads after a request: the HTTP status, the body (JSON, or text) and, for a redirect, where it points. */
export interface RestApiResult {
  readonly [key: string]: JSONValue;
  readonly status: number;
  readonly body: JSONValue;
}

/** The HTTP methods the REST tools send. */
export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type RestMethod = (typeof METHODS)[number];

/** How to reach one API: the options `restApiTool` and `openApiTools` share, and who is asking (for error messages). */
export interface RestClientOptions {
  readonly who: string;
  readonly baseURL: string;
  /** The OpenAPI document's server path, taken when `baseURL` has no path: read only then, as it may be unknown. */
  readonly serverPath: string | (() => string);
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly idempotencyKeyHeader?: string | false | undefined;
  readonly secrets?: readonly string[] | undefined;
  readonly timeout?: number | undefined;
  readonly maxBodyChars?: number | undefined;
}

/**
 * What an operation adds to a request: its header parameters, which never replace a header the tool sets, and how its body is sent.
 * @example const extras: RequestExtras = { headers: [["X-Tenant-Id", "acme"]], form: new Set(["metadata"]) };
 */
export interface RequestExtras {
  readonly headers?: readonly (readonly [string, string])[];
  /**
   * Header parameters the model chose (by header name), sent only as the request's endpoint
   * declares them (`restApiTool`'s `headers` argument): one it does not declare, or a required
   * one left out, fails the request before it is sent.
   */
  readonly headerArguments?: Readonly<Record<string, unknown>>;
  /** Send the body as `application/x-www-form-urlencoded`, these fields in brackets (`a[b]=c`); default JSON. */
  readonly form?: ReadonlySet<string>;
}

/** A configured API: `send` one request, `redact` a text the model will read. */
export interface RestClient {
  readonly root: URL;
  readonly redact: Redactor;
  /**
   * Sends `method path` with `body`; `endpoints` (an OpenAPI document's) refuse a request none
   * of them takes. The idempotency key goes in its header on every method but GET.
   */
  send(
    method: RestMethod,
    path: string,
    body: unknown,
    idempotencyKey: string | undefined,
    endpoints?: readonly OpenApiEndpoint[],
    extras?: RequestExtras,
  ): Promise<RestApiResult>;
}

/**
 * Checks `options` (a `ConfigurationError` naming the bad one) and returns the client.
 * @example
 * const api = restClient({ who: "restApiTool", baseURL: "http://127.0.0.1:8080", serverPath: "" });
 * await api.send("GET", "/api/users?page=2", undefined, undefined); // { status: 200, body: { page: 2, … } }
 */
export function restClient(options: RestClientOptions): RestClient {
  const { who } = options;
  const { root, query } = apiRoot(who, options.baseURL, options.serverPath);
  const timeout = options.timeout ?? 30;
  checkTimeout(timeout, "timeout", "the default is 30", `${who}: timeout`);
  const maxBodyChars = options.maxBodyChars ?? 20_000;
  if (!Number.isInteger(maxBodyChars) || maxBodyChars < 1)
    throw new ConfigurationError(`${who}: maxBodyChars must be a whole number ≥ 1, got ${String(maxBodyChars)}.`, "maxBodyChars", maxBodyChars);
  const extraHeaders = checkedHeaders(who, options.headers);
  const keyHeader = options.idempotencyKeyHeader === undefined ? "Idempotency-Key" : options.idempotencyKeyHeader;
  if (keyHeader !== false) checkedHeaders(who, { [keyHeader]: "key" });
  const toolHeaders = toolHeaderNames(options);
  const secrets = [...extraHeaders.map(([, value]) => value), ...[...query.values()], ...(options.secrets ?? [])];
  const redact = secretRedactor(secrets);
  // Characters read past maxBodyChars, so that a secret cut at the limit is still recognised and hidden.
  const slack = redact.longest;

  const send: RestClient["send"] = (method, path, body, idempotencyKey, endpoints, extras = {}) =>
    request(method, path, body, method === "GET" || keyHeader === false ? undefined : idempotencyKey, endpoints, extras).catch((error: unknown) => {
      // Error texts reach the model too (a URL in a fetch failure may carry the query's key).
      throw error instanceof Error ? new Error(redact(error.message)) : error;
    });
  return { root, redact, send };

  async function request(
    method: RestMethod,
    path: string,
    body: unknown,
    idempotencyKey: string | undefined,
    endpoints: readonly OpenApiEndpoint[] | undefined,
    extras: RequestExtras,
  ): Promise<RestApiResult> {
    const url = requestURL(root, query, path);
    const endpoint = endpoints && checkEndpoint(endpoints, method, `/${url.pathname.slice(root.pathname.length)}`, body !== undefined);
    const chosen = endpoint && extras.headerArguments ? headerArguments(endpoint, extras.headerArguments, toolHeaders) : [];
    const form = extras.form ?? endpoint?.form;
    const payload = body === undefined ? undefined : form ? formBody(body, form).toString() : JSON.stringify(body);
    const headers = new Headers();
    // The operation's header parameters first: every header the tool sets below replaces one of theirs.
    for (const [name, value] of [...(extras.headers ?? []), ...chosen]) headers.set(name, value);
    headers.set("accept", "application/json");
    if (payload !== undefined) headers.set("content-type", form ? "application/x-www-form-urlencoded" : "application/json");
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
          body: payload,
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
  return cutForModel(text, maxChars, raw.done);
}

/**
 * The API root as a URL ending in "/", so that a path is added under it, and its query apart.
 * A `baseURL` without a path of its own takes the OpenAPI document's server path (`/api/v3`).
 */
function apiRoot(who: string, baseURL: string, serverPath: string | (() => string)): { root: URL; query: URLSearchParams } {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch (error) {
    const shown = maskCredentials(baseURL);
    throw new ConfigurationError(
      `${who}: baseURL must be an absolute http(s) URL, e.g. http://127.0.0.1:8080; got ${JSON.stringify(shown)}.`,
      "baseURL",
      shown,
      { cause: error },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigurationError(
      `${who}: baseURL must be an http(s) URL; got ${JSON.stringify(maskCredentials(baseURL))}.`,
      "baseURL",
      maskCredentials(baseURL),
    );
  if (url.username || url.password)
    throw new ConfigurationError(
      `${who}: baseURL must not hold a user name or password (fetch refuses such URLs); send credentials in \`headers\`, e.g. { authorization: "Bearer …" }.`,
      "baseURL",
      maskCredentials(baseURL),
    );
  const query = url.searchParams;
  const path = url.pathname === "/" ? (typeof serverPath === "string" ? serverPath : serverPath()) || "/" : url.pathname;
  const root = new URL(url.origin + path.replace(/\/?$/, "/"));
  return { root, query };
}

/** Header names and values fetch accepts; a bad one fails here, naming the header but not its value (a key). */
function checkedHeaders(who: string, headers: Readonly<Record<string, string>> | undefined): [string, string][] {
  const checked: [string, string][] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    try {
      new Headers().set(name, value);
    } catch (error) {
      // `received` is the header's name only: its value may be a key.
      throw new ConfigurationError(
        `${who}: header ${JSON.stringify(name)} has a name or value fetch cannot send (a line break, or a character outside Latin-1?).`,
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

/**
 * The endpoint of the OpenAPI document a request is for. A request none has is a made-up one:
 * say so, and what the path does take. A body for an endpoint that takes a type the tool cannot
 * make (a file upload) is refused too, as `openApiTools` refuses such an operation.
 */
export function checkEndpoint(endpoints: readonly OpenApiEndpoint[], method: string, pathname: string, withBody = false): OpenApiEndpoint {
  const onPath = endpoints.filter((endpoint) => endpoint.matches(pathname));
  const found = onPath.find((endpoint) => endpoint.method === method);
  if (found?.unsupportedBody !== undefined && withBody)
    throw new Error(`The API's ${method} ${found.path} takes a ${found.unsupportedBody} body, which this tool cannot send.`);
  if (found) return found;
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
