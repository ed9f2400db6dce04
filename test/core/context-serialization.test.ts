import { describe, expect, it } from "vitest";
import {
  Context,
  ContextSerdeError,
  Event,
  HumanResponseEvent,
  InputRequiredEvent,
  StartEvent,
  StopEvent,
  Workflow,
  registerCodec,
  step,
} from "../../src/index.ts";
import { gate } from "../support/gate.ts";

class Prepared extends Event<{ text: string }> {}

/** prepare → slow (blocked on a gate the test holds); counts how often each step ran. */
function makeFlow(slowGate: Promise<void>) {
  const ran = { prepare: 0, slow: 0 };
  class TwoStep extends Workflow<{ text: string }, string> {
    @step({ accepts: [StartEvent], emits: [Prepared] })
    async prepare(ctx: Context, ev: StartEvent<{ text: string }>) {
      ran.prepare++;
      await ctx.store.set("seenAt", new Date("2026-11-22T10:00:00Z"));
      return new Prepared({ text: ev.text.toUpperCase() });
    }

    @step({ accepts: [Prepared], emits: [StopEvent] })
    async slow(ctx: Context, ev: Prepared) {
      ran.slow++;
      await slowGate;
      const seenAt = await ctx.store.get<Date>("seenAt");
      return new StopEvent({ result: `${ev.text} (seen ${seenAt.toISOString().slice(0, 10)})` });
    }
  }
  return { TwoStep, ran };
}

