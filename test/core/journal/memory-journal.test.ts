import { describe, expect, it } from "vitest";
import { MemoryJournal } from "../../../src/core/journal/memory-journal.ts";

describe("MemoryJournal", () => {
  it("answers for a record while fewer than limit / 2 newer ones came, and forgets it after limit newer ones", () => {
    const journal = new MemoryJournal(4);
    expect(journal.begin("a")).toEqual({ claimed: true });
    journal.finish("a", '"done"');
    expect(journal.begin("b")).toEqual({ claimed: true });
    expect(journal.begin("a")).toEqual({ claimed: false, entry: { state: "finished", result: '"done"' } });
    for (const key of ["c", "d", "e", "f"]) journal.begin(key);
    expect(journal.begin("a")).toEqual({ claimed: true });
  });

  it("records a result for a key claimed before the generations turned over, and releases claims", () => {
    const journal = new MemoryJournal(4);
    journal.begin("a");
    journal.begin("b"); // the first generation is full: a and b are now the older one
    journal.finish("a", "1");
    expect(journal.begin("a")).toEqual({ claimed: false, entry: { state: "finished", result: "1" } });
    journal.release("b");
    expect(journal.begin("b")).toEqual({ claimed: true });
  });
});
