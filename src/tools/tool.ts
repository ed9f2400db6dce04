/**
 * `tool()`: LlamaIndex's `tool()` (same arguments, same `FunctionTool`), which also remembers
 * the tool's zod schema. LlamaIndex keeps that schema private and only sends its JSON-schema
 * form to the model; checks JSON schema cannot express (`.refine()`, `.superRefine()`) are
 * then run by `FunctionTool.call`, which logs a failure and calls the tool anyway. With the schema remembered, stepflow's tool runner checks the arguments with
 * the zod schema itself and, when they fail, tells the model and does not run the tool.
 */
import type { BaseTool } from "@llamaindex/core/llms";
import { FunctionTool } from "@llamaindex/core/tools";

/** What a zod 3 or zod 4 schema offers the tool runner. */
export interface ArgumentSchema {
  safeParse(
    input: unknown,
  ): { success: true; data: unknown } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

const zodSchemas = new WeakMap<BaseTool, ArgumentSchema>();

const isZodSchema = (value: unknown): value is ArgumentSchema =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { safeParse?: unknown }).safeParse === "function" &&
  typeof (value as { parse?: unknown }).parse === "function";

/**
 * Makes a LlamaIndex `FunctionTool` whose zod schema (refinements included) the agent enforces.
 * @example
 * const transfer = tool({
 *   name: "transfer",
 *   description: "Send money.",
 *   parameters: z.object({ to: z.string(), amount: z.number().refine((n) => n > 0, "must be positive") }),
 *   execute: ({ to, amount }) => `sent ${amount} to ${to}`,
 * });
 * // the model calls transfer({ to: "bob", amount: -500 }) → it reads
 * // "Invalid arguments for tool transfer: amount: must be positive. The tool was not run; …"
 */
export const tool: typeof FunctionTool.from = ((fnOrConfig: unknown, schema?: unknown) => {
  const made = (FunctionTool.from as (fnOrConfig: unknown, schema?: unknown) => BaseTool)(fnOrConfig, schema);
  const parameters = ((schema ?? fnOrConfig) as { parameters?: unknown } | undefined)?.parameters;
  if (isZodSchema(parameters)) remember(made, parameters);
  return made;
}) as typeof FunctionTool.from;

/** Records `schema` for `made` and for the tools its `bind()` makes (LlamaIndex builds a new FunctionTool there). */
function remember(made: BaseTool, schema: ArgumentSchema): void {
  zodSchemas.set(made, schema);
  const withBind = made as BaseTool & { bind?: (additionalArg: object) => BaseTool };
  const bind = withBind.bind;
  if (typeof bind !== "function") return;
  withBind.bind = (additionalArg: object) => {
    const bound = bind.call(made, additionalArg);
    remember(bound, schema);
    return bound;
  };
}

/** The zod schema a tool was made with by {@link tool}, if it was. */
export function zodSchemaOf(made: BaseTool): ArgumentSchema | undefined {
  return zodSchemas.get(made);
}

export { currentToolCall } from "./current-tool-call.ts";
export type { CurrentToolCall } from "./current-tool-call.ts";
export { bm25ToolSelector } from "./tool-selection.ts";
export type { Bm25ToolSelectorOptions, ToolSelector } from "./tool-selection.ts";
