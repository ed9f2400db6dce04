/**
 * What a REST tool's call will send, read from the call alone: `restApiTool`'s one tool takes
 * the method and path as arguments, an `openApiTools` tool stands for one operation. Lets an
 * agent ask a human before the calls that change data, and show the request it approves.
 */
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
import { ConfigurationError, isRecord } from "../../src/core/internal.ts";
import type { ToolAnnotations } from "../../src/tools/tool-annotations.ts";

/** One OpenAPI operation as a tool: the request its calls send. */
export interface OperationRequest {
  readonly method: string;
  /** The path template, e.g. `/api/users/{id}`, with the API root before it. */
  readonly path: string;
  /** The argument that holds the JSON body, if the operation takes one. */
  readonly bodyArgument: string | undefined;
  readonly pathParameters: readonly string[];
  readonly queryParameters: readonly string[];
  /** The body is sent as `application/x-www-form-urlencoded`, these fields in brackets (`a[b]=c`). */
  readonly form?: { readonly deepObjects: readonly string[] };
  /** Parameters sent as request headers (never one the tool sets itself). */
  readonly headerParameters?: readonly string[];
  /** The argument that holds each parameter whose name is not one providers take (`filter[status]` → `filter.status`); others are their own. */
  readonly argumentNames?: ReadonlyMap<string, string>;
}

type RestTool = { readonly kind: "rest-api" } | ({ readonly kind: "operation" } & OperationRequest);

const restTools = new WeakMap<BaseTool, RestTool>();

/** Records that `made` is `restApiTool`'s tool (the method is an argument of each call). */
export function markRestApiTool(made: BaseTool): void {
  restTools.set(made, { kind: "rest-api" });
}

/** Records the operation `made` stands for. */
export function markOperationTool(made: BaseTool, request: OperationRequest): void {
  restTools.set(made, { kind: "operation", ...request });
}

/**
 * The request of an operation tool's call: its path with the path parameters filled in
 * (percent-encoded) and its query string.
 */
export function operationPath(request: OperationRequest, input: Readonly<Record<string, unknown>>): string {
  const argument = (name: string) => request.argumentNames?.get(name) ?? name;
  const path = request.path.replace(/\{([^}]+?)(\+?)\}/g, (whole, name: string, greedy: string) => {
    const value = input[argument(name)];
    if (value === undefined) return whole;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    // A greedy `{name+}` (API Gateway's) is the rest of the path: its slashes stay, each segment
    // encoded; the request is still refused if a segment is `.` or `..` (rest-request.ts).
    return greedy ? text.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(text);
  });
  const query = new URLSearchParams();
  for (const name of request.queryParameters) {
    const value = input[argument(name)];
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) query.append(name, typeof item === "string" ? item : JSON.stringify(item));
  }
  const search = query.toString();
  return search ? `${path}?${search}` : path;
}

/** The method and path a call of `tools` would send (`"DELETE /api/users/7"`), if its tool is a REST tool. */
function requestOf(call: ToolCall, tools: readonly BaseTool[]): { method: string; path: string } | undefined {
  const made = tools.find((candidate) => candidate.metadata.name === call.name);
  const rest = made ? restTools.get(made) : undefined;
  if (!rest || !isRecord(call.input)) return undefined;
  if (rest.kind === "operation") return { method: rest.method, path: operationPath(rest, call.input) };
  const { method, path } = call.input;
  return typeof method === "string" && typeof path === "string" ? { method: method.toUpperCase(), path } : undefined;
}

/**
 * A `needsApproval` test for REST tools: a call needs a human's yes unless it is a GET (or a
 * HEAD). A call of `restApiTool`'s tool without a readable method asks too; calls of other
 * tools do not.
 * @example
 * const tools = [...openApiTools({ openApi, baseURL }), calculator];
 * const agent = new FunctionCallingAgent({ llm, tools, needsApproval: changesData(tools) });
 */
export function changesData(tools: readonly BaseTool[]): (call: ToolCall) => boolean {
  return (call) => {
    const made = tools.find((candidate) => candidate.metadata.name === call.name);
    if (!made || !restTools.has(made)) return false;
    const method = requestOf(call, tools)?.method;
    return method !== "GET" && method !== "HEAD";
  };
}

/**
 * The request a REST tool's call sends, as a person reads it: `"DELETE /api/users/7"` (the
 * path under the API root, query included); `undefined` for a call of another tool.
 * @example
 * if (ev instanceof ToolApprovalRequestEvent) console.log(`Approve ${describeRestCall(ev.toolCall, tools) ?? ev.toolCall.name}? [y/N]`);
 */
export function describeRestCall(call: ToolCall, tools: readonly BaseTool[]): string | undefined {
  const request = requestOf(call, tools);
  return request && `${request.method} ${request.path}`;
}

/**
 * What a request of `method` does when it is made twice, by RFC 9110: a GET or HEAD only reads,
 * a PUT or DELETE is idempotent; a POST or PATCH is idempotent only if the API applies a
 * repeated `Idempotency-Key` once (`honoursIdempotencyKey`, which needs the key sent).
 * @example methodAnnotations("DELETE", false); // { idempotentHint: true }
 */
export function methodAnnotations(method: unknown, honoursIdempotencyKey: boolean): ToolAnnotations {
  const upper = typeof method === "string" ? method.toUpperCase() : "";
  if (upper === "GET" || upper === "HEAD") return { readOnlyHint: true };
  if (upper === "PUT" || upper === "DELETE") return { idempotentHint: true };
  return { idempotentHint: honoursIdempotencyKey && (upper === "POST" || upper === "PATCH") };
}

/**
 * The REST tools' `honoursIdempotencyKey`, checked: `true` only with a key to honour.
 * @example checkHonoursKey("restApiTool", { honoursIdempotencyKey: true }); // true
 */
export function checkHonoursKey(who: string, options: { readonly honoursIdempotencyKey?: boolean; readonly idempotencyKeyHeader?: string | false }): boolean {
  const honours = options.honoursIdempotencyKey ?? false;
  if (typeof honours !== "boolean")
    throw new ConfigurationError(
      `${who}: honoursIdempotencyKey must be true or false (the default), got ${String(honours)}.`,
      "honoursIdempotencyKey",
      honours,
    );
  if (honours && options.idempotencyKeyHeader === false)
    throw new ConfigurationError(
      `${who}: honoursIdempotencyKey says the API applies a repeated idempotency key once, but idempotencyKeyHeader: false sends none. Send the key (leave idempotencyKeyHeader out, or name the API's header), or leave honoursIdempotencyKey out.`,
      "honoursIdempotencyKey",
      honours,
    );
  return honours;
}
