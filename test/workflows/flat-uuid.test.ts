import { describe, expect, it } from "vitest";
import { flatUUID } from "../../workflows/flat-uuid.ts";

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("flatUUID", () => {
  it("makes version-4 UUIDs in randomUUID's lower-case form", () => {
    for (let i = 0; i < 1000; i++) expect(flatUUID()).toMatch(V4);
  });

  it("never repeats, across many batches of entropy", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) seen.add(flatUUID());
    expect(seen.size).toBe(20_000);
  });

  it("uses every hex digit in every random position", () => {
    const ids = Array.from({ length: 2000 }, flatUUID);
    for (let position = 0; position < 36; position++) {
      if ([8, 13, 14, 18, 19, 23].includes(position)) continue; // dashes, version, variant
      expect(new Set(ids.map((id) => id[position])).size, `position ${position}`).toBe(16);
    }
  });
});
