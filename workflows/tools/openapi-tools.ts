/**
 * An OpenAPI 3 document as one tool per operation: the model reads each operation's name,
 * summary and argument schema (path, query and header parameters by name, the JSON body as `body`),
 * and the tool runner checks its arguments against that schema before anything is sent. More
 * tokens per tool than `restApiTool`'s single tool, so pair a large API with the agent's
 * `maxToolsPerCall`, which sends the model only the operations relevant to the conversation.
 */
import type { JSONValue } from "@llamaindex/core/global";
import type { ToolMetadata } from "@llamaindex/core/llms";
import type { FunctionTool } from "@llamaindex/core/tools";
import { ConfigurationError, isRecord } from "../../src/core/internal.ts";
import type { ToolCallDetails } from "../../src/tools/current-tool-call.ts";
import { providerArgumentNames } from "../../src/tools/argument-names.ts";
import { tool } from "../../src/tools/tool.ts";
import { annotateTool } from "../../src/tools/tool-annotations.ts";
import { explainUnknownArguments } from "../../src/tools/unknown-arguments.ts";
import { DEFAULT_MAX_SCHEMA_NODES, openApiEndpoints, openApiServerPath, oneLine, resolve, schemaBudget, shorten } from "./openapi.ts";
import type { OpenApiDocument, SchemaBudget } from "./openapi.ts";
import { checkHonoursKey, markOperationTool, methodAnnotations, operationPath } from "./rest-calls.ts";
import type { OperationRequest } from "./rest-calls.ts";
import { deepObjectFields, requestBodyType } from "./form-body.ts";
import { headerValue, toolHeaderNames } from "./header-parameters.ts";
import { METHODS, restClient } from "./rest-request.ts";
import { checkCredentials, credentialNames } from "./security-schemes.ts";
import type { RestApiResult, RestMethod } from "./rest-request.ts";

/**
 * Options of {@link openApiTools}: those of `restApiTool` that say how to reach the API.
 * @example const options: OpenApiToolsOptions = { openApi, baseURL: "https://api.example.com", headers: { authorization: "Bearer …" } };
 */
export interface OpenApiToolsOptions {
  /** The API's OpenAPI 3 document, parsed from JSON or YAML. */
  readonly openApi: OpenApiDocument;
  /** The API root the document's paths are under; a `baseURL` without a path takes the document's first server path. */
  readonly baseURL: string;
  /**
   * Sent with every request (say, an `authorization` header); never shown to the model, and hidden
   * wherever the API repeats them. The credentials the document's security schemes ask for go
   * here (an API key in the query goes in `baseURL`'s): an operation whose credentials are not
   * configured is refused with a `ConfigurationError` naming the scheme and what to send.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Whether an operation whose credentials `headers` (or `baseURL`'s query) do not send is
   * refused when the tools are made. `false` for an API whose credentials are added on the way
   * (a gateway, a proxy, a service mesh) or whose `security` is stricter than the server: the
   * tools are made, and the schemes' headers and query parameters are still never arguments.
   * Default `true`.
   */
  readonly checkCredentials?: boolean;
  /** Other values the model must never read: hidden like the headers' values. */
  readonly secrets?: readonly string[];
  /** The header carrying the call's idempotency key on every request but a GET; `false` sends none. Default `Idempotency-Key`. */
  readonly idempotencyKeyHeader?: string | false;
  /**
   * The API applies a request repeated with the same idempotency key once: a POST or PATCH whose
   * outcome an earlier attempt did not record is then sent again with its key, as a GET, PUT or
   * DELETE is; without it, the model is told that call's outcome is unknown. Default `false`.
   */
  readonly honoursIdempotencyKey?: boolean;
  /** Seconds a request may take, its body included. Default 30. */
  readonly timeout?: number;
  /** Characters of a response body the model reads. Default 20,000. */
  readonly maxBodyChars?: number;
  /** Which operations become tools, by method and path template (`"DELETE"`, `"/api/users/{id}"`). Default: all. */
  readonly include?: (method: string, path: string) => boolean;
  /**
   * Schema nodes one operation's parameters and body may take once their `$ref`s are followed;
   * a larger one is refused with a `SchemaTooLargeError` naming it. Default 10,000.
   */
  readonly maxSchemaNodes?: number;
  /**
   * Names of the agent's other tools (say, `calculatorTools`'): an operation of one of these
   * names is named with a number after it (`add_2`), as two operations of one name are, so
   * that no tool hides another. Default: none.
   */
  readonly reservedNames?: Iterable<string>;
}

