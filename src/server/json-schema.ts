/** Zod schemas as the JSON Schema the server shows clients: its workflow list, its OpenAPI document, its refusals. */
import { z } from "zod";
import type { JsonObject } from "../client/types.ts";

/**
 * A zod schema as JSON Schema (what cannot be expressed is left open rather than failing the list).
 * @example jsonSchema(z.object({ input: z.string() })); // { type: "object", properties: { input: { type: "string" } }, … }
 */
export function jsonSchema(schema: z.ZodType): JsonObject {
  return z.toJSONSchema(schema, { unrepresentable: "any", io: "input" }) as JsonObject;
}
