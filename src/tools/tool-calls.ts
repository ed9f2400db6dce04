/**
 * Runs a tool call of an LLM's reply: checks the call against the tool's JSON schema
 * before running it (LlamaIndex's `FunctionTool.call` only logs a warning and runs the tool
 * with the bad input anyway), with a timeout, and turns every failure into a tool result the
 * model can read and act on.
 */
import type { JSONValue } from "@llamaindex/core/global";
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
import { checkTimeout, quoteInput, startTimer, sharedRunObservers } from "../core/internal.ts";
import type { RunObservers } from "../core/internal.ts";
import { checkableSchema } from "./checkable-schema.ts";
import { startToolCall } from "./current-tool-call.ts";
import { withoutNullOptionals } from "./null-arguments.ts";
import type { ToolCallDetails } from "./current-tool-call.ts";
import { parsedCallOf, zodSchemaOf } from "./tool.ts";
import { argumentIssueText } from "./argument-issues.ts";
import type { ArgumentSchema, ParsedCall } from "./tool.ts";

/** What one tool call produced: kept in `sources` and sent back to the model as `content`. */
export interface ToolSource {
  /** The id of the call this answers. */
  readonly toolCallId: string;
  readonly toolName: string;
  /** The arguments the model sent (a raw string when they were not valid JSON). */
  readonly input: unknown;
  /** The tool's return value as plain JSON (`null` for nothing), or the error text when `isError`. */
  readonly output: JSONValue | null;
  /** The text the model reads. */
  readonly content: string;
  readonly isError: boolean;
}

/** Options of {@link runToolCall}. @example `{ timeout: 30, signal: ctx.signal, idempotencyKey: "5f0c…" }` */
export interface RunToolCallOptions {
  /** Seconds the call may take before it is reported to the model as failed. Default 60. */
  readonly timeout?: number;
  /** Stops waiting for the call when aborted (the run timed out or was cancelled). */
  readonly signal?: AbortSignal;
  /** The call's idempotency key, which its tool's function is given with the call (or reads with `currentToolCall()`). */
  readonly idempotencyKey?: string;
  /** Who is told of the call (an `execute_tool` operation): the workflow's observers. Default: those registered for the process. */
  readonly observers?: RunObservers;
}

const schemas = new WeakMap<BaseTool, ArgumentSchema | null>();

/**
 * The argument schema of a tool: its zod schema when it was made with stepflow's `tool()`
 * (refinements included), else one built from its JSON schema (so LlamaIndex `tool()`s,
 * OpenAPI-derived and hand-written tools are checked too); `null` when it has no usable schema.
 */
function argumentSchema(tool: BaseTool): ArgumentSchema | null {
  let schema = schemas.get(tool);
  if (schema === undefined) {
    const parameters = tool.metadata.parameters;
    schema = zodSchemaOf(tool) ?? (parameters ? checkableSchema(parameters) : null);
    schemas.set(tool, schema);
  }
  return schema;
}

/**
 * `seconds` when it is a usable tool timeout (a finite number > 0), else a `ConfigurationError`
 * naming the option.
 * @example this.toolTimeout = checkToolTimeout("toolTimeout", options.toolTimeout ?? 60);
 */
export function checkToolTimeout(option: string, seconds: number): number {
  checkTimeout(seconds, option, "the default is 60");
  return seconds;
}

/**
 * Runs one tool call: at once (no promise) when the tool answers synchronously, so that a
 * caller recording the result does so in the same tick as the tool's side effect. Never
 * rejects for a tool's failure: the failure becomes the model-readable result.
 * @example
 * const source = await runToolCall(call, [add, multiply], { timeout: 30, signal: ctx.signal });
 * source.content; // "4444"
 */
