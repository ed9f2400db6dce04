/**
 * A whole REST API as one tool, as in seed 000's HR assistant (`call_rest_api`): the model
 * picks the method, the path (with its query) and the JSON body, and reads the status and the
 * answer. Requests stay on the API: the model gives a path under `baseURL`, never a URL;
 * redirects are reported, not followed; `headers` (keys) never reach the model, not even when
 * the API echoes them: every configured secret is hidden in what the tool returns.
 */
import { z } from "zod";
import { providerArgumentNames } from "../../src/tools/argument-names.ts";
import { tool } from "../../src/tools/tool.ts";
import { annotateTool } from "../../src/tools/tool-annotations.ts";
import { ConfigurationError } from "../../src/index.ts";
import { describeOpenApi, openApiEndpoints, openApiServerPath } from "./openapi.ts";
import type { OpenApiDocument, OpenApiEndpoint } from "./openapi.ts";
import { toolHeaderNames } from "./header-parameters.ts";
import { checkHonoursKey, markRestApiTool, methodAnnotations } from "./rest-calls.ts";
import { METHODS, restClient } from "./rest-request.ts";
import type { RestApiResult } from "./rest-request.ts";

export type { RestApiResult } from "./rest-request.ts";
export type { OpenApiDocument } from "./openapi.ts";
export { SchemaTooLargeError } from "./openapi.ts";
export { openApiTools } from "./openapi-tools.ts";
export type { OpenApiToolsOptions, OperationArguments } from "./openapi-tools.ts";
export { changesData, describeRestCall } from "./rest-calls.ts";

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
  /**
   * The API applies a request repeated with the same idempotency key once (as Stripe's does).
   * Then a POST or PATCH whose outcome an earlier attempt did not record (its process was killed
   * mid-call) is sent again with its key, as a GET, PUT or DELETE is; without it, the model is
   * told that call's outcome is unknown rather than risk applying it twice. Default `false`.
   */
  readonly honoursIdempotencyKey?: boolean;
  /** Other values the model must never read (say, a key the API may repeat in its answers): hidden like the headers' values. */
  readonly secrets?: readonly string[];
  /** Seconds a request may take, its body included. Default 30. */
  readonly timeout?: number;
  /** Characters of a response body the model reads; the rest is not even downloaded. Default 20,000. */
  readonly maxBodyChars?: number;
  /**
   * Schema nodes one endpoint's line may read from `openApi` once its `$ref`s are followed; a
   * larger one is refused with a `SchemaTooLargeError` naming it. Default 10,000.
   */
  readonly maxSchemaNodes?: number;
}

/**
 * The `headers` argument of a tool whose OpenAPI document declares header parameters: one
 * property per header a call may set (named as every provider takes it), and no other, with
 * an error that says which it takes. `undefined` when there are none.
 */
function headersArgument(endpoints: readonly OpenApiEndpoint[] | undefined, toolHeaders: ReadonlySet<string>) {
  const names = new Map<string, string>(); // lower case → as first declared
  for (const endpoint of endpoints ?? [])
    for (const header of endpoint.headers ?? []) if (!names.has(header.name.toLowerCase())) names.set(header.name.toLowerCase(), header.name);
  if (names.size === 0) return undefined;
  const renamed = providerArgumentNames(names.values());
  const headerOf = new Map([...names.values()].map((name) => [renamed.get(name) ?? name, name]));
  const argumentOf = new Map([...headerOf.keys()].map((argument) => [argument.toLowerCase(), argument]));
  const value = z.union([z.string(), z.number(), z.boolean()]);
  const shape = Object.fromEntries(
    [...headerOf].map(([argument, header]) => [argument, (argument === header ? value : value.describe(`The ${header} header.`)).optional()]),
  );
  const takes = [...headerOf.keys()].join(", ");
  const unknownKey = (key: string): string => {
    const argument = argumentOf.get(key.toLowerCase());
    if (argument !== undefined) return `send ${JSON.stringify(key)} as ${JSON.stringify(argument)}`;
    if (toolHeaders.has(key.toLowerCase()))
      return `${JSON.stringify(key)} is set by the tool itself (credentials come from its configuration), never by a call: leave it out`;
    return `${JSON.stringify(key)} is not a header parameter of the API, which takes ${takes}`;
  };
  const schema = z
    .strictObject(shape, { error: (issue) => (issue.code === "unrecognized_keys" ? issue.keys.map(unknownKey).join("; ") : undefined) })
    .optional()
    .describe("Header parameters of the endpoint, as the endpoint list names them (Headers: …); only those it lists.");
  return { schema, headerOf };
}

// A refinement, not a regex `pattern`: some local servers (llama.cpp) turn patterns into
// grammars and refuse ones that are not anchored at both ends. The tool runner enforces it.
const restRequest = (pathDescription: string, headers?: ReturnType<typeof headersArgument>) =>
  z
    .object({
      method: z.enum(METHODS).describe("The HTTP method."),
      path: z
        .string()
        .refine((path) => path.startsWith("/") && !/^\/[/\\]/.test(path), "must be a path on the API starting with one /, e.g. /api/users?page=2, not a URL")
        .describe(pathDescription),
      body: z
        .record(z.string(), z.unknown())
        .optional()
        .describe("The body of a POST, PUT, PATCH or DELETE, as JSON; sent as a form to an endpoint that takes one."),
      ...(headers ? { headers: headers.schema } : {}),
    })
    .refine((request) => request.method !== "GET" || request.body === undefined, {
      path: ["body"],
      message: "a GET request has no body; put its parameters in the path's query string",
    });

/** The `headers` argument of a call by header name (`{}` when it has none, so that a required header is still asked for). */
function headerArgumentsOf(request: object, headerOf: ReadonlyMap<string, string>): Record<string, unknown> {
  const given = (request as { headers?: Readonly<Record<string, unknown>> }).headers ?? {};
  return Object.fromEntries(Object.entries(given).map(([argument, value]) => [headerOf.get(argument) ?? argument, value]));
}

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
  const { openApi } = options;
  const api = restClient({ ...options, who: "restApiTool", serverPath: openApi ? () => openApiServerPath(openApi, "restApiTool") : "" });
  const honoursKey = checkHonoursKey("restApiTool", options);
  const endpoints = options.openApi ? openApiEndpoints(options.openApi, "restApiTool", options.maxSchemaNodes, toolHeaderNames(options)) : undefined;
  const headers = headersArgument(endpoints, toolHeaderNames(options));
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
  const made = tool({
    name: options.name ?? "call_rest_api",
    description: `${about}\nSends one request to this API and returns its status and body.${endpoints ? " The endpoints are listed with the path argument." : ""}`,
    parameters: restRequest(options.openApi ? `${PATH_DESCRIPTION}\n${describeOpenApi(options.openApi, endpoints)}` : PATH_DESCRIPTION, headers),
    execute: (request, _bound, call): Promise<RestApiResult> => {
      const { method, path, body } = request;
      const chosen = headers && headerArgumentsOf(request, headers.headerOf);
      return api.send(method, path, body, call?.idempotencyKey, endpoints, chosen ? { headerArguments: chosen } : {});
    },
  });
  markRestApiTool(made);
  // Whether a call may be made again when in doubt depends on its method (tool-annotations.ts).
  return annotateTool(made, (input) => methodAnnotations((input as { method?: unknown } | null)?.method, honoursKey));
}
