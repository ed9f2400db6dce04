import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  Context,
  Event,
  InputRequiredEvent,
  StartEvent,
  StateValidationError,
  StopEvent,
  StoreKeyError,
  Workflow,
  WorkflowCancelledByUser,
  step,
} from "../../src/index.ts";
import { gate } from "../support/gate.ts";

class Tick extends Event<{ n: number }> {}

describe("handler.runId", () => {
  class Echo extends Workflow<{}, string> {
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async echo() {
      return new StopEvent({ result: "done" });
    }
  }

  it("is the same each time it is read, and differs between runs", async () => {
    const flow = new Echo();
    const a = flow.run({});
    const b = flow.run({});
    expect(a.runId).toBe(a.runId);
    expect(a.runId).not.toBe(b.runId);
    expect(a.runId).toMatch(/^[0-9a-f-]{36}$/);
    await Promise.all([a, b]);
  });

  it("is a UUID of version 7 that begins with the time the run began, so later runs sort after earlier ones", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const flow = new Echo();
      vi.setSystemTime(new Date("2026-11-28T07:00:00.000Z"));
      const first = flow.run({});
      const firstId = first.runId;
      vi.setSystemTime(new Date("2026-11-28T07:00:00.001Z"));
      const second = flow.run({});
      const secondId = second.runId;
      await Promise.all([first, second]);
      const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
      expect(firstId).toMatch(uuidV7);
      expect(secondId).toMatch(uuidV7);
      // The first 48 bits are the time in milliseconds: 2026-11-28T07:00:00.000Z is 0x01a220f42180.
      expect(firstId.slice(0, 13)).toBe("01a220f4-2180");
      expect(secondId.slice(0, 13)).toBe("01a220f4-2181");
      expect([secondId, firstId].sort()).toEqual([firstId, secondId]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("is saved with a context saved mid-run and kept by the run that resumes it", async () => {
    const held = gate();
    class Held extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async wait() {
        await held.promise;
        return new StopEvent({ result: "resumed" });
      }
    }
    const flow = new Held();
    const first = flow.run({});
    await Promise.resolve();
    const saved = first.ctx.toJSON();
    expect(saved.run?.runId).toBe(first.runId);
    first.cancel();
    await first.catch(() => {});
    held.open();
    const second = flow.run(undefined, { ctx: Context.fromJSON(flow, JSON.stringify(saved)) });
    expect(second.runId).toBe(first.runId);
    expect(await second).toBe("resumed");
  });
});

describe("ctx.store.clear()", () => {
  it("removes every key", async () => {
    const ctx = new Context(
      new (class Flow extends Workflow {
        @step({ accepts: [StartEvent], emits: [StopEvent] })
        async go() {
          return new StopEvent();
        }
      })(),
    );
    await ctx.store.set("user.name", "Logan");
    await ctx.store.set("count", 3);
    await ctx.store.clear();
    expect(ctx.store.entries()).toEqual({});
    expect(await ctx.store.has("user.name")).toBe(false);
  });
});

describe("numConcurrentRuns", () => {
  it("runs over the limit wait their turn and then run, in order", async () => {
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    class Limited extends Workflow<{ i: number }, number> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async work(_ctx: Context, ev: StartEvent<{ i: number }>) {
        started.push(ev.i);
        await gates[ev.i]?.promise;
        return new StopEvent({ result: ev.i });
      }
    }
    const flow = new Limited({ numConcurrentRuns: 1 });
    const runs = [0, 1, 2].map((i) => flow.run({ i }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0]);
    gates[0]?.open();
    expect(await runs[0]).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    gates[1]?.open();
    gates[2]?.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(started).toEqual([0, 1, 2]);
  });

  it("a run cancelled while waiting never starts and gives its turn to the next", async () => {
    const first = gate();
    const started: number[] = [];
    class Limited extends Workflow<{ i: number }, number> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async work(_ctx: Context, ev: StartEvent<{ i: number }>) {
        started.push(ev.i);
        if (ev.i === 0) await first.promise;
        return new StopEvent({ result: ev.i });
      }
    }
    const flow = new Limited({ numConcurrentRuns: 1 });
    const runs = [0, 1, 2].map((i) => flow.run({ i }));
    runs[1]?.cancel();
    first.open();
    expect(await runs[0]).toBe(0);
    await expect(runs[1]).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    expect(await runs[2]).toBe(2);
    expect(started).toEqual([0, 2]);
  });

  it("refuses a limit that is not a whole number ≥ 1", () => {
    expect(() => new Workflow({ numConcurrentRuns: 0 })).toThrow("numConcurrentRuns must be a whole number ≥ 1 (or left out for no limit), got 0.");
  });
});