export function runToolCall(call: ToolCall, tools: readonly BaseTool[], options: RunToolCallOptions = {}): ToolSource | Promise<ToolSource> {
  const observers = options.observers ?? sharedRunObservers;
  if (!observers.observing()) return runCall(call, tools, options);
  const operation = observers.observeOperation({
    kind: "tool",
    name: `execute_tool ${call.name}`,
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": call.name,
      "gen_ai.tool.call.id": call.id,
      "gen_ai.tool.type": "function",
      "gen_ai.tool.description": findTool(tools, call.name)?.metadata.description,
    },
  });
  // The model reads a failure as the call's result; a trace shows it as the span's error.
  const ended = (source: ToolSource): ToolSource => (operation.end({}, source.isError ? new ToolCallFailure(source.content) : undefined), source);
  let result: ToolSource | Promise<ToolSource>;
  try {
    result = runCall(call, tools, options);
  } catch (error) {
    operation.end({}, error);
    throw error;
  }
  return result instanceof Promise
    ? result.then(ended, (error: unknown) => {
        operation.end({}, error);
        throw error;
      })
    : ended(result);
}

/** A tool call that failed, as a trace records it (the model read `message` as the call's result). */
class ToolCallFailure extends Error {
  override name = "ToolCallFailure";
}

function runCall(call: ToolCall, tools: readonly BaseTool[], options: RunToolCallOptions): ToolSource | Promise<ToolSource> {
  const timeout = options.timeout === undefined ? 60 : checkToolTimeout("timeout", options.timeout);
  // The run ended before the call could start (cancelled, timed out): it does not start now.
  if (options.signal?.aborted) return failure(call, `Encountered error in tool call: ${call.name} was not run: the run ended.`);
  const checked = checkCall(call, tools);
  if (!("tool" in checked)) return checked;
  const { tool, args, parsedCall } = checked;
  const input: unknown = toolCallInput(call.input);
  const details = new RunningCall(call, options.idempotencyKey);
  let result: unknown;
  try {
    result = startToolCall(tool, args, details, parsedCall);
  } catch (error) {
    return thrown(call, error);
  }
  if (!isPromiseLike(result)) return success(call, input, result);
  const deadline = new Deadline(timeout, options.signal, details);
  return Promise.race([result, deadline.reached()])
    .then(
      (output) => {
        if (output === TIMED_OUT) return failure(call, `Encountered error in tool call: ${call.name} did not finish within ${timeout} seconds.`);
        if (output === STOPPED) return failure(call, `Encountered error in tool call: ${call.name} was stopped: the run ended.`);
        return success(call, input, output);
      },
      (error: unknown) => thrown(call, error),
    )
    .finally(() => deadline.clear());
}

const TIMED_OUT: unique symbol = Symbol("timed out");
const STOPPED: unique symbol = Symbol("stopped");
type DeadlineReached = typeof TIMED_OUT | typeof STOPPED;

/**
 * The call a tool's function is handed. Its `signal` is made when first read (most tools never
 * read it), and aborted when the call's deadline is reached.
 */
class RunningCall implements ToolCallDetails {
  readonly id: string;
  readonly name: string;
  #controller: AbortController | undefined;
  #ended = false;
  #reason: unknown;

