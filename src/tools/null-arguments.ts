/**
 * A model's `null` for an argument it leaves out, read as the argument left out. OpenAI's strict
 * mode wants every optional field declared nullable and required, so models trained on it write
 * `"unit": null` where they mean "no unit"; a tool whose schema says `unit` is optional but not
 * nullable would refuse that call, and the model, told "expected string, received null", often
 * sends the same call again. A `null` for a required field, or for one whose schema takes
 * `null`, is the model's to send and is left as it is.
 */
import { isRecord } from "../core/internal.ts";

type Json = Readonly<Record<string, unknown>>;

const MAX_DEPTH = 8; // nested objects looked into; deeper ones are left as they are

/**
 * `input` without the `null`s its tool's JSON schema `parameters` does not take for an optional
 * property (nested objects and arrays of them included, local `$ref`s followed): the key is left
 * out, as if the model had not sent it. `input` itself when there is none to leave out.
 * @example
 * const parameters = { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] };
 * withoutNullOptionals({ city: "Paris", unit: null }, parameters); // { city: "Paris" }
 * withoutNullOptionals({ city: null }, parameters); // { city: null }: required, refused by the schema check
 */
export function withoutNullOptionals(input: Readonly<Record<string, unknown>>, parameters: unknown): Readonly<Record<string, unknown>> {
  // Most calls hold no null and no object: they are passed on without reading the schema.
  for (const key in input) {
    if (typeof input[key] === "object") return objectWithout(input, parameters, parameters, 0); // null is an "object" too
  }
  return input;
}

function objectWithout(value: Json, schema: unknown, root: unknown, depth: number): Json {
  const object = followed(schema, root);
  if (!object || depth > MAX_DEPTH || !isRecord(object.properties)) return value;
  const properties = object.properties;
  const required = new Set(Array.isArray(object.required) ? object.required : []);
  let out: Record<string, unknown> | undefined;
  // for…in, not Object.entries: this runs for every call, and most have no null to drop.
  for (const key in value) {
    if (!Object.hasOwn(value, key) || !Object.hasOwn(properties, key)) continue;
    const item = value[key];
    const property = properties[key];
    if (item === null) {
      if (required.has(key) || takesNull(property, root, 0)) continue;
      out ??= { ...value };
      delete out[key];
    } else if (typeof item === "object") {
      const inner = Array.isArray(item) ? arrayWithout(item, property, root, depth + 1) : objectWithout(item as Json, property, root, depth + 1);
      if (inner !== item) (out ??= { ...value })[key] = inner;
    }
  }
  return out ?? value;
}

function arrayWithout(items: readonly unknown[], schema: unknown, root: unknown, depth: number): readonly unknown[] {
  const array = followed(schema, root);
  if (!array || depth > MAX_DEPTH || !isRecord(array.items)) return items;
  let out: unknown[] | undefined;
  items.forEach((item, at) => {
    if (!isRecord(item)) return;
    const inner = objectWithout(item, array.items, root, depth + 1);
    if (inner !== item) (out ??= [...items])[at] = inner;
  });
  return out ?? items;
}

/** Whether `schema` takes `null`: a `null` type, `nullable`, a `null` in its enum or const, a variant that does, or no type at all. */
function takesNull(schema: unknown, root: unknown, hops: number): boolean {
  if (!isRecord(schema)) return true; // `true`, or no schema: anything
  if (typeof schema.$ref === "string") {
    const target = followed(schema, root);
    return hops > MAX_DEPTH || target === undefined || takesNull(target, root, hops + 1);
  }
  if (schema.nullable === true || schema.const === null) return true;
  if (Array.isArray(schema.enum)) return schema.enum.includes(null);
  const variants = [schema.anyOf, schema.oneOf].filter(Array.isArray).flat();
  if (variants.some((variant) => takesNull(variant, root, hops + 1))) return true;
  if (Array.isArray(schema.allOf) && !schema.allOf.every((part) => takesNull(part, root, hops + 1))) return false;
  if (schema.type === undefined) return variants.length === 0 && !("const" in schema);
  return schema.type === "null" || (Array.isArray(schema.type) && schema.type.includes("null"));
}

/** `schema`, or what its local `$ref` (`#/$defs/…`, `#/definitions/…`) names in `root`. */
function followed(schema: unknown, root: unknown): Json | undefined {
  let current = schema;
  for (let hops = 0; hops <= MAX_DEPTH && isRecord(current); hops++) {
    const ref = current.$ref;
    if (typeof ref !== "string") return current;
    const [, kind, name] = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref) ?? [];
    const defs = kind && isRecord(root) ? root[kind] : undefined;
    current = name !== undefined && isRecord(defs) ? defs[name.replaceAll("~1", "/").replaceAll("~0", "~")] : undefined;
  }
  return undefined;
}
