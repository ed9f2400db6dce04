/**
 * Behaviours ported from Python llama-index-workflows' own tests, where stepflow differed:
 * fan-in buffers, waiters, graph checks, cancel-and-save, and failure modes.
 */
import { describe, expect, it } from "vitest";
import {
  Context,
  ContextSerdeError,
  Event,
  HumanResponseEvent,
  InputRequiredEvent,
  NonErrorThrownError,
  StartEvent,
  StopEvent,
  UnhandledEventError,
  Workflow,
  WorkflowCancelledByUser,
  WorkflowValidationError,
  step,
} from "../../src/index.ts";

class CycleA extends Event<{}> {}
class CycleB extends Event<{}> {}
class IslandEvent extends Event<{}> {}

function validationMessage(flow: Workflow): string {
  try {
    flow.validate();
  } catch (e) {
    expect(e).toBeInstanceOf(WorkflowValidationError);
    return (e as Error).message;
  }
  throw new Error("expected a WorkflowValidationError");
}

describe("graph validation", () => {
  class ResultA extends StopEvent<string> {}
  class ResultB extends StopEvent<string> {}
  class TwoStops extends Workflow {
    @step({ accepts: [StartEvent], emits: [CycleA, ResultA] })
    async first() {
      return new CycleA();
    }
    @step({ accepts: [CycleA], emits: [ResultB] })
    async second() {
      return new ResultB({ result: "b" });
    }
  }

  it("refuses two StopEvent types", () => {
    expect(validationMessage(new TwoStops())).toBe(
      'Workflow "TwoStops" is invalid:\n- Only one type of StopEvent is allowed per workflow, found 2: ResultA, ResultB.',
    );
  });

  it("refuses unreachable and dead-end steps in one error", () => {
    class MultiError extends Workflow {
      @step({ accepts: [StartEvent], emits: [CycleA, StopEvent] })
      async cycle_a() {
        return new CycleA();
      }
      @step({ accepts: [CycleA], emits: [CycleB] })
      async cycle_b() {
        return new CycleB();
      }
      @step({ accepts: [CycleB], emits: [CycleA] })
      async cycle_c() {
        return new CycleA();
      }
      @step({ accepts: [IslandEvent], emits: [IslandEvent] })
      async island() {
        return new IslandEvent();
      }
    }
    expect(() => new MultiError().run({})).toThrow(
      'Workflow "MultiError" is invalid:\n- Unreachable steps: island. Steps must be reachable from the StartEvent or a HumanResponseEvent.\n- Dead-end steps: cycle_b, cycle_c, island. Steps must have a path to a StopEvent or an InputRequiredEvent.',
    );
  });

  it("a step reached only by a HumanResponseEvent, or ending in an InputRequiredEvent, is valid", async () => {
    class Ask extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [InputRequiredEvent] })
      async ask() {
        return new InputRequiredEvent({ prefix: "name?" });
      }
      @step({ accepts: [HumanResponseEvent], emits: [StopEvent] })
      async answer(_ctx: Context, ev: HumanResponseEvent<{ response: string }>) {
        return new StopEvent({ result: ev.response });
      }
    }
    const flow = new Ask();
    expect(flow.validate()).toBeUndefined();
    const handler = flow.run({});
    for await (const ev of handler.streamEvents()) if (ev instanceof InputRequiredEvent) handler.ctx.sendEvent(new HumanResponseEvent({ response: "Ada" }));
    expect(await handler).toBe("Ada");
  });

  it("{ validate: false } runs a graph the checks refuse; validate() still reports it", async () => {
    class Dynamic extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [] })
      async start(ctx: Context) {
        ctx.sendEvent(new IslandEvent());
      }
      @step({ accepts: [IslandEvent], emits: [StopEvent] })
      async island() {
        return new StopEvent({ result: "reached" });
      }
    }
    const flow = new Dynamic({ validate: false });
    expect(await flow.run({})).toBe("reached");
    expect(validationMessage(flow)).toBe(
      'Workflow "Dynamic" is invalid:\n- IslandEvent is accepted by "island" but no step emits it.\n- Unreachable steps: island. Steps must be reachable from the StartEvent or a HumanResponseEvent.',
    );
  });

  it("{ validate: false } still needs one StartEvent type", () => {
    class NoStart extends Workflow {
      @step({ accepts: [CycleA], emits: [StopEvent] })
      async only() {
        return new StopEvent();
      }
    }
    expect(() => new NoStart({ validate: false }).run({})).toThrow(
      'Workflow "NoStart" is invalid:\n- No step accepts a StartEvent. Add a step with accepts: [StartEvent].',
    );
  });
});