/**
 * The arguments of an operation tool: its parameters by name, and its JSON body under `body`.
 * @example const args: OperationArguments = { orderId: "A7", body: { amount: 3 } };
 */
export type OperationArguments = Record<string, JSONValue>;

type Json = { readonly [key: string]: unknown };

const MAX_NAME = 64; // OpenAI's limit on tool names
const MAX_DESCRIPTION = 1024; // OpenAI refuses longer tool descriptions
const MAX_DEPTH = 6; // nested schemas inlined before a recursive one is left open
// OpenAPI keywords JSON Schema does not have, or that say nothing about a request.
const DROPPED = new Set(["nullable", "example", "examples", "xml", "discriminator", "externalDocs", "deprecated", "readOnly", "writeOnly"]);

/**
 * Makes one tool per operation of an OpenAPI 3 document. A tool is named after the
 * operation's `operationId` (else its method and path, e.g. `delete_api_users_id`); its
 * description is the method, path, summary and description. Requests stay under `baseURL`,
 * redirects are reported, not followed, and `headers` never reach the model, as with
 * `restApiTool`. Use `changesData(tools)` as the agent's `needsApproval` so that a human
 * approves every call that is not a GET.
 * @example
 * const openApi = JSON.parse(await readFile("petstore.json", "utf8"));
 * const tools = openApiTools({ openApi, baseURL: "https://petstore3.swagger.io", headers: { authorization: `Bearer ${process.env.PET_KEY}` } });
 * const agent = new FunctionCallingAgent({ llm, tools, needsApproval: changesData(tools), maxToolsPerCall: 10 });
 */
export function openApiTools(options: OpenApiToolsOptions): FunctionTool<OperationArguments, Promise<RestApiResult>>[] {
  const who = "openApiTools";
  const document = options.openApi;
  const maxSchemaNodes = options.maxSchemaNodes ?? DEFAULT_MAX_SCHEMA_NODES;
  openApiEndpoints(document, who, maxSchemaNodes); // the document's problems, said once, before any tool is made
  const api = restClient({ ...options, who, serverPath: () => openApiServerPath(document, who) });
  const honoursKey = checkHonoursKey(who, options);
  // Credentials are never arguments: the document's security schemes' headers and query
  // parameters are the tool's to send, as Authorization and the configured headers are.
  const credentials = credentialNames(document);
  const toolHeaders = new Set([...toolHeaderNames(options), ...credentials.headers]);
  const credentialArgument = (name: string): string | undefined =>
    toolHeaders.has(name.toLowerCase()) || credentials.query.has(name)
      ? "set by the tool itself (credentials come from its configuration), never by a call: leave it out"
      : undefined;
  const cookieConfigured = Object.keys(options.headers ?? {}).some((name) => name.toLowerCase() === "cookie");
  const names = new Set<string>(options.reservedNames ?? []);
  const tools: FunctionTool<OperationArguments, Promise<RestApiResult>>[] = [];
  // Every operation no tool can be made of is named in one error, so that one `include` leaves them all out.
  const refused: { operation: string; error: ConfigurationError }[] = [];
  const made: Parameters<typeof checkCredentials>[2][number][] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (!isRecord(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const [key, operation] of Object.entries(item)) {
      const method = key.toUpperCase() as RestMethod;
      if (!METHODS.includes(method) || !isRecord(operation) || !(options.include?.(method, path) ?? true)) continue;
      const budget = schemaBudget(who, method, path, maxSchemaNodes);
      let schema: ReturnType<typeof operationSchema>;
      try {
        schema = operationSchema(document, method, path, operation, shared, budget, toolHeaders, credentials.query, cookieConfigured);
      } catch (error) {
        if (!(error instanceof ConfigurationError)) throw error;
        refused.push({ operation: `${method} ${path}`, error });
        continue;
      }
      made.push({ method, path, operation, headerParameters: [...shared, ...(Array.isArray(operation.parameters) ? operation.parameters : [])] });
      const { parameters, request } = schema;
      const formFields = request.form && new Set(request.form.deepObjects);
      const name = uniqueName(operationName(operation, method, path), names);
      const metadata = { name, description: operationDescription(method, path, operation), parameters } as ToolMetadata;
      const send = (input: OperationArguments, _bound?: object, call?: ToolCallDetails): Promise<RestApiResult> =>
        api.send(
          method,
          operationPath(request, input),
          request.bodyArgument === undefined ? undefined : input[request.bodyArgument],
          call?.idempotencyKey,
          undefined,
          {
            headers: operationHeaders(request, input),
            ...(formFields ? { form: formFields } : {}),
          },
        );
      const operationTool = tool(send, metadata as ConstructorParameters<typeof FunctionTool<OperationArguments, Promise<RestApiResult>>>[1]) as FunctionTool<
        OperationArguments,
        Promise<RestApiResult>
      >;
      markOperationTool(operationTool, request);
      explainUnknownArguments(operationTool, credentialArgument);
      tools.push(annotateTool(operationTool, methodAnnotations(method, honoursKey)));
    }
  }
  if (refused.length === 1) throw (refused[0] as (typeof refused)[number]).error;
  if (refused.length > 1) throw operationsRefused(refused);
  if (options.checkCredentials ?? true) checkCredentials(who, document, made, { headers: options.headers ?? {}, query: new URL(options.baseURL).searchParams });
  return tools;
}

