/**
 * A tool's JSON schema as a zod schema the tool runner can check calls with. zod reads most of
 * JSON Schema but refuses a whole schema for one keyword it does not take (`not`, `if`/`then`,
 * `dependentRequired`, `unevaluatedProperties`, a `$ref` to another document) or for draft-07's
 * `#/definitions/…` refs, which zod-to-json-schema and many MCP servers write. A tool whose
 * schema zod refused was run with whatever the model sent; here those parts alone are left
 * unchecked, and every type, required field and enum around them is still checked.
 */
import { z } from "zod";
import { isRecord } from "../core/internal.ts";
import type { ArgumentSchema } from "./tool.ts";

// Keywords zod's fromJSONSchema refuses: left out, so what they add is not checked.
const UNREAD = new Set(["not", "if", "then", "else", "dependentRequired", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems"]);
// Keywords whose value is a map of names to schemas (a property called `not` is a name, not the keyword).
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions"]);
// Keywords whose value is a schema, or a list of schemas.
const SCHEMAS = new Set(["items", "additionalItems", "additionalProperties", "propertyNames", "contains", "allOf", "anyOf", "oneOf", "prefixItems"]);

/**
 * A zod schema checking calls against `parameters`: all of it when zod reads it, else all but
 * the parts zod cannot read; `null` when even that fails (the tool then checks its own input).
 * @example checkableSchema({ type: "object", properties: { id: { type: "integer", not: { const: 0 } } }, required: ["id"] })?.safeParse({}).success; // false
 */
export function checkableSchema(parameters: unknown): ArgumentSchema | null {
  try {
    return z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]) as ArgumentSchema;
  } catch {
    // one part zod cannot read: check the rest
  }
  try {
    return z.fromJSONSchema(readable(parameters) as Parameters<typeof z.fromJSONSchema>[0]) as ArgumentSchema;
  } catch {
    return null;
  }
}

/**
 * `schema` without what zod cannot read, its definitions where zod looks for them: under
 * `definitions` for a schema that says it is draft-04 to 07, else under `$defs`, whichever of the
 * two its `$ref`s name (schemas without `$schema` often keep draft-07's `definitions`).
 */
function readable(schema: unknown, defsKey?: "$defs" | "definitions"): unknown {
  if (Array.isArray(schema)) return schema.map((part) => readable(part, defsKey));
  if (!isRecord(schema)) return schema;
  const root = defsKey === undefined;
  const key$ = root ? (typeof schema.$schema === "string" && /draft-0[4-7]/.test(schema.$schema) ? "definitions" : "$defs") : defsKey;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (UNREAD.has(key)) continue;
    if (key === "$ref") {
      if (typeof value !== "string" || !value.startsWith("#")) continue; // another document's: unchecked
      out.$ref = value.replace(/^#\/(?:definitions|\$defs)\//, `#/${key$}/`);
    } else if (SCHEMA_MAPS.has(key) && isRecord(value)) {
      const map = Object.fromEntries(Object.entries(value).map(([name, part]) => [name, readable(part, key$)]));
      const target = root && (key === "$defs" || key === "definitions") ? key$ : key;
      out[target] = { ...(out[target] as object | undefined), ...map };
    } else if (SCHEMAS.has(key)) {
      out[key] = readable(value, key$);
    } else {
      out[key] = value; // a value, not a schema: enum, const, default, required, …
    }
  }
  return out;
}