class Part extends Event<{ n: number }> {}
class Joined extends Event<{ text: string }> {}

/** Two steps each collecting [Part, Part]; Part 2 comes from a human (so a run can be saved between the parts). */
class TwoCollectors extends Workflow<{}, string[]> {
  @step({ accepts: [StartEvent], emits: [Part, InputRequiredEvent] })
  async start(ctx: Context) {
    ctx.sendEvent(new Part({ n: 1 }));
    return new InputRequiredEvent({ prefix: "second part?" });
  }
  @step({ accepts: [HumanResponseEvent], emits: [Part] })
  async relay(_ctx: Context, ev: HumanResponseEvent<{ n: number }>) {
    return new Part({ n: ev.n });
  }
  @step({ accepts: [Part], emits: [Joined] })
  async x(ctx: Context, ev: Part) {
    const parts = ctx.collectEvents(ev, [Part, Part]);
    return parts ? new Joined({ text: `x:${parts.map((p) => p.n).join(",")}` }) : undefined;
  }
  @step({ accepts: [Part], emits: [Joined] })
  async y(ctx: Context, ev: Part) {
    const parts = ctx.collectEvents(ev, [Part, Part]);
    return parts ? new Joined({ text: `y:${parts.map((p) => p.n).join(",")}` }) : undefined;
  }
  @step({ accepts: [Joined], emits: [StopEvent] })
  async end(ctx: Context, ev: Joined) {
    const both = ctx.collectEvents(ev, [Joined, Joined]);
    return both ? new StopEvent({ result: both.map((j) => j.text).sort() }) : undefined;
  }
}

/** Answers the first InputRequiredEvent of a run with `answer`, and returns the run's result. */
async function answerOnce<R>(handler: { readonly ctx: Context; streamEvents(): AsyncIterable<Event> } & PromiseLike<R>, answer: Event): Promise<R> {
  for await (const ev of handler.streamEvents()) if (ev instanceof InputRequiredEvent) handler.ctx.sendEvent(answer);
  return await handler;
}