/** One error for the operations no tool can be made of: each one's reason, then the `include` that leaves them all out. */
function operationsRefused(refused: readonly { operation: string; error: ConfigurationError }[]): ConfigurationError {
  const operations = refused.map((each) => each.operation);
  const reasons = refused.map((each) => `- ${each.error.message.replace(/^openApiTools: openApi: /, "")}`);
  return new ConfigurationError(
    `openApiTools: openApi: ${refused.length} operations cannot be tools:\n${reasons.join("\n")}\n` +
      `Fix them in the document, or leave them all out with include: (method, path) => !${JSON.stringify(operations)}.includes(\`\${method} \${path}\`).`,
    "openApi",
    operations,
  );
}

/**
 * The operation's id as a tool name (letters, digits, `_` and `-`, at most 64, starting with a
 * letter or `_`: Gemini refuses a request with a tool named `2fa_enable`), else its method and path.
 */
function operationName(operation: Json, method: string, path: string): string {
  const id = typeof operation.operationId === "string" ? operation.operationId.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "") : "";
  const name = id || `${method.toLowerCase()}_${path.replace(/[^A-Za-z0-9]+/g, "_").replace(/^_+|_+$/g, "")}`;
  return (/^[A-Za-z_]/.test(name) ? name : `_${name}`).slice(0, MAX_NAME);
}

function uniqueName(name: string, taken: Set<string>): string {
  let unique = name;
  for (let n = 2; taken.has(unique); n++) unique = `${name.slice(0, MAX_NAME - String(n).length - 1)}_${n}`;
  taken.add(unique);
  return unique;
}

function operationDescription(method: string, path: string, operation: Json): string {
  const texts = [operation.summary, operation.description].filter((text): text is string => typeof text === "string" && text.trim() !== "");
  const about = [...new Set(texts.map(oneLine))].join(" ");
  return shorten(`${method} ${path}${about ? `: ${about}` : ""}`, MAX_DESCRIPTION);
}

/** The header parameters of a call, as the request sends them. */
function operationHeaders(request: OperationRequest, input: Readonly<Record<string, unknown>>): [string, string][] {
  const headers: [string, string][] = [];
  for (const name of request.headerParameters ?? []) {
    const value = input[request.argumentNames?.get(name) ?? name];
    if (value === undefined || value === null) continue;
    headers.push([name, headerValue(name, value)]);
  }
  return headers;
}

