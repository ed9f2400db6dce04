/** LoadBatch: the loads of many sessions asked for at once are read by few statements, and each caller gets its own answer. */
import { describe, expect, it } from "vitest";
import { LoadBatch } from "../../src/sessions/load-batch.ts";

/** A reader that records each statement it was asked to run; session "broken-…" ids make the whole statement fail. */
function recordingReader() {
  const statements: { ids: readonly string[]; newest: number }[] = [];
  const read = async (ids: readonly string[], newest: number) => {
    statements.push({ ids, newest });
    if (ids.some((id) => id.startsWith("broken"))) throw new Error("the database went away");
    return new Map(ids.filter((id) => !id.startsWith("missing")).map((id) => [id, `row of ${id} (newest ${newest})`]));
  };
  return { statements, read };
}

describe("LoadBatch", () => {
  it("reads the loads asked for together in one statement per 100 sessions and window size", async () => {
    const { statements, read } = recordingReader();
    const loads = new LoadBatch(read);
    const ids = Array.from({ length: 250 }, (_, i) => `s${i}`);
    const rows = await Promise.all([...ids.map((id) => loads.load(id, 64)), loads.load("s0", 1), loads.load("missing-1", 64), loads.load("s1", 64)]);
    expect(rows.slice(0, 250)).toEqual(ids.map((id) => `row of ${id} (newest 64)`));
    expect(rows.slice(250)).toEqual(["row of s0 (newest 1)", undefined, "row of s1 (newest 64)"]);
    expect(statements.map((s) => [s.newest, s.ids.length])).toEqual([
      [64, 100],
      [64, 100],
      [64, 52], // 50 sessions, "missing-1", and "s1" once though asked for twice
      [1, 1],
    ]);
    await loads.load("s9", 64); // a load alone is read alone
    expect(statements.at(-1)).toEqual({ ids: ["s9"], newest: 64 });
  });

  it("fails only the loads that shared the failed statement", async () => {
    const { read } = recordingReader();
    const loads = new LoadBatch(read);
    const outcomes = await Promise.allSettled([loads.load("a", 64), loads.load("broken-b", 64), loads.load("c", 8)]);
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message))).toEqual([
      "the database went away",
      "the database went away",
      "row of c (newest 8)",
    ]);
  });

  it("answers the callers a few per turn of the event loop, so timers run in between", async () => {
    const { read } = recordingReader();
    const loads = new LoadBatch(read);
    let answered = 0;
    let answeredBeforeTheLoopTurned: number | undefined;
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        loads.load(`s${i}`, 64).then(() => {
          if (answered++ === 0) setImmediate(() => (answeredBeforeTheLoopTurned = answered));
        }),
      ),
    );
    expect(answered).toBe(100);
    expect(answeredBeforeTheLoopTurned).toBeGreaterThan(0);
    expect(answeredBeforeTheLoopTurned).toBeLessThan(50);
  });
});