describe("collectEvents", () => {
  it("keeps one buffer per step", async () => {
    const flow = new TwoCollectors();
    expect(await answerOnce(flow.run({}), new HumanResponseEvent({ n: 2 }))).toEqual(["x:1,2", "y:1,2"]);
  });

  it("keeps one buffer per bufferId within a step", async () => {
    class Sided extends Event<{ side: string; n: number }> {}
    class Pairs extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Sided] })
      async start(ctx: Context) {
        for (const [side, n] of [
          ["left", 1],
          ["right", 2],
          ["left", 3],
        ] as const)
          ctx.sendEvent(new Sided({ side, n }));
      }
      @step({ accepts: [Sided], emits: [StopEvent] })
      async pair(ctx: Context, ev: Sided) {
        const pair = ctx.collectEvents(ev, [Sided, Sided], { bufferId: ev.side });
        return pair ? new StopEvent({ result: pair.map((p) => `${p.side}:${p.n}`).join(" ") }) : undefined;
      }
    }
    expect(await new Pairs().run({})).toBe("left:1 left:3");
  });

  it("a saved context keeps each step's buffer, and the restored run finishes with them", async () => {
    const flow = new TwoCollectors();
    const handler = flow.run({});
    let saved = "";
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof InputRequiredEvent) {
        saved = JSON.stringify(handler.ctx.toJSON());
        handler.cancel();
      }
    }
    await expect(handler).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    const part1 = [{ type: "Part", data: { n: 1 } }];
    expect(JSON.parse(saved).run.collected).toEqual({ x: { "Part|Part": part1 }, y: { "Part|Part": part1 } });
    const ctx = Context.fromJSON(flow, saved);
    const resumed = flow.run(undefined, { ctx });
    resumed.ctx.sendEvent(new HumanResponseEvent({ n: 2 }));
    expect(await resumed).toEqual(["x:1,2", "y:1,2"]);
  });

  it("refuses a context saved with the older shared buffers when two steps could have collected them, saying what to do", () => {
    const old = {
      version: 1,
      workflow: "TwoCollectors",
      store: {},
      running: true,
      run: { queued: {}, inFlight: {}, collected: { "Part|Part": [{ type: "Part", data: { n: 1 } }] }, unclaimed: [], waiters: [] },
    };
    const attempt = () => Context.fromJSON(new TwoCollectors(), JSON.stringify(old));
    expect(attempt).toThrow(ContextSerdeError);
    expect(attempt).toThrow(
      "Cannot restore the context: it holds events collected by collectEvents (Part|Part) in the format of an older stepflow, which kept one buffer for all steps, and 2 steps (x, y) of TwoCollectors could have collected them. Finish that run with the version that saved it, or start the run again with a new Context.",
    );
  });
});

describe("waitForEvent", () => {
  it("the event that answers a waiter is consumed by it and not also delivered to steps", async () => {
    const delivered: string[] = [];
    class Ask extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async ask(ctx: Context) {
        const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: "ok?" }) });
        return new StopEvent({ result: answer.response });
      }
      @step({ accepts: [HumanResponseEvent], emits: [] })
      async audit(_ctx: Context, ev: HumanResponseEvent<{ response: string }>) {
        delivered.push(ev.response);
      }
    }
    expect(await answerOnce(new Ask().run({}), new HumanResponseEvent({ response: "yes" }))).toBe("yes");
    expect(delivered).toEqual([]);
  });

  it("a numWorkers: 1 step waiting gives its worker back, so the event that brings its answer reaches it; it continues when the worker is free", async () => {
    class Question extends Event<{}> {}
    class Reply extends Event<{ text: string }> {}
    const order: string[] = [];
    class SelfAnswering extends Workflow<{}, string> {
      @step({ accepts: [StartEvent, Question], emits: [Question, StopEvent], numWorkers: 1 })
      async work(ctx: Context, ev: StartEvent | Question) {
        if (ev instanceof Question) {
          ctx.sendEvent(new Reply({ text: "answered" }));
          await Promise.resolve();
          await Promise.resolve();
          order.push("question handled");
          return;
        }
        ctx.sendEvent(new Question());
        order.push("waiting");
        const reply = await ctx.waitForEvent(Reply);
        order.push("resumed");
        return new StopEvent({ result: reply.text });
      }
    }
    expect(await new SelfAnswering({ timeout: 5 }).run({})).toBe("answered");
    expect(order).toEqual(["waiting", "question handled", "resumed"]);
  });
});

