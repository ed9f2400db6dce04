import { describe, expect, it } from "vitest";
import { Context, ContextStateError, Event, RunLocal, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";

class Again extends Event<{ n: number }> {}
const calls = new RunLocal<{ count: number }>();

/** Loops three times, counting its steps in a RunLocal. */
class Counted extends Workflow<Record<string, never>, number> {
  @step({ accepts: [StartEvent, Again], emits: [Again, StopEvent] })
  async loop(ctx: Context, ev: StartEvent | Again) {
    const state = calls.get(ctx) ?? calls.set(ctx, { count: 0 });
    state.count++;
    const n = ev instanceof Again ? ev.n : 0;
    return n < 2 ? new Again({ n: n + 1 }) : new StopEvent({ result: state.count });
  }
}

describe("RunLocal", () => {
  it("keeps one value per run: a second run on the same context starts without one, and nothing is saved", async () => {
    const flow = new Counted();
    const ctx = new Context(flow);
    expect(await flow.run({}, { ctx })).toBe(3);
    expect(calls.get(ctx)).toEqual({ count: 3 }); // the last run's, read from outside
    expect(await flow.run({}, { ctx })).toBe(3);
    expect(JSON.stringify(ctx.toJSON())).not.toContain("count");
  });

  it("refuses a set on a context that never ran, saying where to call it", () => {
    expect(() => calls.set(new Context(new Counted()), { count: 0 })).toThrow(ContextStateError);
    expect(calls.get(new Context(new Counted()))).toBeUndefined();
  });
});
