/**
 * An OpenAPI 3 document read as what a model needs to call the API through one REST tool: a
 * line per endpoint (method, path, summary, query parameters, body fields), far fewer tokens
 * than a tool spec per endpoint, and a check that a request names one of those endpoints, so
 * a made-up endpoint is answered with the real ones instead of being sent.
 */
import { ConfigurationError } from "../../src/index.ts";
import { isRecord } from "../../src/core/internal.ts";
import { deepObjectFields, requestBodyType } from "./form-body.ts";
import { toolHeaderNames } from "./header-parameters.ts";
import type { HeaderParameter } from "./header-parameters.ts";
import { pathTemplateMatcher } from "./path-template.ts";

/** An OpenAPI 3 document, parsed from JSON or YAML; only `openapi`, `info`, `servers`, `paths` and `components` are read. */
export interface OpenApiDocument {
  readonly openapi?: string;
  readonly swagger?: string;
  readonly info?: { readonly title?: string; readonly description?: string; readonly [key: string]: unknown };
  readonly servers?: readonly { readonly url?: string; readonly [key: string]: unknown }[];
  readonly paths: { readonly [path: string]: unknown };
  readonly components?: { readonly [kind: string]: unknown };
  readonly [key: string]: unknown;
}

/** One endpoint: its method, its path template (`/api/users/{id}`) and its line for the model. */
export interface OpenApiEndpoint {
  readonly method: string;
  readonly path: string;
  readonly line: string;
  /** Whether a request path (under the API root, percent-encoded as sent) is this endpoint's. */
  readonly matches: (pathname: string) => boolean;
  /** Its body is sent as a form, these fields in brackets (`a[b]=c`). */
  readonly form?: ReadonlySet<string>;
  /** The body type it takes that a tool cannot make (`multipart/form-data`), if it takes no JSON or form. */
  readonly unsupportedBody?: string;
  /** Its header parameters (`in: header`) a call may set: not one the tool sets itself. */
  readonly headers?: readonly HeaderParameter[];
}

type Json = { readonly [key: string]: unknown };

const METHODS = ["get", "post", "put", "patch", "delete"];
const MAX_SUMMARY = 120; // characters of an operation's summary (or description) on its line
const MAX_DEPTH = 4; // $ref hops and nested types followed, so recursive schemas end

/**
 * Schema nodes (objects, properties, array items, variants) read for one operation once its
 * `$ref`s are followed, by default. A real operation takes a few hundred at most; a document
 * whose schemas refer to each other many times over (a 1 KB one can) would otherwise expand
 * into millions, taking minutes and all the memory there is.
 */
export const DEFAULT_MAX_SCHEMA_NODES = 10_000;

/** An operation's schemas, `$ref`s followed, are larger than `maxSchemaNodes`. @example `if (err instanceof SchemaTooLargeError) console.error(err.message)` */
export class SchemaTooLargeError extends ConfigurationError {
  override name = "SchemaTooLargeError";
}

/** Counts the schema nodes read for one operation, and stops at the limit or at a `$ref` it cannot follow. */
export interface SchemaBudget {
  /** Counts one node; a `SchemaTooLargeError` past the limit. */
  spend(): void;
  /** A `ConfigurationError` naming the operation and `ref`, which is not in the document. */
  unresolved(ref: string): never;
}

/**
 * A budget of `limit` schema nodes for `method path`.
 * @example const budget = schemaBudget("openApiTools", "GET", "/users", 10_000); budget.spend();
 */
export function schemaBudget(who: string, method: string, path: string, limit: number): SchemaBudget {
  let left = limit;
  return {
    spend() {
      if (--left >= 0) return;
      throw new SchemaTooLargeError(
        `${who}: openApi: the schemas of ${method} ${path} take more than ${limit.toLocaleString("en-US")} nodes once their $refs are followed (maxSchemaNodes; the default is ${DEFAULT_MAX_SCHEMA_NODES.toLocaleString("en-US")}). Schemas that refer to each other many times over expand like this; simplify them, or raise maxSchemaNodes if the operation really is this large.`,
        "maxSchemaNodes",
        limit,
      );
    },
    unresolved(ref) {
      const fix = ref.startsWith("#")
        ? "which the document does not have (or a chain of $refs that never ends). Fix the $ref"
        : "in another file. Bundle the document's files into one first (e.g. `npx @redocly/cli bundle openapi.yaml -o bundled.json`)";
      throw new ConfigurationError(
        `${who}: openApi: ${method} ${path} refers to ${JSON.stringify(ref)}, ${fix}, or leave the operation out with include.`,
        "openApi",
        ref,
      );
    },
  };
}