const CounterState = z.object({ count: z.number().default(0), names: z.array(z.string()).default([]) });
type CounterState = z.infer<typeof CounterState>;

describe("typed state", () => {
  class Counter extends Workflow<{}, number> {
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async count(ctx: Context<CounterState>) {
      const count = await ctx.store.get("count");
      await ctx.store.set("count", count + 1);
      return new StopEvent({ result: await ctx.store.get("count") });
    }
  }

  it("a new context starts with the schema's defaults", async () => {
    const ctx = new Context<CounterState>(new Counter({ state: CounterState }));
    expect(ctx.store.entries()).toEqual({ count: 0, names: [] });
  });

  it("typed get and set carry the state across runs on one context", async () => {
    const flow = new Counter({ state: CounterState });
    const ctx = new Context<CounterState>(flow);
    expect(await flow.run({}, { ctx })).toBe(1);
    expect(await flow.run({}, { ctx })).toBe(2);
  });

  it("a value the schema refuses is a StateValidationError and changes nothing", async () => {
    const ctx = new Context<CounterState>(new Counter({ state: CounterState }));
    const err = await ctx.store.set("count", "three" as unknown as number).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateValidationError);
    expect((err as Error).message).toBe(
      'Setting "count" gives a state that does not match the state schema: count: Invalid input: expected number, received string. The state was left as it was.',
    );
    expect(await ctx.store.get("count")).toBe(0);
  });

  it("clear() goes back to the schema's defaults", async () => {
    const ctx = new Context<CounterState>(new Counter({ state: CounterState }));
    await ctx.store.set("count", 5);
    await ctx.store.clear();
    expect(ctx.store.entries()).toEqual({ count: 0, names: [] });
  });

  it("a restored context is checked against the schema and keeps its values", async () => {
    const flow = new Counter({ state: CounterState });
    const ctx = new Context<CounterState>(flow);
    await flow.run({}, { ctx });
    const restored = Context.fromJSON(flow, JSON.stringify(ctx.toJSON())) as Context<CounterState>;
    expect(await restored.store.get("count")).toBe(1);
  });
});