  constructor(
    call: ToolCall,
    readonly idempotencyKey: string | undefined,
  ) {
    this.id = call.id;
    this.name = call.name;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#ended) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** The call is no longer waited for, for `reason`. */
  end(reason: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/**
 * The deadline of a call whose tool returned a promise: `reached()` resolves when `seconds`
 * pass or `signal` aborts, whichever comes first, until cleared, and ends the running call
 * (which aborts the signal its tool was given). Tools that answer at once (most local ones)
 * make none, so they set no timer.
 */
class Deadline {
  #reached: Promise<DeadlineReached> | undefined;
  #resolve: ((reason: DeadlineReached) => void) | undefined;
  #cancelTimer: (() => void) | undefined;

  constructor(
    readonly seconds: number,
    readonly signal: AbortSignal | undefined,
    readonly running: RunningCall,
  ) {}

  reached(): Promise<DeadlineReached> {
    if (this.#reached) return this.#reached;
    this.#reached = new Promise((resolve) => (this.#resolve = resolve));
    if (this.signal?.aborted) this.handleEvent();
    else {
      this.#cancelTimer = startTimer(this.seconds, () => this.#reach(TIMED_OUT));
      this.signal?.addEventListener("abort", this, { once: true });
    }
    return this.#reached;
  }

  /** The abort listener (an object, so no closure per turn). */
  handleEvent(): void {
    this.#reach(STOPPED);
  }

  #reach(reason: DeadlineReached): void {
    this.#resolve?.(reason);
    const { name } = this.running;
    this.running.end(
      reason === TIMED_OUT
        ? new DOMException(`${name} did not finish within ${this.seconds} seconds.`, "TimeoutError")
        : (this.signal?.reason ?? new DOMException(`${name} was stopped: the run ended.`, "AbortError")),
    );
  }

  clear(): void {
    if (!this.#reached) return;
    this.#cancelTimer?.();
    this.signal?.removeEventListener("abort", this);
  }
}

function failure(call: ToolCall, message: string): ToolSource {
  return { toolCallId: call.id, toolName: call.name, input: call.input, output: message, content: message, isError: true };
}

/** The tool named `name`, if `tools` has one. @example findTool([add, multiply], "add") // add */
export function findTool(tools: readonly BaseTool[], name: string): BaseTool | undefined {
  for (const tool of tools) if (tool.metadata.name === name) return tool;
  return undefined;
}

/**
 * Why `call` cannot run, as the result the model would get (an unknown tool, arguments that
 * are not an object or fail the tool's schema); `undefined` when it can run.
 * @example toolCallProblem({ id: "c1", name: "launch", input: {} }, [add])?.content; // "Tool launch does not exist. …"
 */
export function toolCallProblem(call: ToolCall, tools: readonly BaseTool[]): ToolSource | undefined {
  const checked = checkCall(call, tools);
  return "tool" in checked ? undefined : checked;
}

type CallableTool = BaseTool & { call: NonNullable<BaseTool["call"]> };

/**
 * A tool call's arguments as an object when the model's client sent them as a JSON string:
 * LlamaIndex's types allow it (`PartialToolCall`), its own agent parses such strings, and the
 * Anthropic adapter sends every call so. No text at all is no arguments, `{}`: what models send
 * for a tool without parameters, and what adapters pass on as they got it. Anything else is
 * returned as it is, so a string that is not a JSON object reaches the model as an error it can correct.
 * @example toolCallInput('{"x":1,"y":2}'); // { x: 1, y: 2 }
 * toolCallInput(""); // {}
 */
export function toolCallInput(input: unknown): unknown {
  if (typeof input !== "string") return input;
  if (input.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(input);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : input;
  } catch {
    return input; // not JSON: the check below tells the model
  }
}

/**
 * `call` with its arguments as an object when they came as a JSON string (see {@link toolCallInput});
 * `call` itself otherwise.
 * @example withToolCallInput({ id: "c1", name: "add", input: '{"x":1,"y":2}' }).input; // { x: 1, y: 2 }
 */
export function withToolCallInput<T extends { readonly input: unknown }>(call: T): T {
  const input = toolCallInput(call.input);
  return input === call.input ? call : { ...call, input };
}

/**
 * The arguments `call`'s tool is run with, before its schema checks them: arguments sent as a
 * JSON string parsed ({@link toolCallInput}), and the `null`s the model sent for optional
 * arguments left out (null-arguments.ts). What a human asked to approve the call is shown: a
 * `"unit": null` the tool never sees would only mislead. Arguments that are not an object, and
 * a call to a tool not among `tools`, are returned as they came.
 * @example
 * argumentsAsRun({ id: "c1", name: "get_weather", input: '{"city":"Paris","unit":null}' }, [weather]); // { city: "Paris" }
 */
export function argumentsAsRun(call: ToolCall, tools: readonly BaseTool[]): unknown {
  const sent: unknown = toolCallInput(call.input);
  if (typeof sent !== "object" || sent === null || Array.isArray(sent)) return sent;
  const tool = findTool(tools, call.name);
  // A model's `null` for an optional argument means "not given" (null-arguments.ts).
  return tool ? withoutNullOptionals(sent as Record<string, unknown>, tool.metadata.parameters) : sent;
}

/** The tool and the arguments to call it with (and its function for parsed ones, if it has one), or the result that says why the call cannot run. */
function checkCall(call: ToolCall, tools: readonly BaseTool[]): { tool: CallableTool; args: unknown; parsedCall?: ParsedCall | undefined } | ToolSource {
  const tool = findTool(tools, call.name);
  if (!tool?.call) {
    const names = tools.map((t) => t.metadata.name).join(", ") || "none";
    return failure(call, `Tool ${call.name} does not exist. Available tools: ${names}.`);
  }
  const input = argumentsAsRun(call, [tool]);
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return failure(
      call,
      `Invalid arguments for tool ${call.name}: ${notAnObject(input)}. The tool was not run; call it again with arguments that match its schema.`,
    );
  }
  const schema = argumentSchema(tool);
  if (!schema) return { tool: tool as CallableTool, args: input };
  let parsed: ReturnType<ArgumentSchema["safeParse"]>;
  try {
    parsed = schema.safeParse(input);
  } catch (error) {
    return thrown(call, error); // a refinement that throws, or one that is async (a synchronous parse cannot await it)
  }
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => argumentIssueText(tool, issue, input)).join("; ");
    return failure(call, `Invalid arguments for tool ${call.name}: ${problems}. The tool was not run; call it again with arguments that match its schema.`);
  }
  const parsedCall = parsedCallOf(tool);
  // A tool from stepflow's tool() whose call was replaced parses its input again in that call: it gets the input as it came.
  return { tool: tool as CallableTool, args: zodSchemaOf(tool) && !parsedCall ? input : parsed.data, parsedCall };
}

const QUOTED_ARGUMENTS = 300; // characters of arguments that are not an object quoted back to the model

/**
 * Why arguments that are not a JSON object cannot be used, for the model to correct: text that
 * is not JSON says where it stops being JSON (text after the object, a code fence around it), and
 * what is quoted of it is cut, as a model that wrote pages of it would read them again each round.
 */
function notAnObject(input: unknown): string {
  if (typeof input !== "string") return `expected a JSON object, got ${JSON.stringify(input) ?? String(input)}`;
  let problem: string;
  try {
    JSON.parse(input);
    problem = "expected a JSON object";
  } catch (error) {
    problem = `they are not JSON (${(error as Error).message.replace(/\n/g, "\\n")})`;
  }
  const hint = /^\s*```|```\s*$/.test(input) ? "; send the JSON object alone, without a code fence" : "";
  return `${problem}${hint}, got ${quoteInput(input, QUOTED_ARGUMENTS)}`;
}

/**
 * A tool's result as the model reads it (`content`) and as `sources` keep it (`output`, plain
 * JSON, so the context can be saved): strings as they are; numbers as written, `Infinity`
 * included (JSON would say `null`); nothing as `null`; anything else as its JSON, with a Map
 * as an object (or its entries, when a key is not a string or number), a Set as an array and
 * an Error as its name and message, where JSON would write `{}`. A result JSON cannot write (a
 * cycle, a BigInt inside an object) is reported to the model as an error.
 */
function success(call: ToolCall, input: unknown, output: unknown): ToolSource {
  const result = (output: JSONValue | null, content: string): ToolSource => ({
    toolCallId: call.id,
    toolName: call.name,
    input,
    output,
    content,
    isError: false,
  });
  if (typeof output === "string") return result(output, output);
  if (typeof output === "number") return result(Number.isFinite(output) ? output : String(output), String(output));
  if (typeof output === "bigint") return result(String(output), String(output));
  let content: string | undefined;
  try {
    content = JSON.stringify(output, readableCollections);
  } catch (error) {
    return failure(
      call,
      `Encountered error in tool call: ${call.name} returned a value that cannot be sent to the model as JSON (${(error as Error).message.split("\n")[0]}).`,
    );
  }
  if (content === undefined) return result(null, "null"); // undefined, a function or a symbol
  return result(typeof output === "object" && output !== null ? (JSON.parse(content) as JSONValue) : (output as JSONValue), content);
}

function readableCollections(_key: string, value: unknown): unknown {
  if (value instanceof Map) {
    const keys = [...value.keys()];
    return keys.every((key) => typeof key === "string" || typeof key === "number") ? Object.fromEntries(value) : [...value];
  }
  if (value instanceof Set) return [...value];
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

function thrown(call: ToolCall, error: unknown): ToolSource {
  return failure(call, `Encountered error in tool call: ${describeError(error)}`);
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "object" && error !== null) {
    try {
      return JSON.stringify(error);
    } catch {
      // a cycle: fall through
    }
  }
  return String(error);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}
