/**
 * An OpenAPI operation's header parameters (`in: header`: a tenant, `If-Match`) as arguments a
 * model fills, for both REST tools. Headers the tool sets itself are never the model's: its
 * credentials come from its configuration, and a header the model set could swap them, the
 * body's type or the host the request reaches.
 */

// OpenAPI says a header parameter named Accept, Content-Type or Authorization is ignored;
// the rest are the connection's, or carry credentials (Cookie, Proxy-Authorization).
const TOOL_HEADERS = [
  "accept",
  "authorization",
  "content-type",
  "content-length",
  "cookie",
  "host",
  "connection",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "expect",
  "te",
  "trailer",
  "proxy-authorization",
];

/**
 * One header parameter an endpoint declares.
 * @example const tenant: HeaderParameter = { name: "X-Tenant-Id", required: true, type: "string" };
 */
export interface HeaderParameter {
  readonly name: string;
  readonly required: boolean;
  /** Its schema's type, for the model's line (`string`, `integer`, …). */
  readonly type: string;
}

/**
 * Lower-case names of the headers a REST tool sends itself, which no call may set: the fixed
 * ones (`Authorization`, `Cookie`, `Host`, `Content-Length`, …), those of its configured
 * `headers` and its idempotency key's.
 * @example toolHeaderNames({ headers: { "X-Api-Key": "…" } }).has("x-api-key"); // true
 */
export function toolHeaderNames(options: {
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly idempotencyKeyHeader?: string | false | undefined;
}): ReadonlySet<string> {
  const names = new Set([...TOOL_HEADERS, ...Object.keys(options.headers ?? {}).map((name) => name.toLowerCase())]);
  if (options.idempotencyKeyHeader !== false) names.add((options.idempotencyKeyHeader ?? "Idempotency-Key").toLowerCase());
  return names;
}

/**
 * An argument's value as a header sends it: text as it is, a list joined by commas (OpenAPI's
 * `simple` style), anything else as its JSON. A value fetch cannot send (a line break) is an
 * error the model can correct.
 * @example headerValue("If-Match", ['"v7"', '"v8"']); // '"v7","v8"'
 */
export function headerValue(name: string, value: unknown): string {
  const text =
    typeof value === "string"
      ? value
      : Array.isArray(value)
        ? value.map((item) => (typeof item === "string" ? item : JSON.stringify(item))).join(",")
        : JSON.stringify(value);
  try {
    new Headers().set(name, text);
  } catch {
    throw new Error(`The header ${name} cannot carry ${JSON.stringify(text)}: a header value is one line of text (Latin-1). Send it without line breaks.`);
  }
  return text;
}

/**
 * The headers a `restApiTool` call sends for the endpoint it asks: each of `given` (by header
 * name, any case) that the endpoint declares and the tool does not set. A header it does not
 * declare, and a required one left out, are errors that say what to send instead, and nothing
 * is sent.
 * @example
 * const endpoint = { method: "PUT", path: "/api/echo", headers: [{ name: "X-Tenant-Id", required: true, type: "string" }] };
 * headerArguments(endpoint, { "x-tenant-id": "acme" }, toolHeaderNames({})); // [["X-Tenant-Id", "acme"]]
 */
export function headerArguments(
  endpoint: { readonly method: string; readonly path: string; readonly headers?: readonly HeaderParameter[] | undefined },
  given: Readonly<Record<string, unknown>>,
  toolHeaders: ReadonlySet<string>,
): [string, string][] {
  const declared = new Map((endpoint.headers ?? []).filter((header) => !toolHeaders.has(header.name.toLowerCase())).map((h) => [h.name.toLowerCase(), h]));
  const takes = declared.size > 0 ? `it takes ${[...declared.values()].map((h) => h.name).join(", ")}` : "it takes none: leave headers out";
  const sent: [string, string][] = [];
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined || value === null) continue;
    const header = declared.get(name.toLowerCase());
    if (!header) throw new Error(`The API's ${endpoint.method} ${endpoint.path} has no header parameter ${JSON.stringify(name)}; ${takes}.`);
    sent.push([header.name, headerValue(header.name, value)]);
  }
  const missing = [...declared.values()].filter((header) => header.required && !sent.some(([name]) => name === header.name));
  if (missing.length > 0)
    throw new Error(
      `The API's ${endpoint.method} ${endpoint.path} requires the header ${missing.map((h) => JSON.stringify(h.name)).join(", ")}: send it in headers, e.g. headers: { ${missing.map((h) => `${JSON.stringify(h.name)}: …`).join(", ")} }.`,
    );
  return sent;
}