describe("ctx.store.edit()", () => {
  it("many concurrent edits that await in the middle lose no update", async () => {
    class Parallel extends Workflow<{}, number> {
      @step({ accepts: [StartEvent], emits: [Tick] })
      async start(ctx: Context) {
        for (let n = 0; n < 200; n++) ctx.sendEvent(new Tick({ n }));
      }
      @step({ accepts: [Tick], emits: [StopEvent], numWorkers: 50 })
      async add(ctx: Context<CounterState>, ev: Tick) {
        const state = await ctx.store.edit(async (s) => {
          const before = s.count;
          await new Promise((resolve) => setImmediate(resolve)); // another edit would interleave here without the lock
          s.count = before + 1;
          s.names.push(`t${ev.n}`);
        });
        if (state.count === 200) return new StopEvent({ result: state.count });
      }
    }
    const flow = new Parallel({ state: CounterState });
    const ctx = new Context<CounterState>(flow);
    expect(await flow.run({}, { ctx })).toBe(200);
    expect(new Set(await ctx.store.get("names")).size).toBe(200);
  });

  it("a returned object replaces the state; the new state is the result", async () => {
    const ctx = new Context<CounterState>(new Workflow({ state: CounterState }));
    const state = await ctx.store.edit((s) => ({ ...s, count: 7 }));
    expect(state).toEqual({ count: 7, names: [] });
    expect(await ctx.store.get("count")).toBe(7);
  });

  it("an edit that throws changes nothing and does not block the next edit", async () => {
    const ctx = new Context<CounterState>(new Workflow({ state: CounterState }));
    const failed = ctx.store.edit((s) => {
      s.count = 99;
      throw new Error("no");
    });
    const next = ctx.store.edit((s) => {
      s.count += 1;
    });
    await expect(failed).rejects.toThrow("no");
    expect((await next).count).toBe(1);
  });

  it("an edit the schema refuses changes nothing", async () => {
    const ctx = new Context<CounterState>(new Workflow({ state: CounterState }));
    const err = await ctx.store.edit((s) => ({ ...s, count: -1, names: "x" as unknown as string[] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateValidationError);
    expect((err as Error).message).toBe(
      "The edit gives a state that does not match the state schema: names: Invalid input: expected array, received string. The state was left as it was.",
    );
    expect(await ctx.store.get("count")).toBe(0);
  });

  it("works on an untyped store too", async () => {
    const ctx = new Context(new Workflow());
    await Promise.all(
      Array.from({ length: 20 }, () =>
        ctx.store.edit(async (s) => {
          const n = (s.n as number | undefined) ?? 0;
          await Promise.resolve();
          s.n = n + 1;
        }),
      ),
    );
    expect(await ctx.store.get("n")).toBe(20);
  });

  it("a function that returns a non-object is refused", async () => {
    const ctx = new Context(new Workflow());
    await expect(ctx.store.edit(() => 3 as unknown as Record<string, unknown>)).rejects.toThrow(
      new StoreKeyError("ctx.store.edit: the function returned number; change the state it is given, or return the new state object."),
    );
  });
});

describe("streamEvents({ cancelOnBreak })", () => {
  class Asker extends Workflow<{}, string> {
    @step({ accepts: [StartEvent], emits: [Tick] })
    async ask(ctx: Context) {
      ctx.writeEventToStream(new InputRequiredEvent({ prefix: "name?" }));
      return new Tick({ n: 1 });
    }
    @step({ accepts: [Tick], emits: [StopEvent] })
    async finish(_ctx: Context) {
      await new Promise((resolve) => setImmediate(resolve));
      return new StopEvent({ result: "finished" });
    }
  }

  it("by default, leaving the loop early only stops streaming: the run finishes", async () => {
    const handler = new Asker().run({});
    for await (const ev of handler.streamEvents()) if (ev instanceof InputRequiredEvent) break;
    expect(await handler).toBe("finished");
  });

  it("with cancelOnBreak, leaving the loop early cancels the run", async () => {
    const handler = new Asker().run({});
    for await (const ev of handler.streamEvents({ cancelOnBreak: true })) if (ev instanceof InputRequiredEvent) break;
    await expect(handler).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    expect(handler.ctx.toJSON().running).toBe(true); // kept, to resume
  });

  it("with cancelOnBreak, a loop that reads to the end leaves the result alone", async () => {
    const handler = new Asker().run({});
    const seen: string[] = [];
    for await (const ev of handler.streamEvents({ cancelOnBreak: true })) seen.push(ev.constructor.name);
    expect(seen).toEqual(["InputRequiredEvent", "StopEvent"]);
    expect(await handler).toBe("finished");
  });
});

describe("typed results: StopEvent.withFields", () => {
  class Answer extends StopEvent.withFields<{ text: string; score: number }>() {}

  class Asker extends Workflow<{ q: string }, Answer> {
    @step({ accepts: [StartEvent], emits: [Answer] })
    async answer(_ctx: Context, ev: StartEvent<{ q: string }>) {
      return new Answer({ text: `echo ${ev.q}`, score: 0.5 });
    }
  }

  it("run() resolves to the event itself, with its fields", async () => {
    const answer = await new Asker().run({ q: "hi" });
    expect(answer).toBeInstanceOf(Answer);
    expect(answer).toBeInstanceOf(StopEvent);
    const fields: { text: string; score: number } = answer;
    expect(fields).toEqual({ result: undefined, text: "echo hi", score: 0.5 });
  });

  it("its constructor takes exactly its fields", () => {
    // @ts-expect-error score is missing
    const partial = new Answer({ text: "x" });
    expect(partial.text).toBe("x");
  });

  it("the graph knows it by its class name, for saved contexts", () => {
    expect(new Asker().graph.eventTypes.get("Answer")).toBe(Answer);
  });
});
