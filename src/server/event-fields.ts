/**
 * What the server tells a client whose event's data does not fit the event class's schema:
 * each problem (where, and what was wrong), and the fields the event takes.
 */
import type { z } from "zod";
import type { EventFieldProblem, EventSchema } from "../core/internal.ts";
import { jsonSchema } from "./json-schema.ts";

/**
 * The message of the 400 refusing an event's data: its problems, then what the event takes.
 * `at`: where the event sits, for one inside a context (`run.queued["ship"][0]`).
 * @example
 * eventFieldsRefusal("Answer", answerSchema, [{ path: "data.response", message: "Invalid input: expected string, received undefined" }]);
 * // 'The Answer does not fit its schema: data.response: Invalid input: expected string, received undefined. Answer takes { response: string } (its JSON Schema is in GET /api/workflows).'
 */
export function eventFieldsRefusal(type: string, schema: EventSchema, problems: readonly EventFieldProblem[], at?: string): string {
  const listed = problems.map((p) => `${p.path}: ${p.message}`).join("; ");
  const takes = fieldsTaken(schema);
  const which = at === undefined ? type : `${type} at ${at}`;
  return `The ${which} does not fit its schema: ${listed}. ${type} takes ${takes ?? "the fields of its schema"} (its JSON Schema is in GET /api/workflows).`;
}

/** `{ response: string, tone?: string }`: the top-level fields of a schema, from its JSON Schema; undefined when it has none to show. */
function fieldsTaken(schema: EventSchema): string | undefined {
  let json: { properties?: Record<string, { type?: unknown }>; required?: string[] };
  try {
    // A zod 3 schema (or another library's) has no JSON Schema here: the message then names none.
    json = jsonSchema(schema as unknown as z.ZodType) as typeof json;
  } catch {
    return undefined;
  }
  if (json.properties === undefined) return undefined;
  const required = new Set(json.required ?? []);
  const fields = Object.entries(json.properties).map(([key, prop]) => {
    const name = required.has(key) ? key : `${key}?`;
    return typeof prop.type === "string" ? `${name}: ${prop.type}` : name;
  });
  return `{ ${fields.join(", ")} }`;
}
