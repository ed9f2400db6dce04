import { describe, expect, it } from "vitest";
import { Context, Event, StartEvent, StopEvent, Workflow, WorkflowRuntimeError, step } from "../../src/index.ts";

class First extends Event<{ n: number }> {}
class Second extends Event<{ n: number }> {}

class Chain extends Workflow<{ n: number }, number> {
  @step({ accepts: [StartEvent], emits: [First] })
  async start(_ctx: Context, ev: StartEvent<{ n: number }>) {
    return new First({ n: ev.n + 1 });
  }
  @step({ accepts: [First], emits: [Second] })
  async middle(_ctx: Context, ev: First) {
    return new Second({ n: ev.n * 10 });
  }
  @step({ accepts: [Second], emits: [StopEvent] })
  async end(_ctx: Context, ev: Second) {
    return new StopEvent({ result: ev.n + 2 });
  }
}

class Counter extends Workflow<{}, number> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async count(ctx: Context) {
    const n = (await ctx.store.get<number>("count", 0)) + 1;
    await ctx.store.set("count", n);
    return new StopEvent({ result: n });
  }
}

describe("runs", () => {
  it("a 3-step chain returns its result", async () => {
    expect(await new Chain().run({ n: 1 })).toBe(22);
  });

  it("sequential runs on one context keep the store: 1, 2, 3", async () => {
    const flow = new Counter();
    const ctx = new Context(flow);
    const results = [await flow.run({}, { ctx }), await flow.run({}, { ctx }), await flow.run({}, { ctx })];
    expect(results).toEqual([1, 2, 3]);
    expect(await flow.run({})).toBe(1); // a fresh context per run by default
  });

  it("a StopEvent subclass is returned as the event itself", async () => {
    class Done extends StopEvent<string> {}
    class Flow extends Workflow<{}, Done> {
      @step({ accepts: [StartEvent], emits: [Done] })
      async go() {
        return new Done({ result: "ok" });
      }
    }
    const done = await new Flow().run({});
    expect(done).toBeInstanceOf(Done);
    expect(done.result).toBe("ok");
  });

  it("a step returning a non-event fails the run naming the step", async () => {
    class Bad extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async oops() {
        return "done" as unknown as StopEvent;
      }
    }
    const err = await new Bad().run({}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowRuntimeError);
    expect((err as Error).message).toBe('Step "oops" returned a string, not an event. Return an Event instance, or nothing to send nothing.');
  });

  it("a step that throws fails the run with the original error", async () => {
    const boom = new TypeError("boom");
    class Throws extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async explode(): Promise<StopEvent> {
        throw boom;
      }
    }
    await expect(new Throws().run({})).rejects.toBe(boom);
  });

  it("steps can be added without decorators", async () => {
    const flow = new Workflow<{ n: number }, number>().addStep(
      "double",
      { accepts: [StartEvent], emits: [StopEvent] },
      async (_ctx, ev: StartEvent<{ n: number }>) => new StopEvent({ result: ev.n * 2 }),
    );
    expect(await flow.run({ n: 21 })).toBe(42);
  });

  it("a run can start from a StartEvent subclass instance", async () => {
    class Ask extends StartEvent<{ q: string }> {}
    class Flow extends Workflow<{ q: string }, string> {
      @step({ accepts: [Ask], emits: [StopEvent] })
      async answer(_ctx: Context, ev: Ask) {
        return new StopEvent({ result: ev.q.toUpperCase() });
      }
    }
    expect(await new Flow().run(new Ask({ q: "hi" }))).toBe("HI");
    expect(await new Flow().run({ q: "yo" })).toBe("YO");
  });

  it("verbose logs each step and what it produced", async () => {
    const lines: string[] = [];
    await new Chain({ verbose: true, log: (l) => lines.push(l) }).run({ n: 0 });
    expect(lines).toEqual([
      "Running step start",
      "Step start produced event First",
      "Running step middle",
      "Step middle produced event Second",
      "Running step end",
      "Step end produced event StopEvent",
    ]);
  });

  it("draws the workflow as Mermaid", () => {
    const chart = new Chain().toMermaid();
    expect(chart.split("\n")[0]).toBe("flowchart TD");
    expect(chart).toContain("event_StartEvent --> step_start");
    expect(chart).toContain("step_start --> event_First");
    expect(chart).toContain("event_First --> step_middle");
    expect(chart).toContain("step_end --> event_StopEvent");
  });

  it("draws steps whose names Mermaid could not read as they are", () => {
    const flow = new Workflow()
      .addStep("write draft", { accepts: [StartEvent], emits: [First] }, async () => new First({ n: 1 }))
      .addStep('say "hi"', { accepts: [First], emits: [StopEvent] }, async () => new StopEvent());
    expect(flow.toMermaid().split("\n").slice(1)).toEqual([
      '  step_write_draft["write draft"]',
      "  event_StartEvent([StartEvent])",
      "  event_StartEvent --> step_write_draft",
      "  event_First[/First/]",
      "  step_write_draft --> event_First",
      '  step_say__hi_["say #quot;hi#quot;"]',
      "  event_First --> step_say__hi_",
      "  event_StopEvent([StopEvent])",
      "  step_say__hi_ --> event_StopEvent",
    ]);
  });

  it("event fields are read directly and type names are stable", async () => {
    class Renamed extends Event<{ a: number }> {
      static readonly typeName = "demo.Renamed";
    }
    const { eventTypeName } = await import("../../src/index.ts");
    expect(new Renamed({ a: 1 }).a).toBe(1);
    expect(eventTypeName(Renamed)).toBe("demo.Renamed");
    expect(eventTypeName(First)).toBe("First");
    expect(eventTypeName(StartEvent)).toBe("StartEvent");
  });
});
