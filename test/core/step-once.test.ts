import { describe, expect, it, vi } from "vitest";
import { Context, ContextSerdeError, ContextStateError, Event, StartEvent, StopEvent, Workflow, WorkflowCancelledByUser, step } from "../../src/index.ts";
import type { OnceOptions, OnceResult } from "../../src/index.ts";
import { MemoryJournal, useJournal } from "../../src/journal/index.ts";
import type { Journal, JournalClaim } from "../../src/journal/index.ts";
import { gate } from "../support/gate.ts";

/** What a test hands the workflow: the work, what the step does after it, the options of once. */
interface Script {
  before?: () => Promise<void>;
  work: () => unknown;
  after?: () => Promise<void>;
  options?: OnceOptions;
}

/** StartEvent → charge (ctx.once("charge", work)) → StopEvent with what once returned. */
class Charge extends Workflow<{ order: string }, OnceResult<unknown>> {
  constructor(readonly script: Script) {
    super({ timeout: 10 });
  }

  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async charge(ctx: Context, _ev: StartEvent<{ order: string }>) {
    const { script } = this as Charge;
    await script.before?.();
    const result = await ctx.once("charge", script.work, script.options);
    await script.after?.();
    return new StopEvent({ result });
  }
}

/** Runs until `reached` opens, saves the context, cancels the run, and returns the saved text. */
async function saveWhen(flow: Workflow<{ order: string }, unknown>, reached: Promise<void>): Promise<string> {
  const handler = flow.run({ order: "A-1" });
  await reached;
  const saved = JSON.stringify(handler.ctx.toJSON());
  handler.cancel();
  await handler.catch(() => undefined);
  return saved;
}

/** Restores `saved` into `flow` with a journal of its own (nothing shared with the run that saved it) and resumes it. */
function resume(flow: Charge, saved: string, journal: Journal = new MemoryJournal()) {
  const ctx = Context.fromJSON(flow, saved);
  useJournal(ctx, journal);
  return flow.run(undefined, { ctx });
}

