/**
 * What a tool says about its calls' effects, in the words of MCP's tool annotations
 * (`readOnlyHint`, `idempotentHint`): whether a call only reads, and whether making it twice
 * does no more than making it once. The agent reads them for one decision: whether a call an
 * earlier attempt started, without recording its outcome, may be made again. `mcpTools` carries
 * over what the server says, the REST tools derive them from each request's HTTP method, and
 * `annotateTool` says so for any other tool.
 */
import type { BaseTool } from "@llamaindex/core/llms";
import { ConfigurationError } from "../core/internal.ts";

/**
 * A tool's word on its calls' effects (MCP's `ToolAnnotations`, the two the agent reads).
 * @example const lookup: ToolAnnotations = { readOnlyHint: true };
 */
export interface ToolAnnotations {
  /** The call changes nothing: making it again only reads again. */
  readonly readOnlyHint?: boolean;
  /**
   * Making the call again with the same arguments (and the same idempotency key) has no effect
   * beyond the first: an HTTP PUT or DELETE, a "set" rather than an "add", or a request to an
   * API that applies a repeated `Idempotency-Key` once.
   */
  readonly idempotentHint?: boolean;
}

/** A tool's annotations: the same for every call, or read from each call's arguments (a REST tool's method). */
export type ToolAnnotationsFor = ToolAnnotations | ((input: unknown) => ToolAnnotations);

const annotated = new WeakMap<BaseTool, ToolAnnotationsFor>();

/**
 * Gives `tool` its annotations (replacing any it had) and returns it. A tool made by `tool()`
 * carries none: the agent then treats its calls as neither read-only nor idempotent, and never
 * makes one again after an attempt that may have made it (the model is told its outcome is
 * unknown). Say so for the tools that are safe to call twice.
 * @example
 * import { z } from "zod";
 * import { annotateTool, tool } from "stepflow/tools";
 * const lookup = annotateTool(
 *   tool({ name: "lookup", description: "Find an employee.", parameters: z.object({ name: z.string() }), execute: ({ name }) => `${name} is in HR` }),
 *   { readOnlyHint: true },
 * );
 */
export function annotateTool<T extends BaseTool>(tool: T, annotations: ToolAnnotationsFor): T {
  if (typeof annotations !== "function" && (typeof annotations !== "object" || annotations === null))
    throw new ConfigurationError(
      `annotateTool: give the annotations as an object, e.g. { idempotentHint: true }, or a function of the call's input; got ${String(annotations)}.`,
      "annotations",
      annotations,
    );
  annotated.set(tool, annotations);
  // LlamaIndex's FunctionTool.bind makes a new tool: it keeps its maker's word.
  const bindable = tool as unknown as { bind?: (arg: object) => BaseTool };
  const bind = bindable.bind;
  if (typeof bind === "function" && !boundCarriers.has(bind)) {
    const carrying = function (this: BaseTool, arg: object): BaseTool {
      const bound = bind.call(this, arg);
      const own = annotated.get(this);
      if (own !== undefined && !annotated.has(bound)) annotateTool(bound, own);
      return bound;
    };
    boundCarriers.add(carrying);
    bindable.bind = carrying;
  }
  return tool;
}

/** The `bind`s `annotateTool` put in place, so that annotating a tool twice wraps its `bind` once. */
const boundCarriers = new WeakSet<object>();

/**
 * What `tool` says about a call with `input`; `undefined` when it says nothing.
 * @example toolAnnotationsOf(lookup, { name: "Ada" }); // { readOnlyHint: true }
 */
export function toolAnnotationsOf(tool: BaseTool, input: unknown): ToolAnnotations | undefined {
  const annotations = annotated.get(tool);
  return typeof annotations === "function" ? annotations(input) : annotations;
}