/** The JSON schema of the operation's arguments, and how a call's arguments become its request. */
function operationSchema(
  document: OpenApiDocument,
  method: string,
  path: string,
  operation: Json,
  shared: readonly unknown[],
  budget: SchemaBudget,
  toolHeaders: ReadonlySet<string>,
  credentialQuery: ReadonlySet<string>,
  cookieConfigured: boolean,
): { parameters: Json; request: OperationRequest } {
  const byName = new Map<string, Json>();
  for (const parameter of [...shared, ...(Array.isArray(operation.parameters) ? operation.parameters : [])].map((p) => follow(document, p, budget))) {
    if (!isRecord(parameter) || typeof parameter.name !== "string") continue;
    if (parameter.in === "path" || (parameter.in === "query" && !credentialQuery.has(parameter.name))) byName.set(parameter.name, parameter);
    else if (parameter.in === "header" && !toolHeaders.has(parameter.name.toLowerCase())) byName.set(parameter.name, parameter);
    else if (parameter.in === "cookie" && parameter.required === true && !cookieConfigured)
      // A cookie is not an argument: the tool's Cookie header is the operator's (a session). Refused,
      // not dropped, since every call would fail at the API with an error the model cannot fix.
      throw new ConfigurationError(
        `openApiTools: openApi: ${method} ${path} requires the cookie ${JSON.stringify(parameter.name)}, which a tool cannot take from the model. Send it with headers: { cookie: "${parameter.name}=…" }, or leave the operation out with include.`,
        "openApi",
        parameter.name,
      );
  }
  // A parameter of the path that the document forgot to declare (common in hand-written ones)
  // is still one the request needs: a string, as the path is text.
  for (const [, name] of path.matchAll(/\{([^}]+?)\+?\}/g)) {
    if (name !== undefined && byName.get(name)?.in !== "path") byName.set(name, { name, in: "path", required: true, schema: { type: "string" } });
  }
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const pathParameters: string[] = [];
  const queryParameters: string[] = [];
  const headerParameters: string[] = [];
  const argumentNames = providerArgumentNames(byName.keys());
  for (const [name, parameter] of byName) {
    const argument = argumentNames.get(name) ?? name;
    const schema = { ...jsonSchema(document, parameter.schema, 0, budget) };
    if (typeof parameter.description === "string" && parameter.description.trim()) schema.description = oneLine(parameter.description);
    properties[argument] = schema;
    if (parameter.in === "path") {
      pathParameters.push(name);
      required.push(argument); // a path parameter always is
      // An empty one names another resource: DELETE /users/{id} with id "" is DELETE /users/.
      const text = schema.type === undefined || schema.type === "string" || (Array.isArray(schema.type) && schema.type.includes("string"));
      if (text && !(typeof schema.minLength === "number" && schema.minLength >= 1)) schema.minLength = 1;
    } else {
      (parameter.in === "header" ? headerParameters : queryParameters).push(name);
      if (parameter.required === true) required.push(argument);
    }
  }
  let bodyArgument: string | undefined;
  let form: OperationRequest["form"];
  const requestBody = follow(document, operation.requestBody, budget);
  const content = requestBody?.content;
  const bodyType = requestBodyType(content);
  if (bodyType?.kind === "unsupported")
    // A tool that sent no body would fail at the API on every call, with an error the model cannot fix.
    throw new ConfigurationError(
      `openApiTools: openApi: ${method} ${path} takes a ${bodyType.mediaType} body, which a tool cannot send (it sends JSON or application/x-www-form-urlencoded). Leave the operation out with include.`,
      "openApi",
      bodyType.mediaType,
    );
  if (bodyType && isRecord(content)) {
    bodyArgument = "body" in properties ? "requestBody" : "body";
    const mediaType = content[bodyType.mediaType] as Json | undefined;
    const schema = { ...jsonSchema(document, mediaType?.schema, 0, budget) };
    if (bodyType.kind === "form") {
      const deepObjects = deepObjectFields(mediaType);
      checkFormFields(method, path, schema, deepObjects);
      form = { deepObjects: [...deepObjects] };
    }
    if (typeof requestBody?.description === "string" && requestBody.description.trim()) schema.description = oneLine(requestBody.description);
    properties[bodyArgument] = schema;
    if (requestBody?.required === true) required.push(bodyArgument);
  }
  return {
    parameters: { type: "object", properties, required, additionalProperties: false },
    request: { method, path, bodyArgument, pathParameters, queryParameters, headerParameters, argumentNames, ...(form ? { form } : {}) },
  };
}

/**
 * A form field holding an object (or a list of them) is sent in brackets only when its encoding
 * says `style: deepObject`, as Stripe's document does; else the API's way of reading it is not
 * known (OpenAPI's default would drop the field's name), and the operation is refused.
 */
