/**
 * `stepflow/compat/workflow-core/util/zod`: upstream's `zodEvent`, an event type whose data a
 * zod schema (zod 3 or 4) checks when an event is made.
 */
import * as z4 from "zod/v4/core";
import { ConfigurationError } from "../../../index.ts";
import { workflowEvent, type WorkflowEvent, type WorkflowEventConfig } from "../event.ts";

/**
 * A zod schema of zod 4 (`zod`, `zod/v4`, `zod/mini`) or zod 3 (`zod/v3`, or a zod 3 install).
 * @example
 * import { z } from "zod";
 * import type { ZodSchema } from "stepflow/compat/workflow-core/util/zod";
 * const schema: ZodSchema<{ name: string }> = z.object({ name: z.string() });
 */
export type ZodSchema<T> = z4.$ZodType<T> | { parse(data: unknown): T; readonly _def: unknown };

/**
 * An event type with a zod schema: `.with(data)` throws zod's `ZodError` for data the schema
 * rejects, so a bad event never enters a workflow; `.schema` is the schema (an agent's event
 * tools use it as the tool's parameters).
 * @example
 * import { z } from "zod";
 * import { zodEvent } from "stepflow/compat/workflow-core/util/zod";
 * const UserEvent = zodEvent(z.object({ name: z.string(), age: z.number() }), { debugLabel: "user" });
 * UserEvent.with({ name: "Ada", age: 36 });
 * try {
 *   UserEvent.with({ name: "Ada", age: "36" } as never);
 * } catch (error) {
 *   console.log("rejected:", (error as Error).name); // "ZodError"
 * }
 */
export const zodEvent = <T, DebugLabel extends string = string>(
  schema: ZodSchema<T>,
  config?: WorkflowEventConfig<DebugLabel>,
): WorkflowEvent<T, DebugLabel> & { readonly schema: ZodSchema<T> } => {
  if (schema === null || typeof schema !== "object" || !("_zod" in schema || typeof (schema as { parse?: unknown }).parse === "function"))
    throw new ConfigurationError("zodEvent() takes a zod schema first, for example zodEvent(z.object({ name: z.string() })).", "schema", schema);
  const event = workflowEvent<T, DebugLabel>(config);
  // The schema's own parse where it has one (zod and zod/v3): it throws the `ZodError` its users
  // catch; upstream always used zod/v4/core's, which throws the core `$ZodError` instead.
  const parse =
    typeof (schema as { parse?: unknown }).parse === "function"
      ? (data: unknown) => (schema as { parse(data: unknown): T }).parse(data)
      : (data: unknown) => z4.parse(schema as z4.$ZodType<T>, data);
  event.onInit((instance) => {
    parse(instance.data);
  });
  return Object.defineProperty(event, "schema", { get: () => schema, enumerable: true }) as WorkflowEvent<T, DebugLabel> & { readonly schema: ZodSchema<T> };
};