describe("ctx.toJSON / Context.fromJSON", () => {
  it("round-trips the store with codecs (Date built in) and no run", async () => {
    const { TwoStep } = makeFlow(Promise.resolve());
    const flow = new TwoStep();
    const ctx = new Context(flow);
    await flow.run({ text: "hi" }, { ctx });
    await ctx.store.set("user", { name: "Logan", tags: ["a", "b"], $codec: "mine" });
    const json = JSON.parse(JSON.stringify(ctx.toJSON()));
    expect(json).toMatchObject({ version: 3, workflow: "TwoStep", running: false, run: null });
    const restored = Context.fromJSON(new TwoStep(), json);
    expect(await restored.store.get("user")).toEqual({ name: "Logan", tags: ["a", "b"], $codec: "mine" });
    expect(await restored.store.get("seenAt")).toEqual(new Date("2026-11-22T10:00:00Z"));
  });

  it("resumes a context saved mid-run in a new workflow instance without re-running finished steps", async () => {
    const held = gate();
    const first = makeFlow(held.promise);
    const flow = new first.TwoStep({ timeout: 5 });
    const handler = flow.run({ text: "hello" });
    // The slow step is executing (blocked) once the stream shows nothing and prepare has run.
    while (first.ran.slow === 0) await new Promise((r) => setImmediate(r));
    const saved = JSON.stringify(handler.ctx.toJSON());
    handler.cancel();
    await handler.catch(() => undefined);

    const parsed = JSON.parse(saved);
    expect(parsed.running).toBe(true);
    expect(parsed.run.inFlight).toEqual({ slow: [{ type: "Prepared", data: { text: "HELLO" }, execution: expect.any(String) }] });

    const second = makeFlow(Promise.resolve());
    const fresh = new second.TwoStep({ timeout: 5 });
    const ctx = Context.fromJSON(fresh, saved);
    expect(() => fresh.run({ text: "again" }, { ctx })).toThrow(
      "This context was saved in the middle of a run. Continue it with workflow.run(undefined, { ctx }), or start over with a new Context.",
    );
    expect(await fresh.run(undefined, { ctx })).toBe("HELLO (seen 2026-11-22)");
    expect(second.ran).toEqual({ prepare: 0, slow: 1 });
  });

  it("continues a run saved while it waited for a human, in another instance", async () => {
    class Approval extends Workflow<{ name: string }, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async ask(ctx: Context, ev: StartEvent<{ name: string }>) {
        const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, {
          waiterEvent: new InputRequiredEvent({ prefix: `Fire ${ev.name}?` }),
        });
        return new StopEvent({ result: `${ev.name}: ${answer.response}` });
      }
    }
    const handler = new Approval().run({ name: "Lawson" });
    let saved = "";
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof InputRequiredEvent) {
        saved = JSON.stringify(handler.ctx.toJSON());
        handler.cancel();
      }
    }
    await handler.catch(() => undefined);
    expect(JSON.parse(saved).run.waiters).toEqual([{ type: "HumanResponseEvent", requirements: null }]);

    const later = new Approval();
    const resumed = later.run(undefined, { ctx: Context.fromJSON(later, saved) });
    const prompts: string[] = [];
    for await (const ev of resumed.streamEvents()) {
      if (ev instanceof InputRequiredEvent) {
        prompts.push((ev as InputRequiredEvent<{ prefix: string }>).prefix);
        resumed.ctx.sendEvent(new HumanResponseEvent({ response: "yes" }));
      }
    }
    expect(prompts).toEqual(["Fire Lawson?"]);
    expect(await resumed).toBe("Lawson: yes");
  });

  it("saves a plain object's own keys in order, not an enumerable property added to Object.prototype", async () => {
    const { TwoStep } = makeFlow(Promise.resolve());
    const ctx = new Context(new TwoStep());
    await ctx.store.set("order", { b: 1, a: { y: 2, x: 3 }, 2: "two", 1: "one", gone: undefined });
    Object.defineProperty(Object.prototype, "polluted", { value: "no", enumerable: true, configurable: true });
    let json;
    try {
      json = JSON.parse(JSON.stringify(ctx.toJSON()));
    } finally {
      delete (Object.prototype as { polluted?: string }).polluted;
    }
    const saved = json.store.order;
    expect(Object.keys(saved)).toEqual(["1", "2", "b", "a"]);
    expect(Object.keys(saved.a)).toEqual(["y", "x"]);
    expect(await Context.fromJSON(new TwoStep(), json).store.get("order")).toEqual({ 1: "one", 2: "two", b: 1, a: { y: 2, x: 3 } });
  });

  it("names the store key and type of a value that cannot be saved", async () => {
    class Money {
      constructor(readonly cents: number) {}
    }
    const { TwoStep } = makeFlow(Promise.resolve());
    const ctx = new Context(new TwoStep());
    await ctx.store.set("wallet", { balance: new Money(5) });
    expect(() => ctx.toJSON()).toThrow(ContextSerdeError);
    expect(() => ctx.toJSON()).toThrow(
      'Cannot save the context: store key "wallet".balance holds a Money object, which is not JSON. Store plain data there, or give the workflow a codec for it: new MyWorkflow({ codecs: { "Money": { test, encode, decode } } }).',
    );
    await ctx.store.set("wallet", { fn: () => 1 });
    expect(() => ctx.toJSON()).toThrow('store key "wallet".fn holds a function');

    registerCodec<Money>("test.Money", { test: (v) => v instanceof Money, encode: (m) => m.cents, decode: (c) => new Money(c as number) });
    await ctx.store.set("wallet", { balance: new Money(5) });
    const back = Context.fromJSON(new TwoStep(), JSON.stringify(ctx.toJSON()));
    expect(await back.store.get("wallet.balance")).toEqual(new Money(5));
  });

  it("uses a workflow's own codecs for its contexts only: another workflow neither saves nor restores with them", async () => {
    class Points {
      constructor(readonly n: number) {}
    }
    const points = { test: (v: unknown) => v instanceof Points, encode: (p: unknown) => (p as Points).n, decode: (n: unknown) => new Points(n as number) };
    const { TwoStep } = makeFlow(Promise.resolve());
    const withCodec = new TwoStep({ codecs: { Points: points } });
    const ctx = new Context(withCodec);
    await ctx.store.set("score", new Points(3));
    const saved = JSON.stringify(ctx.toJSON());
    expect(JSON.parse(saved).store.score).toEqual({ $codec: "Points", value: 3 });
    expect(await Context.fromJSON(new TwoStep({ codecs: { Points: points } }), saved).store.get("score")).toEqual(new Points(3));

    const plain = new Context(new TwoStep());
    await plain.store.set("score", new Points(3));
    expect(() => plain.toJSON()).toThrow(/holds a Points object, which is not JSON/);
    expect(() => Context.fromJSON(new TwoStep(), saved)).toThrow(
      expect.objectContaining({
        name: "ContextSerdeError",
        path: "store.score",
        message:
          'Cannot restore the context: store.score was saved with codec "Points", which this workflow does not have. Give the workflow that codec: new MyWorkflow({ codecs: { "Points": … } }).',
      }),
    );
    expect(() => new TwoStep({ codecs: { Points: { test: points.test } as never } })).toThrow(
      'codecs["Points"] lacks encode, decode: a codec is { test: (value) => boolean, encode: (value) => json, decode: (json) => value } under a stable, non-empty name.',
    );
  });

  it("names the store key of a value a codec fails on, or that contains itself", async () => {
    const { TwoStep } = makeFlow(Promise.resolve());
    const ctx = new Context(new TwoStep());
    await ctx.store.set("seenAt", { at: new Date("garbage") });
    expect(() => ctx.toJSON()).toThrow(ContextSerdeError);
    expect(() => ctx.toJSON()).toThrow('Cannot save the context: codec "Date" failed on store key "seenAt".at: Invalid time value');

    const loop: Record<string, unknown> = { name: "a", children: [] };
    (loop.children as unknown[]).push({ parent: loop });
    await ctx.store.set("seenAt", { tree: loop });
    expect(() => ctx.toJSON()).toThrow(ContextSerdeError);
    expect(() => ctx.toJSON()).toThrow(
      'Cannot save the context: store key "seenAt".tree.children[0].parent refers back to store key "seenAt".tree (a cycle), which JSON cannot hold. Store plain data without cycles.',
    );
    const self: unknown[] = [];
    self.push(self);
    await ctx.store.set("seenAt", self);
    expect(() => ctx.toJSON()).toThrow(
      'Cannot save the context: store key "seenAt"[0] refers back to store key "seenAt" (a cycle), which JSON cannot hold. Store plain data without cycles.',
    );

    const shared = { n: 1 }; // the same object twice, not inside itself: saved twice
    await ctx.store.set("seenAt", { a: shared, b: [shared, shared] });
    expect(ctx.toJSON().store.seenAt).toEqual({ a: { n: 1 }, b: [{ n: 1 }, { n: 1 }] });
    const holes: number[] = [1];
    holes[2] = 3; // a hole is saved as JSON.stringify writes it: null
    await ctx.store.set("seenAt", holes);
    expect(JSON.parse(JSON.stringify(ctx.toJSON())).store.seenAt).toEqual([1, null, 3]);
  });

  it("rejects malformed JSON, a newer version, unknown event types, shadowing fields and unknown codecs with ContextSerdeError", () => {
    const { TwoStep } = makeFlow(Promise.resolve());
    const flow = new TwoStep();
    const ok = { version: 1, workflow: "TwoStep", store: {}, running: false, run: null };
    const attempt = (json: unknown) => () => Context.fromJSON(flow, json as string);
    expect(attempt("{not json")).toThrow(/^Cannot restore the context: the saved text is not valid JSON \(/);
    expect(attempt({ ...ok, version: 4 })).toThrow(
      "Cannot restore the context: it was saved in format version 4 by a newer stepflow; this one reads up to version 3. Upgrade stepflow.",
    );
    expect(attempt({ ...ok, workflow: "Other" })).toThrow(
      "Cannot restore the context: it was saved from workflow Other, not TwoStep. Restore it with the workflow it was saved from, or start with a new Context.",
    );
    expect(attempt({ ...ok, store: { x: { $codec: "nope", value: 1 } } })).toThrow(
      'Cannot restore the context: store.x was saved with codec "nope", which this workflow does not have. Give the workflow that codec: new MyWorkflow({ codecs: { "nope": … } }).',
    );
    const run = { queued: { slow: [{ type: "Mystery", data: {} }] }, inFlight: {}, collected: {}, unclaimed: [], waiters: [] };
    expect(attempt({ ...ok, running: true, run })).toThrow(
      'Cannot restore the context: run.queued["slow"][0] is an event of type "Mystery", which this workflow does not know. Known types: StartEvent, Prepared, StopEvent',
    );
    const shadowed = { ...run, queued: { slow: [{ type: "Prepared", data: { text: "hi", constructor: "StopEvent" } }] } };
    expect(attempt({ ...ok, running: true, run: shadowed })).toThrow(
      'Cannot restore the context: run.queued["slow"][0].data has a field "constructor", which would hide the property of that name every Prepared has (the event\'s class, for "constructor"). Saved events have no such field: remove it.',
    );
    expect(attempt({ ...ok, running: true, run: { ...run, queued: { gone: [] } } })).toThrow(
      'the saved run has events for a step "gone" that TwoStep does not have.',
    );
    expect(attempt([1])).toThrow("expected the object ctx.toJSON() returns, got an array.");
    expect(attempt(null)).toThrow("expected the object ctx.toJSON() returns, got null.");
  });
});