function checkFormFields(method: string, path: string, schema: Json, deepObjects: ReadonlySet<string>): void {
  const objectLike = (field: unknown): boolean =>
    isRecord(field) &&
    (field.type === "object" ||
      isRecord(field.properties) ||
      (field.type === "array" && objectLike(field.items)) ||
      [field.anyOf, field.oneOf, field.allOf].some((variants) => Array.isArray(variants) && variants.some(objectLike)));
  const fields = isRecord(schema.properties) ? Object.entries(schema.properties) : [];
  const nested = fields.filter(([name, field]) => !deepObjects.has(name) && objectLike(field)).map(([name]) => name);
  if (nested.length > 0)
    throw new ConfigurationError(
      `openApiTools: openApi: ${method} ${path} takes a form body whose field ${nested.map((name) => JSON.stringify(name)).join(", ")} holds an object without \`encoding: { style: deepObject }\`, so how the API reads it is not known. Give the field that encoding (as a[b]=c), or leave the operation out with include.`,
      "openApi",
      nested,
    );
}

/**
 * An OpenAPI schema as plain JSON Schema for the model and the tool runner: `$ref`s inlined,
 * `nullable` as a `null` type, read-only properties (the server sets them) left out.
 */
function jsonSchema(document: OpenApiDocument, value: unknown, depth: number, budget: SchemaBudget): Record<string, unknown> {
  const schema = follow(document, value, budget);
  if (!schema) return {};
  budget.spend(); // before the depth test: a node cut off was still read
  if (depth > MAX_DEPTH) return {};
  const out: Record<string, unknown> = {};
  const requiredHere: string[] = []; // properties marked `required: true` themselves (draft 3)
  for (const [key, field] of Object.entries(schema)) {
    if (DROPPED.has(key)) continue;
    if (key === "properties" && isRecord(field)) {
      const properties: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(field)) {
        const read = follow(document, property, budget);
        if (read?.readOnly === true) continue;
        if (read?.required === true) requiredHere.push(name);
        properties[name] = jsonSchema(document, property, depth + 1, budget);
      }
      out.properties = properties;
    } else if ((key === "items" || key === "additionalProperties" || key === "not") && isRecord(field)) {
      out[key] = jsonSchema(document, field, depth + 1, budget);
    } else if ((key === "allOf" || key === "anyOf" || key === "oneOf") && Array.isArray(field)) {
      out[key] = field.map((part) => jsonSchema(document, part, depth + 1, budget));
    } else {
      out[key] = field;
    }
  }
  // `required: true` on a property (draft 3, in many hand-written documents) is not JSON Schema:
  // providers check tool schemas against draft 2020-12 and refuse the whole request. Its object lists it.
  if ("required" in out && !Array.isArray(out.required)) delete out.required;
  if (requiredHere.length > 0) out.required = [...new Set([...((out.required as unknown[] | undefined) ?? []), ...requiredHere])];
  if (Array.isArray(out.required) && isRecord(out.properties)) {
    const properties = out.properties;
    out.required = out.required.filter((name) => typeof name === "string" && name in properties);
  }
  if (schema.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  exclusiveBound(out, "exclusiveMinimum", "minimum");
  exclusiveBound(out, "exclusiveMaximum", "maximum");
  return out;
}

/**
 * OpenAPI 3.0's `exclusiveMinimum: true` beside `minimum: 0` as JSON Schema 2020-12 (OpenAPI
 * 3.1) writes it, `exclusiveMinimum: 0`: Anthropic and OpenAI check tool schemas against 2020-12
 * and refuse a request whose tool has the boolean.
 */
function exclusiveBound(out: Record<string, unknown>, exclusive: "exclusiveMinimum" | "exclusiveMaximum", inclusive: "minimum" | "maximum"): void {
  if (typeof out[exclusive] !== "boolean") return;
  if (out[exclusive] === true && typeof out[inclusive] === "number") {
    out[exclusive] = out[inclusive];
    delete out[inclusive];
  } else delete out[exclusive];
}

/**
 * `value`, its `$ref` followed: a `$ref` the document does not hold stops the load, naming the
 * operation. Read as "anything", it would let the model send any body, unchecked.
 */
function follow(document: OpenApiDocument, value: unknown, budget: SchemaBudget): Json | undefined {
  const found = resolve(document, value);
  if (!found && isRecord(value) && typeof value.$ref === "string") budget.unresolved(value.$ref);
  return found;
}
