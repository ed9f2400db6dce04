/**
 * The credentials an OpenAPI document says its operations need (`components.securitySchemes`
 * and `security`, or a required `Authorization` header parameter), checked against what
 * `openApiTools` is configured to send. Credentials are never a model's arguments: they come
 * from the tool's `headers` (or `baseURL`'s query), and an operation whose credentials are not
 * configured is refused when the tools are made, saying what to configure, instead of failing
 * at the API with a 401 on every call, which neither the model nor the user reading it can fix.
 */
import { ConfigurationError, isRecord } from "../../src/core/internal.ts";
import { resolve } from "./openapi.ts";
import type { OpenApiDocument } from "./openapi.ts";

/** One credential a request carries: a header (with a scheme's prefix, `Bearer `), a query parameter or a cookie. */
interface Credential {
  readonly in: "header" | "query" | "cookie";
  readonly name: string;
  /** What the header's value starts with (`Bearer `, `Basic `), for an HTTP scheme. */
  readonly prefix?: string;
  /** Where it comes from, for the message: `the security scheme "bearerAuth" (HTTP bearer)`. */
  readonly source: string;
}

/**
 * What `openApiTools` sends with every request: its `headers` (names in any case) and
 * `baseURL`'s query.
 * @example const configured: ConfiguredCredentials = { headers: { authorization: "Bearer …" }, query: new URLSearchParams("api_key=…") };
 */
