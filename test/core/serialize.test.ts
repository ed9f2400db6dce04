import { describe, expect, it } from "vitest";
import { Event } from "../../src/core/event.ts";
import { Codecs, ContextSerdeError, decodeEvent, decodeValue, encodeEvent, encodeValue } from "../../src/core/serialize.ts";
import type { Codec } from "../../src/core/serialize.ts";

class Box {
  constructor(readonly inner: unknown) {}
}

describe("encodeValue", () => {
  it("returns numbers, strings, booleans and null as they are, and rejects what JSON cannot hold", () => {
    expect(encodeValue(3, "x")).toBe(3);
    expect(encodeValue("a", "x")).toBe("a");
    expect(encodeValue(false, "x")).toBe(false);
    expect(encodeValue(null, "x")).toBeNull();
    expect(() => encodeValue(Number.NaN, 'store key "n"')).toThrow(/store key "n" is NaN/);
    expect(() => encodeValue(undefined, "the result")).toThrow(/the result holds a undefined/);
  });

  it("encodes values nested in a codec's own encoding, with paths and cycles of each call its own", () => {
    // A codec that encodes what it holds with encodeValue: a call inside a call.
    const boxCodec: Codec = {
      test: (v) => v instanceof Box,
      encode: (box) => encodeValue((box as Box).inner, "box", codecs),
      decode: (json) => new Box(decodeValue(json, "box", codecs)),
    };
    const codecs = new Codecs({ Box: boxCodec });
    const shared = { n: 1 };
    const value = { a: [new Box({ deep: [shared, new Box([shared, 2])] })], b: shared };
    const json = encodeValue(value, 'store key "v"', codecs);
    expect(json).toEqual({
      a: [{ $codec: "Box", value: { deep: [{ n: 1 }, { $codec: "Box", value: [{ n: 1 }, 2] }] } }],
      b: { n: 1 },
    });
    expect(decodeValue(json, "v", codecs)).toEqual(value);

    const inner: Record<string, unknown> = {};
    inner.self = inner;
    const failing = { ok: [1, 2], box: new Box({ list: [inner] }) };
    const error = (() => {
      try {
        encodeValue(failing, 'store key "w"', codecs);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ContextSerdeError);
    expect((error as Error).message).toMatch(/codec "Box" failed on store key "w"\.box: .*box\.list\[0\]\.self refers back to box\.list\[0\] \(a cycle\)/);
  });

  it("keeps an own __proto__ field (JSON.parse makes them) as a field, not as the copy's prototype", () => {
    const value = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as object;
    const json = encodeValue(value, "v");
    expect(Object.getPrototypeOf(json)).toBe(Object.prototype);
    expect(JSON.stringify(json)).toBe('{"__proto__":{"x":1},"y":2}');
    expect(decodeValue(json, "v")).toStrictEqual(value);
  });

  it("encodes again after a call failed midway, without the failed call's values in its way", () => {
    const a = { x: 1 };
    expect(() => encodeValue({ a, list: [a, { bad: Number.POSITIVE_INFINITY }] }, "first")).toThrow(/first\.list\[1\]\.bad is Infinity/);
    // The same objects, at the same depths, are no cycle in the next call.
    expect(encodeValue({ a, list: [a, { fine: 2 }] }, "second")).toEqual({ a: { x: 1 }, list: [{ x: 1 }, { fine: 2 }] });
    const loop: unknown[] = [];
    loop.push([loop]);
    expect(() => encodeValue({ loop }, "third")).toThrow(/third\.loop\[0\]\[0\] refers back to third\.loop \(a cycle\)/);
  });
});

describe("encodeEvent", () => {
  class Order extends Event<{ id: string; lines: { sku: string }[]; note?: string; self?: unknown }> {}

  it("saves an event's own fields, and restores the same event", () => {
    const order = new Order({ id: "A-1", lines: [{ sku: "x" }], note: undefined });
    const saved = encodeEvent(order, "event");
    expect(saved).toEqual({ type: "Order", data: { id: "A-1", lines: [{ sku: "x" }] } });
    expect(Object.getPrototypeOf(saved.data)).toBe(Object.prototype);
    expect(decodeEvent(saved, new Map([["Order", Order]]), "event")).toStrictEqual(new Order({ id: "A-1", lines: [{ sku: "x" }] }));
  });

  it("says which field is not JSON, an event that holds itself included", () => {
    expect(() => encodeEvent(new Order({ id: "A-1", lines: [{ sku: "x" }], note: new Map() as never }), "queued[0]")).toThrow(
      /queued\[0\]\.note holds a Map object, which is not JSON/,
    );
    const order = new Order({ id: "A-1", lines: [] });
    order.self = order;
    expect(() => encodeEvent(order, "queued[0]")).toThrow(/queued\[0\]\.self holds a Order object, which is not JSON/);
  });
});
