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
  const deadline = new Deadline(options.timeout ?? 60, options.signal);
  const { onStart, onResult } = options;
  const results: (ToolSource | Promise<ToolSource>)[] = [];
  let pending = false;
  for (const call of calls) {
    onStart?.(call);
    const result = runOne(call, tools, deadline);
    if (result instanceof Promise) {
      pending = true;
      results.push(onResult ? result.then((source) => (onResult(source), source)) : result);
    } else {
      onResult?.(result);
      results.push(result);
    }
  }
  // Tools that answer at once (most local ones) cost no promise per call: a turn's results are
  // then ready together, and only the whole batch is awaited.
  if (!pending) return Promise.resolve(results as ToolSource[]);
  return Promise.all(results).finally(() => deadline.clear());
}

const TIMED_OUT: unique symbol = Symbol("timed out");
const STOPPED: unique symbol = Symbol("stopped");
type DeadlineReached = typeof TIMED_OUT | typeof STOPPED;

/**
 * The deadline of one turn's calls: `reached()` resolves when `seconds` pass or `signal` aborts,
 * whichever comes first, until cleared. The calls of a turn start together, so one deadline (one
 * timer, one abort listener) times out each call exactly as a timer per call would; and it starts
 * only when a tool returns a promise, so tools that answer at once (most local ones) set no timer.
 */
class Deadline {
  #reached: Promise<DeadlineReached> | undefined;
  #resolve: ((reason: DeadlineReached) => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly seconds: number,
    readonly signal: AbortSignal | undefined,
  ) {}

  reached(): Promise<DeadlineReached> {
    if (this.#reached) return this.#reached;
    this.#reached = new Promise((resolve) => (this.#resolve = resolve));
    if (this.signal?.aborted) this.handleEvent();
    else {
      this.#timer = setTimeout(Deadline.#timeOut, this.seconds * 1000, this);
      this.signal?.addEventListener("abort", this, { once: true });
    }
    return this.#reached;
  }

  /** The abort listener (an object, so no closure per turn). */
  handleEvent(): void {
    this.#resolve?.(STOPPED);
  }

  static #timeOut(deadline: Deadline): void {
    deadline.#resolve?.(TIMED_OUT);
  }

  clear(): void {
    if (!this.#reached) return;
    clearTimeout(this.#timer);
    this.signal?.removeEventListener("abort", this);
  }
}

function failure(call: ToolCall, message: string): ToolSource {
  return { toolCallId: call.id, toolName: call.name, input: call.input, output: message, content: message, isError: true };
}

function findTool(tools: readonly BaseTool[], name: string): BaseTool | undefined {
  for (const tool of tools) if (tool.metadata.name === name) return tool;
  return undefined;
}

/** One call's result: at once when the tool answers synchronously, else a promise. */
function runOne(call: ToolCall, tools: readonly BaseTool[], deadline: Deadline): ToolSource | Promise<ToolSource> {
  const tool = findTool(tools, call.name);
  if (!tool?.call) {
    const names = tools.map((t) => t.metadata.name).join(", ") || "none";
    return failure(call, `Tool ${call.name} does not exist. Available tools: ${names}.`);
  }
  const input: unknown = call.input;
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return failure(call, `Invalid arguments for tool ${call.name}: expected a JSON object, got ${JSON.stringify(input)}. The tool was not run; call it again with arguments that match its schema.`);
  }
  const schema = argumentSchema(tool);
  let args: unknown = input;
  if (schema) {
    const parsed = schema.safeParse(input);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message)).join("; ");
      return failure(call, `Invalid arguments for tool ${call.name}: ${problems}. The tool was not run; call it again with arguments that match its schema.`);
    }
    args = parsed.data;
  }
  let result: JSONValue | PromiseLike<JSONValue>;
  try {
    result = tool.call(args);
  } catch (error) {
    return thrown(call, error);
  }
  if (!isPromiseLike(result)) return success(call, input, result);
  return Promise.race([result, deadline.reached()]).then(
    (output) => {
      if (output === TIMED_OUT) return failure(call, `Encountered error in tool call: ${call.name} did not finish within ${deadline.seconds} seconds.`);
      if (output === STOPPED) return failure(call, `Encountered error in tool call: ${call.name} was stopped: the run ended.`);
      return success(call, input, output);
    },
    (error: unknown) => thrown(call, error),
  );
}

function success(call: ToolCall, input: unknown, output: JSONValue): ToolSource {
  return { toolCallId: call.id, toolName: call.name, input, output, content: typeof output === "string" ? output : JSON.stringify(output), isError: false };
}

function thrown(call: ToolCall, error: unknown): ToolSource {
  return failure(call, `Encountered error in tool call: ${error instanceof Error ? error.message : String(error)}`);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}
