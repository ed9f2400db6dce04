import { describe, expect, it } from "vitest";
import { describeValue } from "../../src/core/user-text.ts";

describe("describeValue", () => {
  it("shows a value as an error message names it: data as JSON, code by name, an instance by its class", () => {
    class Money {
      constructor(readonly cents: number) {}
    }
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(
      [undefined, null, 42, true, "yes", { approved: "yes" }, [1, 2], String, () => 1, new Money(5), new Map(), cycle].map((value) => describeValue(value)),
    ).toEqual([
      "undefined",
      "null",
      "42",
      "true",
      'the string "yes"',
      '{"approved":"yes"}',
      "[1,2]",
      "the function String",
      "the function (anonymous)",
      "an object (Money)",
      "an object (Map)",
      "an object (Object) that JSON cannot write",
    ]);
  });

  it("cuts a long value, saying how long it was", () => {
    expect(describeValue("a".repeat(500))).toBe(`the string "${"a".repeat(200)}…" (500 characters)`);
    expect(describeValue({ text: "b".repeat(500) })).toBe(`{"text":"${"b".repeat(191)}… (511 characters)`);
  });
});
