/**
 * A fan-out runs its steps in the same order, with the same execution ids, whether or not
 * anyone follows the run: a run with a verbose log takes the engine's general path for every
 * step return and every event sent, an unobserved run its shortcuts for the common cases (a
 * step with a queue behind it, a step that returns nothing, an event sent to one step).
 */
import { describe, expect, it } from "vitest";
import { type Context, Event, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";

class Item extends Event<{ n: number }> {}
class Again extends Event<{ n: number }> {}
class Done extends Event<{ n: number }> {}

/** What each step did, in order: its name, the item and the number of its execution id. */
type Log = string[];

class FanOut extends Workflow<{ items: number }, Log> {
  log: Log = [];
  seen = 0;

  constructor(
    readonly items: number,
    verbose: boolean,
  ) {
    super({ timeout: null, verbose, log: () => {} });
  }

  #note(ctx: Context, what: string): void {
    const id = ctx.stepExecution?.executionId ?? "?";
    (this as FanOut).log.push(`${what} #${id.slice(id.lastIndexOf(".") + 1)}`);
  }

  @step({ accepts: [StartEvent], emits: [Item] })
  async start(ctx: Context) {
    for (let n = 0; n < (this as FanOut).items; n++) ctx.sendEvent(new Item({ n }));
  }

  @step({ accepts: [Item, Again], emits: [Again, Done], numWorkers: 3 })
  async work(ctx: Context, ev: Item | Again) {
    (this as FanOut).#note(ctx, `${ev instanceof Again ? "again" : "work"} ${ev.n}`);
    for (let i = 0; i < ev.n % 4; i++) await Promise.resolve(); // workers finish out of order
    // Every fifth item goes round its own step once more: an event for the step that returned.
    return ev instanceof Item && ev.n % 5 === 0 ? new Again({ n: ev.n }) : new Done({ n: ev.n });
  }

  @step({ accepts: [Done], emits: [StopEvent], numWorkers: 2 })
  async collect(ctx: Context, ev: Done) {
    (this as FanOut).#note(ctx, `collect ${ev.n}`);
    if (ev.n % 3 === 0) await Promise.resolve();
    return ++(this as FanOut).seen === (this as FanOut).items ? new StopEvent({ result: (this as FanOut).log }) : undefined;
  }
}

describe("a fan-out, followed or not", () => {
  it("calls its steps in the same order with the same execution ids", async () => {
    const quiet = await new FanOut(40, false).run({ items: 40 });
    const followed = await new FanOut(40, true).run({ items: 40 });
    expect(quiet).toHaveLength(40 + 8 + 40);
    expect(quiet).toEqual(followed);
    // The queue hands items out in the order they were sent, each with the id it was given then.
    expect(quiet.filter((line) => line.startsWith("work ")).map((line) => line.split(" ")[1])).toEqual(Array.from({ length: 40 }, (_, n) => String(n)));
  });
});
