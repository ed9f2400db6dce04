import { describe, expect, it } from "vitest";
import { isRecord } from "../../src/core/is-record.ts";

describe("isRecord", () => {
  it("is true for an object whose keys can be read, false for null, arrays and primitives", () => {
    expect([{}, { a: 1 }, Object.create(null), new Map(), null, [], "x", 1, undefined].map((value) => isRecord(value))).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