/** `limit` when it is a usable `maxSchemaNodes`, else a `ConfigurationError`. */
function checkMaxSchemaNodes(who: string, limit: number): void {
  if (!Number.isInteger(limit) || limit < 1)
    throw new ConfigurationError(
      `${who}: maxSchemaNodes must be a whole number ≥ 1 (the default is ${DEFAULT_MAX_SCHEMA_NODES.toLocaleString("en-US")}), got ${String(limit)}.`,
      "maxSchemaNodes",
      limit,
    );
}

/**
 * The endpoints of `document`, in its order. `toolHeaders` (lower case) are the headers the tool
 * sets itself, left out of each endpoint's header parameters; default those of a tool without
 * configured `headers` (toolHeaderNames).
 * @example
 * openApiEndpoints(spec).map((e) => e.line); // ["GET /api/users — List users. Query: page? (integer).", …]
 */
export function openApiEndpoints(
  document: OpenApiDocument,
  who = "restApiTool",
  maxSchemaNodes = DEFAULT_MAX_SCHEMA_NODES,
  toolHeaders: ReadonlySet<string> = toolHeaderNames({}),
): OpenApiEndpoint[] {
  checkMaxSchemaNodes(who, maxSchemaNodes);
  if (!isRecord(document) || !isRecord(document.paths)) {
    throw new ConfigurationError(
      `${who}: openApi must be an OpenAPI 3 document: a parsed JSON or YAML object with \`paths\` (parse a YAML text first, e.g. with the yaml package).`,
      "openApi",
      document,
    );
  }
  if (document.swagger !== undefined || (typeof document.openapi === "string" && !document.openapi.startsWith("3."))) {
    throw new ConfigurationError(
      `${who}: openApi must be an OpenAPI 3 document; this one is ${document.swagger ? `Swagger ${document.swagger}` : `OpenAPI ${document.openapi}`}. Convert it to OpenAPI 3 first (e.g. with swagger2openapi).`,
      "openApi",
      document,
    );
  }
  const endpoints: OpenApiEndpoint[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (!isRecord(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    const matches = pathTemplateMatcher(path);
    for (const [key, value] of Object.entries(item)) {
      if (!METHODS.includes(key) || !isRecord(value)) continue;
      const method = key.toUpperCase();
      let line: string;
      let body: ReturnType<typeof requestBodyType>;
      let headers: HeaderParameter[];
      try {
        body = requestBodyType(resolve(document, value.requestBody)?.content);
        const budget = schemaBudget(who, method, path, maxSchemaNodes);
        headers = headerParameters(document, value, shared, toolHeaders, budget);
        line = describeOperation(document, method, path, value, shared, headers, budget);
      } catch (error) {
        if (error instanceof SchemaTooLargeError) throw error;
        throw new ConfigurationError(`${who}: openApi: cannot read ${method} ${path} (the cause says why).`, "openApi", document, { cause: error });
      }
      const content = resolve(document, value.requestBody)?.content;
      endpoints.push({
        method,
        path,
        line,
        matches: (pathname) => matches(safeDecode(pathname)),
        ...(body?.kind === "form" ? { form: deepObjectFields(isRecord(content) ? content[body.mediaType] : undefined) } : {}),
        ...(body?.kind === "unsupported" ? { unsupportedBody: body.mediaType } : {}),
        ...(headers.length > 0 ? { headers } : {}),
      });
    }
  }
  if (endpoints.length === 0)
    throw new ConfigurationError(`${who}: openApi has no endpoints (no get, post, put, patch or delete under \`paths\`).`, "openApi", document);
  return endpoints;
}

/**
 * The endpoint lines of `document`, after its title and description, for the model to choose from.
 * @example describeOpenApi(spec); // "HR API\nEndpoints (path parameters in braces):\nGET /api/users — List users. Query: page? (integer).\n…"
 */
export function describeOpenApi(document: OpenApiDocument, endpoints = openApiEndpoints(document)): string {
  const about = [document.info?.title, document.info?.description]
    .filter((text): text is string => typeof text === "string" && text.trim() !== "")
    .map((text) => shorten(oneLine(text), 300));
  return [...about, "Endpoints (path parameters in braces):", ...endpoints.map((endpoint) => endpoint.line)].join("\n");
}

/**
 * The path of the document's first server (`/api/v3` of `servers: [{ url: "/api/v3" }]` or of
 * `https://x.com/api/v3`): where its paths are rooted, "" when at the root. Server variables
 * (`https://{region}.x.com/{version}`) take their `default`, as OpenAPI says a client does. A
 * variable without one (the spec requires it; real documents lack it) in the path is a
 * `ConfigurationError` naming it: call this only when the path is needed, i.e. when `baseURL`
 * has none. One in the scheme or host does not matter, as `baseURL` gives those.
 * @example openApiServerPath({ openapi: "3.0.3", servers: [{ url: "https://{tenant}.x.com/api" }], paths: {} }); // "/api"
 */
export function openApiServerPath(document: OpenApiDocument, who = "restApiTool"): string {
  const server = document.servers?.[0];
  if (typeof server?.url !== "string") return "";
  const variables = isRecord(server.variables) ? server.variables : {};
  const url = server.url.replace(/\{([^}]*)\}/g, (whole, name: string) => {
    const variable = Object.hasOwn(variables, name) ? variables[name] : undefined;
    return isRecord(variable) && typeof variable.default === "string" ? variable.default : whole;
  });
  // The path is what follows the scheme and host, which may hold variables that URL cannot parse.
  const path = url.replace(/^(?:[^:/?#]*:)?\/\/[^/?#]*/, "");
  const missing = /\{([^}]*)\}/.exec(path)?.[1];
  if (missing !== undefined)
    throw new ConfigurationError(
      `${who}: openApi: the server URL ${JSON.stringify(server.url)} has the variable {${missing}} without a default, so the path the API's paths are under is not known. Give it in baseURL (e.g. "https://api.example.com/v1"), which is then used instead.`,
      "baseURL",
      server.url,
    );
  try {
    return new URL(path, "http://server.invalid").pathname.replace(/\/+$/, "");
  } catch {
    return "";
  }
}

/** The header parameters of an operation (its own over its path's, by name in any case) that are not `toolHeaders`. */
function headerParameters(
  document: OpenApiDocument,
  operation: Json,
  shared: readonly unknown[],
  toolHeaders: ReadonlySet<string>,
  budget: SchemaBudget,
): HeaderParameter[] {
  const own = Array.isArray(operation.parameters) ? operation.parameters : [];
  const byName = new Map<string, HeaderParameter>();
  for (const parameter of [...shared, ...own].map((p) => resolve(document, p))) {
    if (!isRecord(parameter) || parameter.in !== "header" || typeof parameter.name !== "string" || toolHeaders.has(parameter.name.toLowerCase())) continue;
    byName.set(parameter.name.toLowerCase(), {
      name: parameter.name,
      required: parameter.required === true,
      type: typeName(document, parameter.schema, 0, budget),
    });
  }
  return [...byName.values()];
}

function describeOperation(
  document: OpenApiDocument,
  method: string,
  path: string,
  operation: Json,
  shared: readonly unknown[],
  headers: readonly HeaderParameter[],
  budget: SchemaBudget,
): string {
  const parts = [`${method} ${path}`];
  const summary = [operation.summary, operation.description].find((text): text is string => typeof text === "string" && text.trim() !== "");
  if (summary) parts.push(`— ${sentence(shorten(oneLine(summary), MAX_SUMMARY))}`);
  const own = Array.isArray(operation.parameters) ? operation.parameters : [];
  const byName = new Map<string, Json>();
  for (const parameter of [...shared, ...own].map((p) => resolve(document, p))) {
    if (isRecord(parameter) && typeof parameter.name === "string") byName.set(`${String(parameter.in)}:${parameter.name}`, parameter);
  }
  const query = [...byName.values()].filter((parameter) => parameter.in === "query");
  if (query.length > 0)
    parts.push(`Query: ${query.map((p) => `${String(p.name)}${p.required === true ? "" : "?"} (${typeName(document, p.schema, 0, budget)})`).join(", ")}.`);
  if (headers.length > 0) parts.push(`Headers: ${headers.map((h) => `${h.name}${h.required ? "" : "?"} (${h.type})`).join(", ")}.`);
  const content = resolve(document, operation.requestBody)?.content;
  const body = requestBodyType(content);
  if (body && isRecord(content)) {
    const schema = body.kind === "unsupported" ? undefined : objectSchema(document, (content[body.mediaType] as Json | undefined)?.schema, 0, budget);
    if (schema?.properties) {
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      parts.push(
        `Body: { ${Object.entries(schema.properties)
          .map(([name, field]) => `${name}${required.has(name) ? "" : "?"}: ${typeName(document, field, 1, budget)}`)
          .join(", ")} }.`,
      );
    } else if (body.kind === "unsupported") {
      parts.push(`(Takes ${body.mediaType}, which this tool cannot send.)`);
    }
  }
  return parts.join(" ");
}

/** The properties and required names of an object schema, `allOf` parts merged. */
function objectSchema(
  document: OpenApiDocument,
  schema: unknown,
  depth: number,
  budget: SchemaBudget,
): { properties?: Json; required?: unknown[] } | undefined {
  const resolved = resolve(document, schema);
  if (!resolved) return undefined;
  budget.spend(); // before the depth test: a node cut off was still read
  if (depth > MAX_DEPTH) return undefined;
  if (Array.isArray(resolved.allOf)) {
    const parts = resolved.allOf.map((part) => objectSchema(document, part, depth + 1, budget)).filter((part) => part !== undefined);
    return { properties: Object.assign({}, ...parts.map((part) => part.properties)), required: parts.flatMap((part) => part.required ?? []) };
  }
  return isRecord(resolved.properties) ? { properties: resolved.properties, required: Array.isArray(resolved.required) ? resolved.required : [] } : undefined;
}

function typeName(document: OpenApiDocument, schema: unknown, depth: number, budget: SchemaBudget): string {
  const resolved = resolve(document, schema);
  if (!resolved) return "any";
  budget.spend(); // before the depth test: a node cut off was still read
  if (depth > MAX_DEPTH) return "any";
  if (Array.isArray(resolved.enum)) return resolved.enum.map((value) => JSON.stringify(value)).join(" | ");
  const variants = resolved.oneOf ?? resolved.anyOf;
  if (Array.isArray(variants)) return variants.map((variant) => typeName(document, variant, depth + 1, budget)).join(" | ");
  const type = Array.isArray(resolved.type) ? resolved.type.join(" | ") : resolved.type;
  if (type === "array") {
    const items = typeName(document, resolved.items, depth + 1, budget);
    return /[ |]/.test(items) ? `(${items})[]` : `${items}[]`;
  }
  if (typeof type === "string") return type;
  return isRecord(resolved.properties) || Array.isArray(resolved.allOf) ? "object" : "any";
}

/**
 * `value`, or what its local `$ref` (`#/components/schemas/User`, `#/components/parameters/Page`, …) points to, followed a few hops.
 * @example resolve(spec, { $ref: "#/components/schemas/User" }); // { type: "object", properties: { … } }
 */
export function resolve(document: OpenApiDocument, value: unknown): Json | undefined {
  let current = value;
  for (let hops = 0; hops <= MAX_DEPTH; hops++) {
    if (!isRecord(current)) return undefined;
    const ref = current.$ref;
    if (typeof ref !== "string") return current;
    current = pointee(document, ref);
  }
  return undefined;
}

/** What a local `$ref`'s JSON pointer (`#/paths/~1users/get/…`, `~1` for `/`, `~0` for `~`) points to in `document`. */
function pointee(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = document;
  for (const token of ref.slice(2).split("/")) {
    let key = token;
    try {
      key = decodeURIComponent(token);
    } catch {
      // not percent-encoded: the token as it is
    }
    key = key.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const firstSentence = /^.+?[.!?](?=\s|$)/.exec(text)?.[0];
  return firstSentence && firstSentence.length <= max ? firstSentence : `${text.slice(0, max - 1).trimEnd()}…`;
}

function sentence(text: string): string {
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}

function safeDecode(pathname: string): string {
  try {
    return decodeURI(pathname);
  } catch {
    return pathname;
  }
}