describe("ctx.once", () => {
  it("runs the work and returns its value", async () => {
    let charges = 0;
    const flow = new Charge({ work: () => ({ id: `ch_${++charges}` }) });
    expect(await flow.run({ order: "A-1" })).toEqual({ status: "ran", value: { id: "ch_1" } });
  });

  it("saves a finished result with the context: a restored run finds it without any shared journal", async () => {
    let charges = 0;
    const held = gate();
    const reached = gate();
    const first = new Charge({ work: () => ({ id: `ch_${++charges}` }), after: () => (reached.open(), held.promise) });
    const saved = await saveWhen(first, reached.promise);
    expect(JSON.parse(saved).run.once).toEqual({
      [JSON.parse(saved).run.inFlight.charge[0].execution]: { charge: { state: "finished", value: { id: "ch_1" } } },
    });

    const second = new Charge({ work: () => ({ id: `ch_${++charges}` }) });
    expect(await resume(second, saved)).toEqual({ status: "recorded", value: { id: "ch_1" } });
    expect(charges).toBe(1);
  });

  it("answers unknown for work started but not finished when the context was saved, and reruns it when asked to", async () => {
    let charges = 0;
    const reached = gate();
    const first = new Charge({ work: () => (charges++, reached.open(), new Promise(() => {})) });
    const saved = await saveWhen(first, reached.promise);
    expect(Object.values(JSON.parse(saved).run.once)).toEqual([{ charge: { state: "started" } }]);

    expect(await resume(new Charge({ work: () => ++charges }), saved)).toEqual({ status: "unknown" });
    expect(charges).toBe(1);
    expect(await resume(new Charge({ work: () => ++charges, options: { rerunUnfinished: true } }), saved)).toEqual({ status: "ran", value: 2 });
  });

  it("two resumes of one saved run sharing a journal do the work once: the other reads the result", async () => {
    let charges = 0;
    // Saved before the step started (run() starts it in a microtask): once was not called yet.
    const handler = new Charge({ work: () => ++charges }).run({ order: "A-1" });
    const saved = JSON.stringify(handler.ctx.toJSON());
    handler.cancel();
    await handler.catch(() => undefined);
    expect(JSON.parse(saved).run.queued.charge[0].execution).toEqual(expect.any(String));

    const journal = new MemoryJournal();
    const one = await resume(new Charge({ work: () => ++charges }), saved, journal);
    const two = await resume(new Charge({ work: () => ++charges }), saved, journal);
    expect([one, two]).toEqual([
      { status: "ran", value: 1 },
      { status: "recorded", value: 1 },
    ]);
  });

  it("two concurrent resumes sharing a journal: one runs the work, the other answers unknown", async () => {
    let charges = 0;
    const handler = new Charge({ work: () => 0 }).run({ order: "A-1" });
    const saved = JSON.stringify(handler.ctx.toJSON());
    handler.cancel();
    await handler.catch(() => undefined);

    const journal = new MemoryJournal();
    const held = gate();
    const slow = () => (charges++, held.promise.then(() => "ch_1"));
    const one = resume(new Charge({ work: slow }), saved, journal);
    const two = resume(new Charge({ work: slow }), saved, journal);
    expect(await two).toEqual({ status: "unknown" });
    held.open();
    expect(await one).toEqual({ status: "ran", value: "ch_1" });
    expect(charges).toBe(1);
  });

  it("releases the claim when the run is cancelled while the journal is claiming, so a later attempt does the work", async () => {
    const claiming = gate();
    const claimed = gate();
    const released = gate();
    const inner = new MemoryJournal();
    const slowJournal: Journal = {
      description: "a slow test journal",
      begin: (key) => (claiming.open(), claimed.promise.then((): JournalClaim => inner.begin(key))),
      finish: (key, result) => inner.finish(key, result),
      release: (key) => (released.open(), inner.release(key)),
    };
    let charges = 0;
    const flow = new Charge({ work: () => ++charges });
    // A run restored from a save: every resume of the save knows its execution, so once claims in the journal.
    const first = flow.run({ order: "A-1" });
    const before = JSON.stringify(first.ctx.toJSON());
    first.cancel();
    await first.catch(() => undefined);
    const ctx = Context.fromJSON(flow, before);
    useJournal(ctx, slowJournal);
    const handler = flow.run(undefined, { ctx });
    await claiming.promise;
    handler.cancel();
    claimed.open();
    await expect(handler).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    await released.promise;
    expect(charges).toBe(0);
    // The cancelled run is kept in the context with no record of the charge: a resume runs it.
    const saved = JSON.stringify(ctx.toJSON());
    expect(JSON.parse(saved).run.once).toBeUndefined();
    expect(await resume(new Charge({ work: () => ++charges }), saved)).toEqual({ status: "ran", value: 1 });
  });

  it("asks no journal for an execution no save included: no other attempt can know its key", async () => {
    const journal = new MemoryJournal();
    const begin = vi.spyOn(journal, "begin");
    const finish = vi.spyOn(journal, "finish");
    let charges = 0;
    const flow = new Charge({ work: () => ++charges });
    const ctx = new Context(flow);
    useJournal(ctx, journal);
    expect(await flow.run({ order: "A-1" }, { ctx })).toEqual({ status: "ran", value: 1 });
    expect([begin.mock.calls, finish.mock.calls]).toEqual([[], []]);
  });

  it("claims in the journal once a save includes the execution, before its once is called", async () => {
    const journal = new MemoryJournal();
    const begin = vi.spyOn(journal, "begin");
    const held = gate();
    const reached = gate();
    let charges = 0;
    const flow = new Charge({ before: () => (reached.open(), held.promise), work: () => ++charges });
    const ctx = new Context(flow);
    useJournal(ctx, journal);
    const handler = flow.run({ order: "A-1" }, { ctx });
    await reached.promise;
    const saved = JSON.stringify(handler.ctx.toJSON());
    held.open();
    expect(await handler).toEqual({ status: "ran", value: 1 });
    expect(begin).toHaveBeenCalledTimes(1);
    // A restorer of that save, sharing the journal, runs the step again and finds the work done.
    expect(await resume(new Charge({ work: () => ++charges }), saved, journal)).toEqual({ status: "recorded", value: 1 });
    expect(charges).toBe(1);
  });

  it("an execution a save includes while its work runs unclaimed: the result goes to the journal when it ends, where a restorer finds it", async () => {
    const journal = new MemoryJournal();
    const begin = vi.spyOn(journal, "begin");
    const held = gate();
    const reached = gate();
    let charges = 0;
    const flow = new Charge({ work: () => (charges++, reached.open(), held.promise.then(() => "ch_1")) });
    const ctx = new Context(flow);
    useJournal(ctx, journal);
    const handler = flow.run({ order: "A-1" }, { ctx });
    await reached.promise;
    expect(begin).not.toHaveBeenCalled();
    const saved = JSON.stringify(handler.ctx.toJSON());
    expect(Object.values(JSON.parse(saved).run.once)).toEqual([{ charge: { state: "started" } }]);
    held.open();
    expect(await handler).toEqual({ status: "ran", value: "ch_1" });
    // The save says "started"; the journal, written by finish without a begin, says finished.
    expect(await resume(new Charge({ work: () => ++charges }), saved, journal)).toEqual({ status: "recorded", value: "ch_1" });
    expect(await resume(new Charge({ work: () => ++charges, options: { rerunUnfinished: true } }), saved, journal)).toEqual({
      status: "recorded",
      value: "ch_1",
    });
    expect(charges).toBe(1);
  });

  it("claims the work of the steps a saved execution leads to: the run that saved goes on, and a restorer of the save finds the work done", async () => {
    class Prepared extends Event<Record<string, never>> {}
    let charges = 0;
    const held = gate();
    const reached = gate();
    class PrepareThenCharge extends Workflow<{ order: string }, OnceResult<number>> {
      @step({ accepts: [StartEvent], emits: [Prepared] })
      async prepare(_ctx: Context, _ev: StartEvent<{ order: string }>) {
        reached.open();
        await held.promise;
        return new Prepared({});
      }

      @step({ accepts: [Prepared], emits: [StopEvent] })
      async charge(ctx: Context, _ev: Prepared) {
        return new StopEvent({ result: await ctx.once("charge", () => ++charges) });
      }
    }
    const journal = new MemoryJournal();
    const flow = new PrepareThenCharge({ timeout: 10 });
    const ctx = new Context(flow);
    useJournal(ctx, journal);
    const handler = flow.run({ order: "A-1" }, { ctx });
    await reached.promise;
    const saved = JSON.stringify(handler.ctx.toJSON()); // the charge step has not started: no save holds its execution
    held.open();
    expect(await handler).toEqual({ status: "ran", value: 1 });
    const restored = Context.fromJSON(flow, saved);
    useJournal(restored, journal);
    expect(await flow.run(undefined, { ctx: restored })).toEqual({ status: "recorded", value: 1 });
    expect(charges).toBe(1);
  });

  it("claims the work of the steps a saved execution's ctx.sendEvent starts, each event its own, in the run that goes on and in every restorer", async () => {
    class ChargeOrder extends Event<{ order: string }> {}
    class Charged extends Event<{ order: string; result: OnceResult<string> }> {}
    const charges: string[] = [];
    const held = gate();
    const reached = gate();
    class FanOutCharges extends Workflow<object, string[]> {
      @step({ accepts: [StartEvent], emits: [ChargeOrder] })
      async prepare(ctx: Context) {
        reached.open();
        await held.promise;
        for (const order of ["A-1", "A-2"]) ctx.sendEvent(new ChargeOrder({ order }));
        return undefined;
      }

      @step({ accepts: [ChargeOrder], emits: [Charged] })
      async charge(ctx: Context, ev: ChargeOrder) {
        const result = await ctx.once("charge", () => (charges.push(ev.order), `ch_${ev.order}`));
        return new Charged({ order: ev.order, result });
      }

      @step({ accepts: [Charged], emits: [StopEvent] })
      async gather(ctx: Context, ev: Charged) {
        const all = ctx.collectEvents(ev, Charged, { count: 2 }) as Charged[] | null;
        return all
          ? new StopEvent({ result: all.map((c) => `${c.order} ${c.result.status} ${c.result.status === "unknown" ? "" : c.result.value}`).sort() })
          : undefined;
      }
    }
    const journal = new MemoryJournal();
    const flow = new FanOutCharges({ timeout: 10 });
    const ctx = new Context(flow);
    useJournal(ctx, journal);
    const handler = flow.run({}, { ctx });
    await reached.promise;
    const saved = JSON.stringify(handler.ctx.toJSON()); // prepare is in flight: it sends after the save
    held.open();
    expect(await handler).toEqual(["A-1 ran ch_A-1", "A-2 ran ch_A-2"]);
    for (let resume = 0; resume < 2; resume++) {
      const restored = Context.fromJSON(flow, saved);
      useJournal(restored, journal);
      expect(await flow.run(undefined, { ctx: restored })).toEqual(["A-1 recorded ch_A-1", "A-2 recorded ch_A-2"]);
    }
    expect(charges).toEqual(["A-1", "A-2"]);
  });

  it("a restorer that asks while the unclaimed work still runs is told unknown, and later ones find the result", async () => {
    const journal = new MemoryJournal();
    const held = gate();
    const reached = gate();
    let charges = 0;
    const flow = new Charge({ work: () => (charges++, reached.open(), held.promise.then(() => "ch_1")) });
    const ctx = new Context(flow);
    useJournal(ctx, journal);
    const handler = flow.run({ order: "A-1" }, { ctx });
    await reached.promise;
    const saved = JSON.stringify(handler.ctx.toJSON());
    expect(await resume(new Charge({ work: () => ++charges }), saved, journal)).toEqual({ status: "unknown" });
    held.open();
    expect(await handler).toEqual({ status: "ran", value: "ch_1" });
    expect(await resume(new Charge({ work: () => ++charges }), saved, journal)).toEqual({ status: "recorded", value: "ch_1" });
    expect(charges).toBe(1);
  });

  it("scopes names to the step execution: each execution runs its own work, a second call in one execution reads the first", async () => {
    class Item extends Event<{ n: number }> {}
    const calls: number[] = [];
    class Fan extends Workflow<Record<string, never>, number[]> {
      @step({ accepts: [StartEvent], emits: [Item] })
      async start(ctx: Context) {
        for (const n of [1, 2, 3]) ctx.sendEvent(new Item({ n }));
      }

      @step({ accepts: [Item], emits: [StopEvent] })
      async each(ctx: Context, ev: Item) {
        const first = await ctx.once("work", () => (calls.push(ev.n), ev.n * 10));
        const again = await ctx.once("work", () => (calls.push(-1), -1));
        expect(again).toEqual({ status: "recorded", value: first.status === "ran" ? first.value : NaN });
        const seen = ctx.collectEvents(ev, [Item, Item, Item]);
        if (seen) return new StopEvent({ result: [...calls] });
      }
    }
    expect(await new Fan().run({})).toEqual([1, 2, 3]);
  });

  it("keeps a thrown work's record started, so a retry of the step answers unknown rather than repeating it", async () => {
    let attempts = 0;
    const seen: OnceResult<unknown>[] = [];
    class Flaky extends Workflow<Record<string, never>, OnceResult<unknown>[]> {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 2, delay: 0 } })
      async charge(ctx: Context) {
        seen.push(
          await ctx.once("charge", () => {
            attempts++;
            throw new Error("the payment API timed out");
          }),
        );
        return new StopEvent({ result: seen });
      }
    }
    expect(await new Flaky().run({})).toEqual([{ status: "unknown" }]);
    expect(attempts).toBe(1);
  });

  it("drops an execution's records when it finishes: the saved run keeps only those of executions still pending", async () => {
    class Next extends Event<Record<string, never>> {}
    const reached = gate();
    class TwoSteps extends Workflow<Record<string, never>, string> {
      @step({ accepts: [StartEvent], emits: [Next] })
      async first(ctx: Context) {
        await ctx.once("a", () => "done");
        return new Next({});
      }

      @step({ accepts: [Next], emits: [StopEvent] })
      async second() {
        reached.open();
        await new Promise(() => {});
      }
    }
    const handler = new TwoSteps().run({});
    await reached.promise;
    const run = handler.ctx.toJSON().run;
    handler.cancel();
    await handler.catch(() => undefined);
    expect(run?.once).toBeUndefined();
    expect(Object.keys(run?.inFlight ?? {})).toEqual(["second"]);
  });

  it("says what is wrong: outside a step, a result that is not JSON, the same name twice at once", async () => {
    const flow = new Charge({ work: () => new Map() });
    await expect(flow.run({ order: "A-1" })).rejects.toThrow(
      new ContextSerdeError(
        'Cannot save the context: the result of ctx.once("charge") holds a Map object, which is not JSON. Store plain data there, or give the workflow a codec for it: new MyWorkflow({ codecs: { "Map": { test, encode, decode } } }).',
      ),
    );

    const outside = new Context(flow);
    const handler = flow.run({ order: "A-1" }, { ctx: outside });
    await expect(handler.ctx.once("x", () => 1)).rejects.toBeInstanceOf(ContextStateError);
    await handler.catch(() => undefined);

    class Twice extends Workflow<Record<string, never>, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async both(ctx: Context) {
        const slow = ctx.once("x", () => new Promise<number>((resolve) => setImmediate(() => resolve(1))));
        await expect(ctx.once("x", () => 2)).rejects.toThrow(/called again while the first call is still running/);
        await slow;
        return new StopEvent({ result: "ok" });
      }
    }
    expect(await new Twice().run({})).toBe("ok");
  });

  it("resolves in one microtask when nothing is recorded and the journal answers at once (no await of its own)", async () => {
    let ticks = -1;
    class Count extends Workflow<Record<string, never>, number> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async only(ctx: Context) {
        let counting = true;
        let n = 0;
        const count = () => {
          if (!counting) return;
          n++;
          queueMicrotask(count);
        };
        queueMicrotask(count);
        await ctx.once("sync", () => 1);
        counting = false;
        ticks = n;
        return new StopEvent({ result: ticks });
      }
    }
    await new Count().run({});
    expect(ticks).toBe(1);
  });
});
