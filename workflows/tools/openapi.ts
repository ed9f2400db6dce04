/**
 * An OpenAPI 3 document read as what a model needs to call the API through one REST tool: a
 * line per endpoint (method, path, summary, query parameters, body fields), far fewer tokens
 * than a tool spec per endpoint, and a check that a request names one of those endpoints, so
 * a made-up endpoint is answered with the real ones instead of being sent.
 */

/** The parts of an OpenAPI 3 document read here (the rest is ignored). */
export interface OpenApiDocument {
  readonly openapi?: string;
  readonly info?: { readonly title?: string; readonly description?: string };
  readonly paths: Readonly<Record<string, Readonly<Record<string, OpenApiOperation | unknown>>>>;
  readonly components?: { readonly schemas?: Readonly<Record<string, OpenApiSchema>> };
}

export interface OpenApiOperation {
  readonly summary?: string;
  readonly description?: string;
  readonly parameters?: readonly { readonly name: string; readonly in: string; readonly required?: boolean; readonly schema?: OpenApiSchema }[];
  readonly requestBody?: { readonly content?: Readonly<Record<string, { readonly schema?: OpenApiSchema }>> };
}

export interface OpenApiSchema {
  readonly $ref?: string;
  readonly type?: string;
  readonly properties?: Readonly<Record<string, OpenApiSchema>>;
  readonly required?: readonly string[];
  readonly items?: OpenApiSchema;
  readonly enum?: readonly unknown[];
}

/** One endpoint: its method, its path template (`/api/users/{id}`) and its line for the model. */
export interface OpenApiEndpoint {
  readonly method: string;
  readonly path: string;
  readonly line: string;
  readonly matches: (pathname: string) => boolean;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

/**
 * The endpoints of `document`, in its order.
 * @example
 * openApiEndpoints(spec).map((e) => e.line); // ["GET /api/users — List users. Query: page (integer)", …]
 */
export function openApiEndpoints(document: OpenApiDocument): OpenApiEndpoint[] {
  if (typeof document !== "object" || document === null || typeof document.paths !== "object" || document.paths === null) {
    throw new TypeError("restApiTool: openApi must be an OpenAPI 3 document (a parsed JSON or YAML object with `paths`).");
  }
  const endpoints: OpenApiEndpoint[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [key, value] of Object.entries(item ?? {})) {
      if (!METHODS.includes(key) || typeof value !== "object" || value === null) continue;
      const operation = value as OpenApiOperation;
      const method = key.toUpperCase();
      const pattern = new RegExp(`^${path.split(/\{[^}]+\}/).map(escapeRegExp).join("[^/]+")}/?$`);
      endpoints.push({ method, path, line: describeOperation(document, method, path, operation), matches: (pathname) => pattern.test(pathname) });
    }
  }
  return endpoints;
}

/**
 * The description of a REST tool for `document`: its title and description, then a line per endpoint.
 * @example describeOpenApi(spec); // "The HR API.\nEndpoints:\nGET /api/users — List users. Query: page (integer)\n…"
 */
export function describeOpenApi(document: OpenApiDocument, endpoints = openApiEndpoints(document)): string {
  const about = [document.info?.title, document.info?.description].filter((text) => typeof text === "string" && text.trim() !== "").map((text) => oneLine(text as string));
  return [...about, "Endpoints (path parameters in braces):", ...endpoints.map((endpoint) => endpoint.line)].join("\n");
}

function describeOperation(document: OpenApiDocument, method: string, path: string, operation: OpenApiOperation): string {
  const parts = [`${method} ${path}`];
  const summary = operation.summary ?? operation.description;
  if (summary) parts.push(`— ${oneLine(summary)}`);
  const query = (operation.parameters ?? []).filter((parameter) => parameter.in === "query");
  if (query.length > 0) parts.push(`Query: ${query.map((parameter) => `${parameter.name}${parameter.required ? "" : "?"} (${typeName(document, parameter.schema)})`).join(", ")}.`);
  const body = resolve(document, operation.requestBody?.content?.["application/json"]?.schema);
  if (body?.properties) {
    const required = new Set(body.required ?? []);
    parts.push(`Body: { ${Object.entries(body.properties).map(([name, schema]) => `${name}${required.has(name) ? "" : "?"}: ${typeName(document, schema)}`).join(", ")} }.`);
  }
  return parts.join(" ");
}

function typeName(document: OpenApiDocument, schema: OpenApiSchema | undefined): string {
  const resolved = resolve(document, schema);
  if (!resolved) return "any";
  if (resolved.enum) return resolved.enum.map((value) => JSON.stringify(value)).join(" | ");
  if (resolved.type === "array") return `${typeName(document, resolved.items)}[]`;
  return resolved.type ?? (resolved.properties ? "object" : "any");
}

/** A schema with a local `$ref` (`#/components/schemas/User`) followed, once. */
function resolve(document: OpenApiDocument, schema: OpenApiSchema | undefined): OpenApiSchema | undefined {
  const name = schema?.$ref?.match(/^#\/components\/schemas\/(.+)$/)?.[1];
  return name === undefined ? schema : document.components?.schemas?.[name];
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
