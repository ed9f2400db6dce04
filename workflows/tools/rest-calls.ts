/**
 * What a REST tool's call will send, read from the call alone: `restApiTool`'s one tool takes
 * the method and path as arguments, an `openApiTools` tool stands for one operation. Lets an
 * agent ask a human before the calls that change data, and show the request it approves.
 */
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
import { isRecord } from "../../src/core/internal.ts";

/** One OpenAPI operation as a tool: the request its calls send. */
export interface OperationRequest {
  readonly method: string;
  /** The path template, e.g. `/api/users/{id}`, with the API root before it. */
  readonly path: string;
  /** The argument that holds the JSON body, if the operation takes one. */
  readonly bodyArgument: string | undefined;
  readonly pathParameters: readonly string[];
  readonly queryParameters: readonly string[];
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
  const path = request.path.replace(/\{([^}]+?)\+?\}/g, (whole, name: string) => {
    const value = input[name];
    return value === undefined ? whole : encodeURIComponent(typeof value === "string" ? value : JSON.stringify(value));
  });
  const query = new URLSearchParams();
  for (const name of request.queryParameters) {
    const value = input[name];
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
