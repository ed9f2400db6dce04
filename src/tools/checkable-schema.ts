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
 * the parts zod cannot read; when even that fails (a Python regex in a `pattern`, a `$ref` to a
 * definition the schema does not have), the check of {@link topLevelSchema}. `null` only when
 * `parameters` is not an object.
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
    return isRecord(parameters) ? topLevelSchema(parameters) : null;
  }
}

type Issue = { path: readonly PropertyKey[]; message: string };
const JSON_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/**
 * The check of a schema zod cannot read at all: the arguments' `required` properties are there,
 * each property's top-level `type` is right, and, when `additionalProperties` is `false`, there
 * are no others. Less than the schema says, but a hallucinated call (a missing or misnamed
 * argument, a number as text) is told to the model instead of reaching the tool.
 * @example
 * topLevelSchema({ type: "object", properties: { date: { type: "string", pattern: "(?P<y>\\d{4})" } }, required: ["date"] }).safeParse({});
 * // { success: false, error: { issues: [{ path: ["date"], message: "missing: it is required (a string)" }] } }
 */
export function topLevelSchema(parameters: Readonly<Record<string, unknown>>): ArgumentSchema {
  const properties = isRecord(parameters.properties) ? parameters.properties : {};
  const required = Array.isArray(parameters.required) ? parameters.required.filter((name): name is string => typeof name === "string") : [];
  const closed = parameters.additionalProperties === false;
  return {
    safeParse(input) {
      if (!isRecord(input)) return { success: false, error: { issues: [{ path: [], message: `expected a JSON object, got ${typeOfJson(input)}` }] } };
      const issues: Issue[] = [];
      for (const name of required) {
        if (input[name] === undefined) issues.push({ path: [name], message: `missing: it is required${typeHint(properties[name])}` });
      }
      for (const [name, value] of Object.entries(input)) {
        if (!Object.hasOwn(properties, name)) {
          if (closed) issues.push({ path: [name], message: `not an argument of this tool; it takes ${Object.keys(properties).join(", ") || "none"}` });
          continue;
        }
        const types = declaredTypes(properties[name]);
        if (types && value !== undefined && !types.some((type) => isOfType(value, type)))
          issues.push({ path: [name], message: `expected ${types.join(" or ")}, got ${typeOfJson(value)}` });
      }
      return issues.length > 0 ? { success: false, error: { issues } } : { success: true, data: input };
    },
  };
}

/** The JSON types a property's schema names at its top, if it names only types this check knows. */
function declaredTypes(schema: unknown): readonly string[] | undefined {
  if (!isRecord(schema)) return undefined;
  const types = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type : undefined;
  if (!types || types.length === 0 || !types.every((type): type is string => typeof type === "string" && JSON_TYPES.has(type))) return undefined;
  return schema.nullable === true && !types.includes("null") ? [...types, "null"] : types;
}

function typeHint(schema: unknown): string {
  const types = declaredTypes(schema);
  return types ? ` (${types.map((type) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`)).join(" or ")})` : "";
}

function isOfType(value: unknown, type: string): boolean {
  if (type === "integer") return Number.isInteger(value);
  if (type === "number") return typeof value === "number" && Number.isFinite(value);
  return typeOfJson(value) === type;
}

/** The JSON type of `value`, as JSON Schema names it (`integer` is a `number` here). */
function typeOfJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "object" ? "object" : typeof value;
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
