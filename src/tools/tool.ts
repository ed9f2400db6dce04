/**
 * `tool()`: LlamaIndex's `tool()` (same arguments, same `FunctionTool`), which also remembers
 * the tool's zod schema and hands the function the call it runs for. LlamaIndex keeps that
 * schema private and only sends its JSON-schema form to the model; checks JSON schema cannot
 * express (`.refine()`, `.superRefine()`) are then run by `FunctionTool.call`, which logs a
 * failure and calls the tool anyway. With the schema remembered, stepflow's tool runner checks
 * the arguments with the zod schema itself and, when they fail, tells the model and does not
 * run the tool. LlamaIndex calls a tool's function with two arguments (the input and what
 * `.bind()` was given), and the tool runner calls `tool.call(input, call)`: the tool's `call`
 * passes that call on to the function as a third argument, as the OpenAI Agents SDK's
 * `execute(input, runContext, details)` does. (The runner, having parsed the arguments, calls
 * the function itself: see {@link parsedCallOf}.)
 */
import type { JSONValue } from "@llamaindex/core/global";
import type { BaseTool, ToolMetadata } from "@llamaindex/core/llms";
import { FunctionTool } from "@llamaindex/core/tools";
import type { ToolCallDetails } from "./current-tool-call.ts";

/** What a zod 3 or zod 4 schema offers the tool runner. */
export interface ArgumentSchema {
  safeParse(
    input: unknown,
  ): { success: true; data: unknown } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

const zodSchemas = new WeakMap<BaseTool, ArgumentSchema>();

/** A tool's function, to call with arguments its zod schema has parsed already. @example const result = parsedCallOf(add)?.({ x: 1, y: 2 }, details); */
export type ParsedCall = (parsed: unknown, call: ToolCallDetails) => unknown;

/** For each tool made by {@link tool}: the `call` it was given, and its function for parsed arguments. */
const parsedCalls = new WeakMap<BaseTool, { readonly call: unknown; readonly parsed: ParsedCall }>();

const isZodSchema = (value: unknown): value is ArgumentSchema =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { safeParse?: unknown }).safeParse === "function" &&
  typeof (value as { parse?: unknown }).parse === "function";

/**
 * A tool's function: the model's arguments, the argument given to the tool's `.bind()` (if it
 * was bound), and the call it runs for (when the agent runs it; a direct `tool.call(input)` has none).
 * @example
 * const fire: ToolFunction<{ id: number }> = async ({ id }, _bound, call) => {
 *   await audit.log(`firing ${id}`);
 *   return hr.delete(`/users/${id}`, { idempotencyKey: call?.idempotencyKey, signal: call?.signal });
 * };
 */
export type ToolFunction<T, A extends object = object> = (input: T, additionalArg?: A, call?: ToolCallDetails) => JSONValue | Promise<JSONValue>;

/** What `tool()` takes as `parameters` when the arguments are checked with zod (3 or 4). */
interface ZodParameters {
  parse(input: unknown): unknown;
  safeParse(input: unknown): unknown;
}

/** The arguments a zod 4 (`_zod.output`) or zod 3 (`_output`) schema parses to. */
type Parsed<S> = S extends { _zod: { output: infer O } } ? O : S extends { _output: infer O } ? O : never;

/** The metadata of a tool whose arguments `T` are described by a JSON schema, as LlamaIndex types it. */
type JsonSchemaMetadata<T> = ConstructorParameters<typeof FunctionTool<T, JSONValue | Promise<JSONValue>>>[1];

/** The forms of {@link tool}: LlamaIndex's `FunctionTool.from`'s, with a function that may take the call as its third argument. */
export interface ToolMaker {
  <S extends ZodParameters, A extends object = object>(
    config: Omit<ToolMetadata, "parameters"> & { parameters: S; execute: ToolFunction<Parsed<S>, A> },
  ): FunctionTool<Parsed<S>, JSONValue | Promise<JSONValue>, A>;
  <S extends ZodParameters, A extends object = object>(
    fn: ToolFunction<Parsed<S>, A>,
    schema: Omit<ToolMetadata, "parameters"> & { parameters: S },
  ): FunctionTool<Parsed<S>, JSONValue | Promise<JSONValue>, A>;
  <T, A extends object = object>(fn: ToolFunction<T, A>, schema: JsonSchemaMetadata<T>): FunctionTool<T, JSONValue | Promise<JSONValue>, A>;
}