describe("an answer that arrived before the wait, saved and restored", () => {
  it("keeps an event of a class no step names until the resumed step waits for it", async () => {
    class Answer extends Event<{ ok: boolean }> {}
    const lookedUp = gate();
    class Approval extends Workflow<{ name: string }, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async fire(ctx: Context, ev: StartEvent<{ name: string }>) {
        await lookedUp.promise; // a slow lookup before asking
        const answer = await ctx.waitForEvent(Answer);
        return new StopEvent({ result: answer.ok ? `${ev.name} fired` : "kept" });
      }
    }
    const handler = new Approval().run({ name: "Lawson" });
    await Promise.resolve(); // the step has started
    handler.ctx.sendEvent(new Answer({ ok: true })); // the app already had the answer
    const saved = JSON.stringify(handler.ctx.toJSON());
    handler.cancel();
    await handler.catch(() => undefined);
    expect(JSON.parse(saved).run.unclaimed).toEqual([{ type: "Answer", data: { ok: true } }]);

    const flow = new Approval();
    const ctx = Context.fromJSON(flow, saved);
    expect(JSON.parse(JSON.stringify(ctx.toJSON())).run.unclaimed).toEqual([{ type: "Answer", data: { ok: true } }]); // saved again as it was
    lookedUp.open();
    expect(await flow.run(undefined, { ctx })).toBe("Lawson fired");
  });
});

