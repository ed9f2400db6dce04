/**
 * Whether the agent makes a tool call again when an earlier attempt at the run started it and
 * recorded no outcome (its process was killed mid-call, or the run was saved while it ran): only
 * when making it twice does no more than making it once. That is the tool's word (its
 * annotations: read-only, or idempotent); a tool that says nothing is not repeated, and the
 * model is told the call's outcome is unknown. A call a human approved is never repeated: the
 * human approved one execution, and two resumes of one saved run must not both make it.
 */
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
import { toolAnnotationsOf } from "../src/tools/tool-annotations.ts";
import { findTool, toolCallInput } from "../src/tools/tool-calls.ts";

/**
 * Whether `call` may be made again when it is in doubt: its tool says it only reads or is idempotent.
 * @example repeatsWhenInDoubt({ id: "c1", name: "call_rest_api", input: { method: "GET", path: "/api/users" } }, [hr]); // true
 */
export function repeatsWhenInDoubt(call: ToolCall, tools: readonly BaseTool[]): boolean {
  const tool = findTool(tools, call.name);
  if (tool === undefined) return true; // no such tool: the call only tells the model so
  let hints;
  try {
    hints = toolAnnotationsOf(tool, toolCallInput(call.input));
  } catch {
    return false; // annotations that cannot read these arguments vouch for nothing
  }
  return hints?.readOnlyHint === true || hints?.idempotentHint === true;
}
