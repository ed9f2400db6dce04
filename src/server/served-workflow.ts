/** How a workflow is registered with a server: the workflow and what the server tells clients about it. */
import type { z } from "zod";
import type { EventClass, AnyWorkflow } from "../core/internal.ts";

/**
 * A workflow the server runs under a name.
 * @example
 * const served: ServedWorkflow = { workflow: agent, description: "Chat with tools", inputSchema: z.object({ input: z.string() }) };
 */
export interface ServedWorkflow {
  readonly workflow: AnyWorkflow;
  /** One line for the workflow list. */
  readonly description?: string;
  /** Checks a run's input (a 400 names what is wrong) and describes it in the workflow list and the OpenAPI document. */
  readonly inputSchema?: z.ZodType;
  /**
   * Event classes clients may send into a run besides those the workflow accepts from outside
   * (the `HumanResponseEvent`s its steps name and its class's `fromOutside`); any other type
   * sent is refused with 403.
   */
  readonly events?: readonly EventClass[];
  /**
   * Schemas of event types by type name: an event of that type a client sends is checked
   * against it (in place of its class's `static schema`; a 400 names what is wrong), and it is
   * shown in the workflow list.
   */
  readonly eventSchemas?: Readonly<Record<string, z.ZodType>>;
}