describe("saving a run before its first step starts", () => {
  class Ask extends Workflow<{ name: string }, string> {
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async fire(ctx: Context, ev: StartEvent<{ name: string }>) {
      const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({}) });
      return new StopEvent({ result: `${ev.name}: ${answer.response}` });
    }
  }
  const answer = async (handler: ReturnType<Ask["run"]>) => {
    for await (const ev of handler.streamEvents()) if (ev instanceof InputRequiredEvent) handler.ctx.sendEvent(new HumanResponseEvent({ response: "yes" }));
    return handler;
  };
  /** Saves the context of a run as it is now, then cancels the run. */
  const saveAndCancel = async (handler: { readonly ctx: Context; cancel(): void; catch(f: () => void): PromiseLike<unknown> }) => {
    const saved = JSON.stringify(handler.ctx.toJSON());
    handler.cancel();
    await handler.catch(() => undefined);
    return saved;
  };

  it("keeps the StartEvent (run() starts the first step in a microtask), and a restored run not yet taken", async () => {
    const flow = new Ask();
    const saved = await saveAndCancel(flow.run({ name: "Lawson" })); // before the first step started
    expect(JSON.parse(saved).run.queued.fire).toEqual([{ type: "StartEvent", data: { name: "Lawson" }, execution: expect.any(String) }]);
    const ctx = Context.fromJSON(flow, saved);
    const resumed = flow.run(undefined, { ctx });
    expect(JSON.stringify(resumed.ctx.toJSON())).toBe(saved); // still the saved run: its continuation has not started
    expect(await answer(resumed)).toBe("Lawson: yes");
  });

  it("keeps events sent before the first step starts, for a new run and for a restored one", async () => {
    class Ping extends HumanResponseEvent<{ n: number }> {} // sent from outside: no step emits it
    class Pinged extends Workflow<{}, number[]> {
      @step({ accepts: [StartEvent, Ping], emits: [StopEvent] })
      async count(ctx: Context, ev: StartEvent | Ping) {
        const seen = [...(await ctx.store.get<number[]>("seen", [])), ev instanceof Ping ? ev.n : 0];
        await ctx.store.set("seen", seen);
        return seen.length === 3 ? new StopEvent({ result: seen }) : undefined;
      }
    }
    const flow = new Pinged();
    const handler = flow.run({});
    handler.ctx.sendEvent(new Ping({ n: 1 }));
    handler.ctx.sendEvent(new Ping({ n: 2 }));
    const saved = await saveAndCancel(handler);
    expect(JSON.parse(saved).run.queued.count.map((e: { type: string }) => e.type)).toEqual(["StartEvent", "Ping", "Ping"]);
    expect(await flow.run(undefined, { ctx: Context.fromJSON(flow, saved) })).toEqual([0, 1, 2]);

    const asks = new Ask();
    const waiting = await saveAndCancel(asks.run({ name: "Lawson" }));
    const resumed = asks.run(undefined, { ctx: Context.fromJSON(asks, waiting) });
    resumed.ctx.sendEvent(new HumanResponseEvent({ response: "no" })); // the answer, before the resumed step waits
    const again = await saveAndCancel(resumed);
    expect(await asks.run(undefined, { ctx: Context.fromJSON(asks, again) })).toBe("Lawson: no");
  });

  it("a restored run ended before it starts, then continued by another run in the same tick", async () => {
    const flow = new Ask();
    const ctx = Context.fromJSON(flow, await saveAndCancel(flow.run({ name: "Lawson" })));
    const ended = flow.run(undefined, { ctx });
    ended.ctx.sendEvent(new StopEvent({ result: "stopped" }));
    const next = flow.run(undefined, { ctx }); // the saved run is still pending: this run continues it
    expect(await ended).toBe("stopped");
    expect(await answer(next)).toBe("Lawson: yes");
    expect(ctx.hasSavedRun).toBe(false);
  });

  it("a restored run that a StopEvent ends before its first step is done with its saved run", async () => {
    const flow = new Ask();
    const ctx = Context.fromJSON(flow, await saveAndCancel(flow.run({ name: "Lawson" })));
    const ended = flow.run(undefined, { ctx });
    ended.ctx.sendEvent(new StopEvent({ result: "stopped" }));
    expect(await ended).toBe("stopped");
    expect(ctx.hasSavedRun).toBe(false);
    expect(await answer(flow.run({ name: "Kim" }, { ctx }))).toBe("Kim: yes");
  });

  it("refuses a store key __proto__ in a saved context", () => {
    const json = '{"version":1,"workflow":"Ask","store":{"__proto__":{"x":1}},"running":false,"run":null}';
    expect(() => Context.fromJSON(new Ask(), json)).toThrow(
      'Cannot restore the context: store key "__proto__" cannot be restored (it would replace the store\'s prototype).',
    );
  });
});