export interface ConfiguredCredentials {
  readonly headers: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

/**
 * The names of the headers (lower case) and query parameters the document's security schemes
 * carry credentials in, which are never a model's arguments even where the document also
 * declares them as parameters.
 * @example credentialNames(document).headers.has("x-api-key"); // true for an apiKey scheme in the X-Api-Key header
 */
export function credentialNames(document: OpenApiDocument): { headers: ReadonlySet<string>; query: ReadonlySet<string> } {
  const headers = new Set<string>();
  const query = new Set<string>();
  for (const credential of schemes(document).values()) {
    if (credential?.in === "header") headers.add(credential.name.toLowerCase());
    else if (credential?.in === "query") query.add(credential.name);
  }
  return { headers, query };
}

/**
 * Refuses, in one `ConfigurationError`, the operations whose credentials `configured` does not
 * send (none of their `security` alternatives is met, or a required `Authorization` header
 * parameter has no configured value), grouped by what to configure, with the `include` that
 * leaves them out. Values are never quoted: they are secrets.
 * @example
 * checkCredentials("openApiTools", document, [{ method: "GET", path: "/api/users", operation }], { headers: {}, query: new URLSearchParams() });
 * // ConfigurationError: openApiTools: headers: GET /api/users needs credentials that are not configured: … Send them with headers: { authorization: "Bearer …" } …
 */
export function checkCredentials(
  who: string,
  document: OpenApiDocument,
  operations: readonly { method: string; path: string; operation: { readonly [key: string]: unknown }; headerParameters: readonly unknown[] }[],
  configured: ConfiguredCredentials,
): void {
  const known = schemes(document);
  const headers = new Map(Object.entries(configured.headers).map(([name, value]) => [name.toLowerCase(), value]));
  const problems = new Map<string, string[]>(); // what to configure → the operations that need it
  for (const { method, path, operation, headerParameters } of operations) {
    const alternatives = requirements(document, operation, known);
    const explicit = headerParameters
      .map((parameter) => resolve(document, parameter))
      .filter((p) => isRecord(p) && p.in === "header" && p.required === true && typeof p.name === "string" && p.name.toLowerCase() === "authorization")
      .map((p): Credential => ({ in: "header", name: String(p?.name), source: `the required header parameter ${JSON.stringify(p?.name)}` }));
    // An explicit Authorization parameter is needed whichever security alternative is used.
    const needed = (alternatives.length > 0 ? alternatives : [[]]).map((alternative) => [...alternative, ...explicit]);
    if (needed.some((alternative) => alternative.every((credential) => met(credential, headers, configured.query) === undefined))) continue;
    const problem = describeProblem(needed, headers, configured.query);
    problems.set(problem, [...(problems.get(problem) ?? []), `${method} ${path}`]);
  }
  if (problems.size === 0) return;
  const all = [...problems.values()].flat();
  const parts = [...problems].map(([problem, refused]) => `${listed(refused)} ${refused.length === 1 ? "needs" : "need"} ${problem}`);
  throw new ConfigurationError(
    `${who}: headers: ${parts.join("\n")}\n` +
      `Credentials are never the model's arguments: configure them here. Or leave ${all.length === 1 ? "the operation" : "those operations"} out with include: (method, path) => !${JSON.stringify(all)}.includes(\`\${method} \${path}\`); or, if something on the way to the API adds them (a gateway, a proxy), pass checkCredentials: false.`,
    "headers",
    all,
  );
}

function listed(operations: readonly string[]): string {
  return operations.length <= 3 ? operations.join(", ") : `${operations.slice(0, 3).join(", ")} and ${operations.length - 3} other operations`;
}

/** Why `credential` is not sent (`undefined`: it is): not configured, or configured without its scheme's prefix. */
function met(credential: Credential, headers: ReadonlyMap<string, string>, query: URLSearchParams): "missing" | "prefix" | undefined {
  if (credential.in === "query") return query.has(credential.name) ? undefined : "missing";
  if (credential.in === "cookie") {
    const cookies = (headers.get("cookie") ?? "").split(";").map((pair) => pair.trim().split("=", 1)[0]);
    return cookies.includes(credential.name) ? undefined : "missing";
  }
  const value = headers.get(credential.name.toLowerCase());
  if (value === undefined) return "missing";
  return credential.prefix === undefined || value.toLowerCase().startsWith(credential.prefix.toLowerCase()) ? undefined : "prefix";
}

/** What is wrong with the best-met alternative (or each, when several), and what to configure instead. */
function describeProblem(alternatives: readonly (readonly Credential[])[], headers: ReadonlyMap<string, string>, query: URLSearchParams): string {
  const each = alternatives.map((alternative) => {
    const unmet = alternative.filter((credential) => met(credential, headers, query) !== undefined);
    const why = unmet.map((credential) => {
      const option = configure(credential);
      return met(credential, headers, query) === "prefix"
        ? `${credential.source}, whose ${credential.name} header is "${credential.prefix}<credentials>": the configured ${credential.name.toLowerCase()} header does not start with "${credential.prefix}". Send ${option}`
        : `${credential.source}, which is not configured. Send ${option}`;
    });
    return why.join("; and ");
  });
  return each.length === 1 ? `credentials: ${each[0] ?? ""}.` : `credentials for one of these: ${each.map((text, i) => `(${i + 1}) ${text}`).join("; ")}.`;
}

/** The option that sends `credential`, as the user writes it. */
function configure(credential: Credential): string {
  if (credential.in === "query") return `it in baseURL's query, e.g. baseURL: "https://api.example.com/?${credential.name}=…"`;
  if (credential.in === "cookie") return `it with headers: { cookie: "${credential.name}=…" }`;
  const name = /^[A-Za-z_$][\w$]*$/.test(credential.name) ? credential.name.toLowerCase() : JSON.stringify(credential.name);
  return `it with headers: { ${name}: "${credential.prefix ?? ""}…" }`;
}

/** The operation's security alternatives (its own `security`, else the document's), each the credentials it takes. */
function requirements(
  document: OpenApiDocument,
  operation: { readonly [key: string]: unknown },
  known: ReadonlyMap<string, Credential | undefined>,
): Credential[][] {
  const security = Array.isArray(operation.security) ? operation.security : Array.isArray(document.security) ? document.security : [];
  const alternatives: Credential[][] = [];
  for (const requirement of security) {
    if (!isRecord(requirement)) continue;
    // A scheme the document does not define, or one a request cannot carry (mutual TLS), is not checked.
    alternatives.push(Object.keys(requirement).flatMap((name) => known.get(name) ?? []));
  }
  return alternatives;
}

/** The document's security schemes by name, each as the credential a request carries (`undefined`: one not checked). */
function schemes(document: OpenApiDocument): Map<string, Credential | undefined> {
  const found = new Map<string, Credential | undefined>();
  const declared = isRecord(document.components) && isRecord(document.components.securitySchemes) ? document.components.securitySchemes : {};
  for (const [name, value] of Object.entries(declared)) {
    const scheme = resolve(document, value);
    const label = `the security scheme ${JSON.stringify(name)}`;
    if (scheme?.type === "apiKey" && typeof scheme.name === "string" && (scheme.in === "header" || scheme.in === "query" || scheme.in === "cookie")) {
      found.set(name, { in: scheme.in, name: scheme.name, source: `${label} (an API key in the ${scheme.in} ${JSON.stringify(scheme.name)})` });
    } else if (scheme?.type === "http" && typeof scheme.scheme === "string") {
      const kind = scheme.scheme.toLowerCase();
      const prefix = kind === "bearer" ? "Bearer " : kind === "basic" ? "Basic " : undefined;
      found.set(name, { in: "header", name: "Authorization", ...(prefix ? { prefix } : {}), source: `${label} (HTTP ${kind})` });
    } else if (scheme?.type === "oauth2" || scheme?.type === "openIdConnect") {
      found.set(name, { in: "header", name: "Authorization", prefix: "Bearer ", source: `${label} (${String(scheme.type)}: an access token)` });
    } else {
      found.set(name, undefined);
    }
  }
  return found;
}
