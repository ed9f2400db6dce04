import { describe, expect, it } from "vitest";
import { OnceRecords } from "../../src/core/once-records.ts";
import type { OnceRecord } from "../../src/core/step-once.ts";

const finished = (value: number): OnceRecord => ({ state: "finished", value });

describe("OnceRecords", () => {
  it("answers as a Map would, through any mix of sets and deletes, with names past the first two", () => {
    const records = new OnceRecords();
    const map = new Map<string, OnceRecord>();
    // A fixed sequence of pseudo-random operations over 6 names: sets, overwrites, deletes, re-sets.
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    for (let i = 0; i < 2_000; i++) {
      const name = `call ${next() % 6}`;
      if (next() % 3 === 0) expect(records.delete(name)).toBe(map.delete(name));
      else {
        const record = finished(i);
        records.set(name, record);
        map.set(name, record);
      }
      expect(records.size).toBe(map.size);
      expect(records.get(name)).toBe(map.get(name));
    }
    expect(new Map(records)).toEqual(map);
  });

  it("keeps a name once, in the slot it first took, when it is set again", () => {
    const records = new OnceRecords().set("reply", { state: "started" }).set("turn", { state: "started" }).set("call c1", { state: "started" });
    records.set("turn", finished(1));
    records.set("call c1", finished(2));
    expect([...records]).toEqual([
      ["reply", { state: "started" }],
      ["turn", finished(1)],
      ["call c1", finished(2)],
    ]);
    expect(records.delete("absent")).toBe(false);
  });
});