/**
 * Makes a LlamaIndex `FunctionTool` whose zod schema (refinements included) the agent enforces,
 * and whose function gets the call it runs for as its third argument: its id, its idempotency
 * key and a signal that aborts when the call is no longer waited for, valid after any `await`.
 * @example
 * const transfer = tool({
 *   name: "transfer",
 *   description: "Send money.",
 *   parameters: z.object({ to: z.string(), amount: z.number().refine((n) => n > 0, "must be positive") }),
 *   execute: async ({ to, amount }, _bound, call) => {
 *     const account = await accounts.of(to);
 *     return bank.send(account, amount, { idempotencyKey: call?.idempotencyKey });
 *   },
 * });
 * // the model calls transfer({ to: "bob", amount: -500 }) → it reads
 * // "Invalid arguments for tool transfer: amount: must be positive. The tool was not run; …"
 */
export const tool: ToolMaker = ((fnOrConfig: unknown, schema?: unknown) => {
  const made = (FunctionTool.from as (fnOrConfig: unknown, schema?: unknown) => BaseTool)(fnOrConfig, schema);
  const parameters = ((schema ?? fnOrConfig) as { parameters?: unknown } | undefined)?.parameters;
  const zodSchema = isZodSchema(parameters) ? parameters : undefined;
  // The function as FunctionTool.from finds it: given, or the config's `execute`.
  const fn = typeof fnOrConfig === "function" ? fnOrConfig : schema === undefined ? (fnOrConfig as { execute?: unknown } | null)?.execute : undefined;
  if (typeof fn === "function") handCallTo(made, fn as ToolFunction<unknown>, zodSchema, undefined);
  return made;
}) as ToolMaker;

/**
 * Makes `made.call(input, call)` run `fn(input, additionalArg, call)`, the input parsed by the
 * zod schema as LlamaIndex's `call` does (which cannot pass a third argument: its function is
 * private); and the same for the tools its `bind()` makes (LlamaIndex builds a new FunctionTool there).
 */
function handCallTo(made: BaseTool, fn: ToolFunction<unknown>, zodSchema: ArgumentSchema | undefined, additionalArg: object | undefined): void {
  if (zodSchema) zodSchemas.set(made, zodSchema);
  const withCall = made as unknown as { call: (input: unknown, call?: ToolCallDetails) => unknown; bind?: (additionalArg: object) => BaseTool };
  withCall.call = (input, call) => fn(zodSchema ? parsedOrAsIs(zodSchema, input) : input, additionalArg, call);
  parsedCalls.set(made, { call: withCall.call, parsed: (parsed, call) => fn(parsed, additionalArg, call) });
  const bind = withCall.bind;
  if (typeof bind !== "function") return;
  withCall.bind = (boundArg: object) => {
    const bound = bind.call(made, boundArg);
    handCallTo(bound, fn, zodSchema, boundArg);
    return bound;
  };
}

/** `input` parsed by `schema`; when it fails, `input` as it is, with the failure logged, as LlamaIndex's `FunctionTool.call` does. */
function parsedOrAsIs(schema: ArgumentSchema, input: unknown): unknown {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  console.warn(parsed.error);
  return input;
}

/**
 * The function of a tool made by {@link tool}, for arguments already parsed by its zod schema
 * (so that the tool runner, which checks them, does not parse them twice: refinements that call
 * a service, and transforms, run once); `undefined` for other tools, and for one whose `call`
 * was since replaced (say, wrapped to log), which must then be called.
 * @example const result = parsedCallOf(add)?.({ x: 1, y: 2 }, { id: "c1", name: "add", idempotencyKey: undefined });
 */
export function parsedCallOf(made: BaseTool): ParsedCall | undefined {
  const known = parsedCalls.get(made);
  return known && known.call === made.call ? known.parsed : undefined;
}

/** The zod schema a tool was made with by {@link tool}, if it was. */
export function zodSchemaOf(made: BaseTool): ArgumentSchema | undefined {
  return zodSchemas.get(made);
}

export { annotateTool } from "./tool-annotations.ts";
export type { ToolAnnotations, ToolAnnotationsFor } from "./tool-annotations.ts";
export { currentToolCall } from "./current-tool-call.ts";
export type { CurrentToolCall, ToolCallDetails } from "./current-tool-call.ts";
export { bm25ToolSelector } from "./tool-selection.ts";
export type { Bm25ToolSelectorOptions, ToolSelector } from "./tool-selection.ts";
