/**
 * Runs the tool calls of one LLM turn: checks each call against the tool's JSON schema
 * before running it (LlamaIndex's `FunctionTool.call` only logs a warning and runs the tool
 * with the bad input anyway), runs the calls concurrently with a per-call timeout, and turns
 * every failure into a tool result the model can read and act on. Results keep call order.
 */
import type { JSONValue } from "@llamaindex/core/global";
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
import { z } from "zod";

/** What one tool call produced: kept in `sources` and sent back to the model as `content`. */
export interface ToolSource {
  /** The id of the call this answers. */
  readonly toolCallId: string;
  readonly toolName: string;
  /** The arguments the model sent (a raw string when they were not valid JSON). */
  readonly input: unknown;
  /** The tool's return value, or the error text when `isError`. */
  readonly output: JSONValue;
  /** The text the model reads. */
  readonly content: string;
  readonly isError: boolean;
}

/** Options of {@link runToolCalls}. */
export interface RunToolCallsOptions {
  /** Seconds each call may take before it is reported to the model as failed. Default 60. */
  readonly timeout?: number;
  /** Stops waiting for calls when aborted (the run timed out or was cancelled). */
  readonly signal?: AbortSignal;
  /** Called as each call starts, in call order. */
  readonly onStart?: (call: ToolCall) => void;
  /** Called as each call finishes (in finishing order), for progress display. */
  readonly onResult?: (source: ToolSource) => void;
}

const schemas = new WeakMap<BaseTool, z.ZodType | null>();

/**
 * The argument schema of a tool, from its JSON schema (so it works for `tool()` with zod,
 * OpenAPI-derived and hand-written tools alike); `null` when the tool has no usable schema.
 */
function argumentSchema(tool: BaseTool): z.ZodType | null {
  let schema = schemas.get(tool);
  if (schema === undefined) {
    const parameters = tool.metadata.parameters;
    try {
      schema = parameters ? z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]) : null;
    } catch {
      schema = null; // a schema zod cannot read: let the tool check its own input
    }
    schemas.set(tool, schema);
  }
  return schema;
}

/**
 * Runs every call of one turn concurrently; resolves with one source per call, in call
 * order. Never rejects for a tool's failure: the failure becomes the model-readable result.
 * @example
 * const sources = await runToolCalls(toolCalls, [add, multiply], { timeout: 30, signal: ctx.signal });
 * sources[0].content; // "4444"
 */
export function runToolCalls(calls: readonly ToolCall[], tools: readonly BaseTool[], options: RunToolCallsOptions = {}): Promise<ToolSource[]> {
  const byName = new Map(tools.map((tool) => [tool.metadata.name, tool]));
  return Promise.all(
    calls.map((call) => {
      options.onStart?.(call);
      return runOne(call, byName, options).then((source) => {
        options.onResult?.(source);
        return source;
      });
    }),
  );
}

async function runOne(call: ToolCall, tools: Map<string, BaseTool>, options: RunToolCallsOptions): Promise<ToolSource> {
  const failed = (message: string): ToolSource => ({ toolCallId: call.id, toolName: call.name, input: call.input, output: message, content: message, isError: true });
  const tool = tools.get(call.name);
  if (!tool?.call) {
    const names = [...tools.keys()].join(", ") || "none";
    return failed(`Tool ${call.name} does not exist. Available tools: ${names}.`);
  }
  const input: unknown = call.input;
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return failed(`Invalid arguments for tool ${call.name}: expected a JSON object, got ${JSON.stringify(input)}. The tool was not run; call it again with arguments that match its schema.`);
  }
  const schema = argumentSchema(tool);
  let args: unknown = input;
  if (schema) {
    const parsed = schema.safeParse(input);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message)).join("; ");
      return failed(`Invalid arguments for tool ${call.name}: ${problems}. The tool was not run; call it again with arguments that match its schema.`);
    }
    args = parsed.data;
  }
  const timeout = options.timeout ?? 60;
  try {
    const output = await withTimeout(Promise.resolve(tool.call(args)), timeout, options.signal, call.name);
    return { toolCallId: call.id, toolName: call.name, input, output, content: typeof output === "string" ? output : JSON.stringify(output), isError: false };
  } catch (error) {
    return failed(`Encountered error in tool call: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function withTimeout<T>(work: Promise<T>, seconds: number, signal: AbortSignal | undefined, name: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not finish within ${seconds} seconds.`)), seconds * 1000);
    const onAbort = () => reject(new Error(`${name} was stopped: the run ended.`));
    signal?.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    });
  });
}
