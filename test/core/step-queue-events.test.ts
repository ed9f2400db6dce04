/**
 * A step's queue read as events (what a server counts a run holds) without taking anything
 * out of it: ids queued out of order, executions made already and chunks past the first all
 * read in order, and the queue gives the same executions afterwards.
 */
import { describe, expect, it } from "vitest";
import { Event } from "../../src/index.ts";
import { newExecution } from "../../src/core/run-state.ts";
import type { StepSlot } from "../../src/core/run-state.ts";
import { StepQueue } from "../../src/core/step-queue.ts";

class Item extends Event<{ n: number }> {}

describe("StepQueue.events", () => {
  it("reads every queued event in order and leaves the queue as it was", () => {
    const slot = { step: { name: "work" } } as unknown as StepSlot;
    const queue = new StepQueue(slot);
    const items = Array.from({ length: 12 }, (_, n) => new Item({ n }));
    // Ids 1, 2, then a gap (7…), an execution made already, then enough to fill several chunks.
    queue.push(items[0] as Item, 1);
    queue.push(items[1] as Item, 2);
    queue.push(items[2] as Item, 7);
    queue.pushExecution(newExecution(slot, items[3] as Item, "restored-id", undefined));
    for (let n = 4; n < 12; n++) queue.push(items[n] as Item, 4 + n);

    expect([...queue.events()]).toEqual(items);
    expect([...queue.events()]).toEqual(items);
    expect(queue.size).toBe(12);
    const taken: { n: number; id: number | string }[] = [];
    for (let execution = queue.shift(); execution; execution = queue.shift()) taken.push({ n: (execution.event as Item).n, id: execution.id });
    expect(taken).toEqual([
      { n: 0, id: 1 },
      { n: 1, id: 2 },
      { n: 2, id: 7 },
      { n: 3, id: "restored-id" },
      ...Array.from({ length: 8 }, (_, i) => ({ n: 4 + i, id: 8 + i })),
    ]);
    expect([...queue.events()]).toEqual([]);
  });
});