describe("saving a run whose step has executions finishing out of order", () => {
  class Job extends Event<{ n: number }> {}

  it("keeps the executions still in flight in the order they started, and a restored run executes them so", async () => {
    const gates = [gate(), gate(), gate()];
    const allStarted = gate();
    const started: number[] = [];
    class Jobs extends Workflow<Record<string, never>, string> {
      @step({ accepts: [StartEvent], emits: [Job] })
      async start(ctx: Context) {
        for (const n of [0, 1, 2]) ctx.sendEvent(new Job({ n }));
      }

      @step({ accepts: [Job], emits: [StopEvent], numWorkers: 3 })
      async work(_ctx: Context, ev: Job) {
        started.push(ev.n);
        if (started.length === 3) allStarted.open();
        await gates[ev.n]?.promise;
      }
    }
    const flow = new Jobs({ timeout: null });
    const handler = flow.run({});
    await allStarted.promise;
    gates[1]?.open(); // the middle one finishes first
    await new Promise((resolve) => setImmediate(resolve)); // its microtasks run: no timing involved
    const saved = JSON.parse(JSON.stringify(handler.ctx.toJSON())) as { run: { inFlight: { work: { data: { n: number } }[] } } };
    expect(saved.run.inFlight.work.map((delivery) => delivery.data.n)).toEqual([0, 2]);
    handler.cancel();
    await expect(handler).rejects.toThrow("cancelled");

    started.length = 0;
    const resumed = flow.run(undefined, { ctx: Context.fromJSON(flow, JSON.stringify(saved)) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 2]);
    resumed.cancel();
    await expect(resumed).rejects.toThrow("cancelled");
  });
});
