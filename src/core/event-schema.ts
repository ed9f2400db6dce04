/**
 * An event class's own runtime schema (`static readonly schema`): what its fields must be when
 * they come from outside the program (a server's clients), where TypeScript's types check
 * nothing. Read as any object with zod's `safeParse`, so the engine loads no zod of its own.
 */
import { ConfigurationError } from "./errors.ts";
import { eventTypeName } from "./event.ts";
import type { EventClass } from "./event.ts";

/**
 * A schema of an event's fields: any object with zod's `safeParse` (a `z.object({...})`,
 * zod 3 or 4). Its output is what the event is built from, defaults and transforms applied.
 * @example
 * const answerSchema = z.object({ response: z.string().min(1) });
 * class Answer extends HumanResponseEvent<z.output<typeof answerSchema>> {
 *   static readonly schema = answerSchema;
 * }
 */
export interface EventSchema<T extends object = object> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

/** One thing wrong with an event's fields: where (`data.response`) and what. @example `{ path: "data.response", message: "Invalid input: expected string, received undefined" }` */
export interface EventFieldProblem {
  readonly path: string;
  readonly message: string;
}

/** What {@link checkEventFields} found: the fields to build the event from, or what is wrong (and the schema it was checked against). @example `const checked: CheckedEventFields = { ok: true, fields: { response: "yes" } };` */
export type CheckedEventFields =
  { readonly ok: true; readonly fields: object } | { readonly ok: false; readonly problems: readonly EventFieldProblem[]; readonly schema: EventSchema };

/**
 * The class's own `static schema`, or undefined when it declares none. Only the class's own:
 * routing is by exact class, and a parent's schema would drop the fields a subclass adds.
 * A `schema` that is not one is a mistake in the program, refused with a `ConfigurationError`.
 * @example
 * eventSchemaOf(Answer)?.safeParse({ response: "yes" }); // { success: true, data: { response: "yes" } }
 */
export function eventSchemaOf(cls: EventClass): EventSchema | undefined {
  const own = Object.getOwnPropertyDescriptor(cls, "schema")?.value as unknown;
  if (own === undefined) return undefined;
  if (typeof (own as { safeParse?: unknown } | null)?.safeParse !== "function")
    throw new ConfigurationError(
      `${eventTypeName(cls)}.schema must be a zod schema of the event's fields, e.g. static readonly schema = z.object({ response: z.string() }).`,
      "schema",
      own,
    );
  return own as EventSchema;
}

/**
 * Checks `fields` (the data a client sent, as `data`) against the class's schema (or `schema`,
 * one the caller gives in its place: a server's `eventSchemas`). Without a
 * schema the fields are taken as they are; with one, the event is built from the schema's
 * output, so its defaults fill what was left out and keys it does not know are dropped.
 * @example
 * checkEventFields(Answer, { reply: "yes" });
 * // { ok: false, problems: [{ path: "data.response", message: "Invalid input: expected string, received undefined" }] }
 */
export function checkEventFields(cls: EventClass, fields: object, schema: EventSchema | undefined = eventSchemaOf(cls)): CheckedEventFields {
  if (!schema) return { ok: true, fields };
  const parsed = schema.safeParse(fields);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => ({ path: ["data", ...issue.path.map(String)].join("."), message: issue.message }));
    return { ok: false, problems, schema };
  }
  const data: unknown = parsed.data;
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw new ConfigurationError(
      `${eventTypeName(cls)}.schema must give an object (the event's fields); it gave ${Array.isArray(data) ? "an array" : typeof data}. Make it a z.object({ ... }) whose transforms, if any, return the fields.`,
      "schema",
      data,
    );
  return { ok: true, fields: data };
}
