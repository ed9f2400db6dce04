/**
 * `checkEventFields`: an event class's own `static schema` checks fields given as data, names
 * each problem by its path under `data`, and gives the schema's output to build the event from.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigurationError, HumanResponseEvent, checkEventFields, eventSchemaOf } from "../../src/index.ts";
import type { EventSchema } from "../../src/index.ts";

const orderSchema = z.object({ items: z.array(z.object({ sku: z.string(), count: z.number().int().default(1) })) });
class Order extends HumanResponseEvent<z.output<typeof orderSchema>> {
  static readonly schema = orderSchema;
}
class RushOrder extends Order {}
class Plain extends HumanResponseEvent<{ response: string }> {}

describe("checkEventFields", () => {
  it("names each problem by its path under data", () => {
    expect(checkEventFields(Order, { items: [{ sku: 7 }, { sku: "b", count: 1.5 }] })).toMatchObject({
      ok: false,
      problems: [
        { path: "data.items.0.sku", message: "Invalid input: expected string, received number" },
        { path: "data.items.1.count", message: "Invalid input: expected int, received number" },
      ],
    });
  });

  it("gives the schema's output, defaults filled in and unknown keys dropped", () => {
    expect(checkEventFields(Order, { items: [{ sku: "a" }], note: "rush" })).toEqual({ ok: true, fields: { items: [{ sku: "a", count: 1 }] } });
  });

  it("takes the fields as they are for a class without a schema of its own", () => {
    const fields = { anything: true };
    expect(checkEventFields(Plain, fields)).toEqual({ ok: true, fields });
    // A subclass does not inherit its parent's schema, which would drop the fields it adds.
    expect(eventSchemaOf(RushOrder)).toBeUndefined();
    expect(checkEventFields(RushOrder, fields)).toEqual({ ok: true, fields });
  });

  it("refuses a schema that does not give an object", () => {
    class Word extends HumanResponseEvent<{ word: string }> {
      static readonly schema = z.object({ word: z.string() }).transform((fields) => fields.word) as unknown as EventSchema;
    }
    expect(() => checkEventFields(Word, { word: "x" })).toThrow(ConfigurationError);
    expect(() => checkEventFields(Word, { word: "x" })).toThrow(
      "Word.schema must give an object (the event's fields); it gave string. Make it a z.object({ ... }) whose transforms, if any, return the fields.",
    );
  });

  it("accepts a zod object as an EventSchema typed by its output", () => {
    const schema: EventSchema<z.output<typeof orderSchema>> = orderSchema;
    expect(schema.safeParse({ items: [] }).success).toBe(true);
  });
});