describe("cancel and resume", () => {
  class Approve extends Workflow<{ item: string }, string> {
    starts = 0;
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async approve(ctx: Context, ev: StartEvent<{ item: string }>) {
      (this as Approve).starts++;
      await ctx.store.set("item", ev.item);
      const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, {
        waiterEvent: new InputRequiredEvent({ prefix: `approve ${ev.item}?` }),
      });
      return new StopEvent({ result: `${ev.item}: ${answer.response}` });
    }
  }

  /** Starts a run on `ctx`, cancels it once it asks its question, and waits for it to end. */
  async function cancelWhenAsked(flow: Approve, ctx: Context): Promise<void> {
    const handler = flow.run({ item: "laptop" }, { ctx });
    for await (const ev of handler.streamEvents()) if (ev instanceof InputRequiredEvent) handler.cancel();
    await expect(handler).rejects.toBeInstanceOf(WorkflowCancelledByUser);
  }

  it("a context saved after cancel() holds the run in progress", async () => {
    const flow = new Approve();
    const ctx = new Context(flow);
    await cancelWhenAsked(flow, ctx);
    expect(ctx.toJSON()).toMatchObject({
      running: true,
      store: { item: "laptop" },
      run: { queued: {}, inFlight: { approve: [{ type: "StartEvent", data: { item: "laptop" } }] } },
    });
  });

  it("the same context continues the cancelled run", async () => {
    const flow = new Approve();
    const ctx = new Context(flow);
    await cancelWhenAsked(flow, ctx);
    expect(await answerOnce(flow.run(undefined, { ctx }), new HumanResponseEvent({ response: "yes" }))).toBe("laptop: yes");
    expect(flow.starts).toBe(2);
    expect(ctx.toJSON()).toMatchObject({ running: false, run: null });
  });

  it("a context restored from JSON saved after cancel() continues the run", async () => {
    const flow = new Approve();
    const ctx = new Context(flow);
    await cancelWhenAsked(flow, ctx);
    const restored = Context.fromJSON(new Approve(), JSON.stringify(ctx.toJSON()));
    expect(await answerOnce(new Approve().run(undefined, { ctx: restored }), new HumanResponseEvent({ response: "no" }))).toBe("laptop: no");
  });

  it("a new run with input on the context replaces the cancelled one", async () => {
    const flow = new Approve();
    const ctx = new Context(flow);
    await cancelWhenAsked(flow, ctx);
    const handler = flow.run({ item: "phone" }, { ctx });
    expect(await answerOnce(handler, new HumanResponseEvent({ response: "yes" }))).toBe("phone: yes");
  });
});

describe("failures", () => {
  it("an event returned that no step accepts fails the run at once, naming the step and the class", async () => {
    class Stray extends Event<{}> {}
    class Loose extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async start() {
        return new Stray() as unknown as StopEvent<string>;
      }
    }
    const run = new Loose({ timeout: null }).run({});
    await expect(run).rejects.toBeInstanceOf(UnhandledEventError);
    await expect(run).rejects.toThrow(
      'Step "start" returned Stray, but no step accepts Stray and no waitForEvent is waiting for it, so the run could not go on. Add Stray to the accepts of the step that should handle it (or send it with ctx.sendEvent, which keeps it for a later waitForEvent).',
    );
    await expect(run).rejects.toMatchObject({ step: "start", eventType: "Stray" });
  });

  it("an event sent with sendEvent before its waitForEvent is still taken by it", async () => {
    class Note extends Event<{ text: string }> {}
    class Early extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async start(ctx: Context) {
        ctx.sendEvent(new Note({ text: "kept" }));
        const note = await ctx.waitForEvent(Note);
        return new StopEvent({ result: note.text });
      }
    }
    expect(await new Early({ timeout: 5 }).run({})).toBe("kept");
  });

  it.each([
    [undefined, "undefined"],
    [null, "null"],
    ["boom", 'the string "boom"'],
    [42, "42"],
  ])("a step throwing %s rejects with NonErrorThrownError naming the step, the value as cause", async (thrown, shown) => {
    const flow = new Workflow({ timeout: null }).addStep("parse", { accepts: [StartEvent], emits: [StopEvent] }, async () => {
      throw thrown;
    });
    const run = flow.run({});
    await expect(run).rejects.toBeInstanceOf(NonErrorThrownError);
    await expect(run).rejects.toThrow(
      `Step "parse" threw ${shown}, not an Error. Throw an Error (throw new Error("what went wrong")) so the failure says what happened; the thrown value is this error's cause.`,
    );
    await expect(run).rejects.toMatchObject({ step: "parse", cause: thrown });
  });
});
