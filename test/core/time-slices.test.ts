import { describe, expect, it } from "vitest";
import { type Context, Event, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import { currentSlice, inNextSlice, nextSlice, sliceSpent, workDone } from "../../src/core/time-slices.ts";

class Halfway extends Event<{ n: number }> {}

/** Two steps, each with an await inside, as real steps have; counts the steps run. */
function countingFlow() {
  const ran = { first: 0, second: 0 };
  class TwoSteps extends Workflow<{ n: number }, number> {
    @step({ accepts: [StartEvent], emits: [Halfway] })
    async first(_ctx: Context, ev: StartEvent<{ n: number }>) {
      await Promise.resolve();
      ran.first++;
      return new Halfway({ n: ev.n });
    }

    @step({ accepts: [Halfway], emits: [StopEvent] })
    async second(_ctx: Context, ev: Halfway) {
      await Promise.resolve();
      ran.second++;
      return new StopEvent({ result: ev.n * 2 });
    }
  }
  return { flow: new TwoSteps({ timeout: null }), ran };
}

describe("time slices shared by all runs", () => {
  it("many runs started at once leave the event loop a turn before all their steps ran, and all finish", async () => {
    const { flow, ran } = countingFlow();
    const steps = () => ran.first + ran.second;
    const atFirstTurn = new Promise<number>((resolve) => setImmediate(() => resolve(steps())));
    const runs = Array.from({ length: 500 }, (_, n) => flow.run({ n }));
    // Without slices, all 1,000 steps would run in microtasks before the event loop turns.
    expect(await atFirstTurn).toBeGreaterThan(0);
    expect(await atFirstTurn).toBeLessThan(1_000);
    expect(await Promise.all(runs)).toEqual(Array.from({ length: 500 }, (_, n) => n * 2));
    expect(ran).toEqual({ first: 500, second: 500 });
  });

  it("a few runs started at once run their steps before the event loop turns", async () => {
    await new Promise((resolve) => setImmediate(resolve)); // a fresh slice: not the end of the one the test before filled
    const { flow, ran } = countingFlow();
    const atFirstTurn = new Promise<number>((resolve) => setImmediate(() => resolve(ran.first + ran.second)));
    const runs = Array.from({ length: 10 }, (_, n) => flow.run({ n }));
    expect(await atFirstTurn).toBe(20);
    expect(await Promise.all(runs)).toEqual(Array.from({ length: 10 }, (_, n) => n * 2));
  });

  it("work past the end of a slice continues in a later turn, callbacks and promises alike, in arrival order", async () => {
    await new Promise((resolve) => setImmediate(resolve)); // a fresh slice
    const counted: number[] = [];
    let spent = false;
    for (let i = 0; i < 10_000 && !spent; i++) {
      if (sliceSpent()) spent = true;
      else counted.push(currentSlice());
    }
    expect(spent).toBe(true);
    const order: string[] = [];
    const last = new Promise<void>((resolve) => {
      inNextSlice(() => order.push("first"));
      void nextSlice().then(() => order.push("second"));
      inNextSlice(() => {
        order.push("third");
        resolve();
      });
    });
    await Promise.resolve();
    expect(order).toEqual([]); // nothing before the event loop turns
    await last;
    expect(order).toEqual(["first", "second", "third"]);
    for (const slice of counted) workDone(slice);
  });
});
