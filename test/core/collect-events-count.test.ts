/**
 * `collectEvents(ev, Done, { count })`, and a fresh list at each call: the same sets as one
 * constant list, in the same buffer; a fresh list that differs from the last anywhere is
 * another list.
 */
import { describe, expect, it } from "vitest";
import { ConfigurationError, Event, StartEvent, StopEvent, Workflow, step, type Context } from "../../src/index.ts";

class Part extends Event<{ n: number }> {}
class Other extends Event<{ n: number }> {}

/** Sends `parts` Parts; the gather step collects them in sets of `size` with `collect`, and the run returns the sets. */
function gatherer(parts: number, size: number, collect: (ctx: Context, ev: Part, calls: number) => Part[] | null) {
  class Gather extends Workflow<{}, number[][]> {
    sets: number[][] = [];
    calls = 0;
    @step({ accepts: [StartEvent], emits: [Part] })
    async start(ctx: Context) {
      for (let n = 1; n <= parts; n++) ctx.sendEvent(new Part({ n }));
    }
    @step({ accepts: [Part], emits: [StopEvent] })
    async gather(ctx: Context, ev: Part) {
      const self = this as Gather;
      const set = collect(ctx, ev, self.calls++);
      if (set) self.sets.push(set.map((p) => p.n));
      return self.sets.length * size === parts ? new StopEvent({ result: self.sets }) : undefined;
    }
  }
  return new Gather({ timeout: 10 });
}

describe("collectEvents of many events of one class", () => {
  it("{ count } returns the events in arrival order once that many arrived, then starts again", async () => {
    const flow = gatherer(6, 3, (ctx, ev) => ctx.collectEvents(ev, Part, { count: 3 }));
    expect(await flow.run({})).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });

  it("a fresh Array(n).fill(Part) at each call gives the same sets as { count }", async () => {
    const flow = gatherer(6, 3, (ctx, ev) => ctx.collectEvents(ev, Array<typeof Part>(3).fill(Part)));
    expect(await flow.run({})).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });

  it("{ count: n } and a list of n times the class share one buffer", async () => {
    // Calls alternate between the two forms; one buffer gathers them all.
    const flow = gatherer(4, 4, (ctx, ev, calls) =>
      calls % 2 === 0 ? ctx.collectEvents(ev, Part, { count: 4 }) : ctx.collectEvents(ev, [Part, Part, Part, Part]),
    );
    expect(await flow.run({})).toEqual([[1, 2, 3, 4]]);
  });

  it("a fresh list that differs from the last only in its last class is another list, with its own buffer", async () => {
    // Part 1 goes to the buffer of [Part, Part], part 2 to that of [Part, Other], part 3 completes [Part, Part].
    const lists = [() => [Part, Part], () => [Part, Other], () => [Part, Part]];
    const flow = gatherer(3, 3, (ctx, ev, calls) => {
      const set = ctx.collectEvents(ev, (lists[calls] as () => (typeof Part)[])());
      return set ? [...set, new Part({ n: 0 })] : null;
    });
    expect(await flow.run({})).toEqual([[1, 3, 0]]);
  });

  it("a count that is not a whole number ≥ 0 is a ConfigurationError naming it", async () => {
    const errors: unknown[] = [];
    const flow = gatherer(1, 1, (ctx, ev) => {
      for (const count of [-1, 1.5, Number.NaN]) {
        try {
          ctx.collectEvents(ev, Part, { count });
        } catch (error) {
          errors.push(error);
        }
      }
      return ctx.collectEvents(ev, Part, { count: 1 });
    });
    expect(await flow.run({})).toEqual([[1]]);
    expect(errors).toHaveLength(3);
    for (const error of errors) {
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).option).toBe("count");
      expect((error as Error).message).toMatch(/count must be a whole number ≥ 0/);
    }
  });
});
