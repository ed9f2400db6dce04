import { describe, expect, it } from "vitest";
import { type Context, Event, StartEvent, StopEvent, Workflow, WorkflowValidationError, step } from "../../src/index.ts";

class Orphan extends Event<{}> {}
class Unheard extends Event<{}> {}

function validationMessage(flow: Workflow): string {
  try {
    flow.run({});
  } catch (e) {
    expect(e).toBeInstanceOf(WorkflowValidationError);
    return (e as Error).message;
  }
  throw new Error("expected a WorkflowValidationError");
}

describe("validation at the first run", () => {
  it("an event accepted but never emitted", () => {
    class Unproduced extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async start() {
        return new StopEvent();
      }
      @step({ accepts: [Orphan], emits: [StopEvent] })
      async never(_ctx: Context, _ev: Orphan) {
        return new StopEvent();
      }
    }
    expect(validationMessage(new Unproduced())).toBe(
      'Workflow "Unproduced" is invalid:\n- Orphan is accepted by "never" but no step emits it.\n- Unreachable steps: never. Steps must be reachable from the StartEvent or a HumanResponseEvent.',
    );
  });

  it("an event emitted but never accepted", () => {
    class Unconsumed extends Workflow {
      @step({ accepts: [StartEvent], emits: [Unheard, StopEvent] })
      async start(): Promise<StopEvent | Unheard> {
        return new StopEvent();
      }
    }
    expect(validationMessage(new Unconsumed())).toBe('Workflow "Unconsumed" is invalid:\n- Unheard is emitted by "start" but no step accepts it.');
  });

  it("no step accepts the StartEvent", () => {
    class NoStart extends Workflow {
      @step({ accepts: [Orphan], emits: [StopEvent] })
      async only() {
        return new StopEvent();
      }
    }
    expect(validationMessage(new NoStart())).toBe(
      'Workflow "NoStart" is invalid:\n- No step accepts a StartEvent. Add a step with accepts: [StartEvent].\n- Orphan is accepted by "only" but no step emits it.',
    );
  });

  it("no step emits a StopEvent", () => {
    class NoStop extends Workflow {
      @step({ accepts: [StartEvent], emits: [Orphan] })
      async start() {
        return new Orphan();
      }
      @step({ accepts: [Orphan], emits: [] })
      async sink() {}
    }
    expect(validationMessage(new NoStop())).toBe(
      'Workflow "NoStop" is invalid:\n- No step emits a StopEvent, so no run could finish. Add StopEvent to the emits of the final step.',
    );
  });

  it("a step accepting StopEvent", () => {
    class StopEater extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async start() {
        return new StopEvent();
      }
      @step({ accepts: [StopEvent], emits: [] })
      async after() {}
    }
    expect(validationMessage(new StopEater())).toBe(
      'Workflow "StopEater" is invalid:\n- Step "after" accepts StopEvent; a StopEvent ends the run and cannot be accepted by a step.',
    );
  });

  it("more than one StartEvent type", () => {
    class Other extends StartEvent<{}> {}
    class TwoStarts extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async a() {
        return new StopEvent();
      }
      @step({ accepts: [Other], emits: [StopEvent] })
      async b() {
        return new StopEvent();
      }
    }
    expect(validationMessage(new TwoStarts())).toBe(
      'Workflow "TwoStarts" is invalid:\n- More than one StartEvent type is accepted: StartEvent, Other. A workflow has one StartEvent type.',
    );
  });

  it("bad step options are refused where they are written, with ConfigurationError naming the option", () => {
    for (const [config, option, received] of [
      [{ numWorkers: 0 }, "numWorkers", 0],
      [{ retry: { maxAttempts: 0 } }, "retry.maxAttempts", 0],
      [{ retry: { maxAttempts: 2, delay: -1 } }, "retry.delay", -1],
      [{ catchErrors: { maxRecoveries: 1.5 } }, "catchErrors.maxRecoveries", 1.5],
    ] as const) {
      expect(() => step({ accepts: [StartEvent], emits: [StopEvent], ...config })).toThrow(
        expect.objectContaining({ name: "ConfigurationError", option, received }),
      );
    }
    expect(() => step({ accepts: [StartEvent], emits: [StopEvent], numWorkers: 0 })).toThrow("@step: numWorkers must be a whole number ≥ 1, got 0.");
    expect(() => step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 0 } })).toThrow(
      "@step: retry.maxAttempts must be a whole number ≥ 1, got 0.",
    );
    expect(() => step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 2, delay: -1 } })).toThrow(
      "@step: retry.delay is in seconds and must be a finite number ≥ 0, got -1.",
    );
    // What an import cycle gives: the class is still undefined where the step is declared.
    expect(() => step({ accepts: [StartEvent, undefined as unknown as typeof Orphan], emits: [StopEvent] })).toThrow(
      "@step: accepts[1] is undefined, not an Event class (an import cycle can leave a class undefined where the step is declared).",
    );
    expect(() => step({ accepts: [StartEvent], emits: [String as unknown as typeof StopEvent] })).toThrow(
      "@step: emits[0] is the function String, not an Event class.",
    );
    expect(() => new Workflow().addStep("run", { accepts: [StartEvent], emits: [StopEvent] }, "not a function" as never)).toThrow(
      'Step "run" needs a function to run, got the string "not a function".',
    );
  });

  it("a class listed twice in accepts is one route: one execution per event, one arrow in the drawing", async () => {
    const flow = new Workflow().addStep(
      "once",
      { accepts: [StartEvent, StartEvent], emits: [StopEvent, StopEvent] },
      async () => new StopEvent({ result: "ok" }),
    );
    expect(await flow.run({})).toBe("ok");
    expect(flow.graph.routes.get(StartEvent)?.length).toBe(1);
    expect(
      flow
        .toMermaid()
        .split("\n")
        .filter((line) => line.includes("-->")),
    ).toEqual(["  event_StartEvent --> step_once", "  step_once --> event_StopEvent"]);
  });

  it("addStep refuses the name of a @step method, and steps added once the graph is built", () => {
    class Decorated extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async start() {
        return new StopEvent();
      }
    }
    const flow = new Decorated();
    expect(() => flow.addStep("start", { accepts: [StartEvent], emits: [StopEvent] }, async () => new StopEvent())).toThrow(
      'addStep: a step named "start" already exists. Give the new step another name.',
    );
    flow.toMermaid();
    expect(() => flow.addStep("later", { accepts: [StartEvent], emits: [StopEvent] }, async () => new StopEvent())).toThrow(
      'addStep("later"): steps must be added before the workflow\'s graph is built (by the first run(), toMermaid() or graph).',
    );
  });
});

describe("steps and subclasses", () => {
  class Greeter extends Workflow<{ name: string }, string> {
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async greet(_ctx: Context, ev: StartEvent<{ name: string }>) {
      return new StopEvent({ result: `Hello ${ev.name}` });
    }
  }

  it("an override without @step keeps the step and runs the override, which may call super", async () => {
    class Loud extends Greeter {
      override async greet(ctx: Context, ev: StartEvent<{ name: string }>) {
        const quiet = (await super.greet(ctx, ev)) as StopEvent<string>;
        return new StopEvent({ result: `${quiet.result.toUpperCase()}!` });
      }
    }
    expect(await new Loud().run({ name: "Ada" })).toBe("HELLO ADA!");
    expect(await new Greeter().run({ name: "Ada" })).toBe("Hello Ada");
  });

  it("a class field that overrides a step runs as the step", async () => {
    class Field extends Greeter {
      override greet = async (_ctx: Context, ev: StartEvent<{ name: string }>) => new StopEvent({ result: `Hey ${ev.name}` });
    }
    expect(await new Field().run({ name: "Ada" })).toBe("Hey Ada");
  });

  it("an override with its own @step replaces the step's declaration", async () => {
    let attempts = 0;
    class Patient extends Greeter {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 2 } })
      override async greet(_ctx: Context, ev: StartEvent<{ name: string }>) {
        if (++attempts === 1) throw new Error("not yet");
        return new StopEvent({ result: `Hello again ${ev.name}` });
      }
    }
    expect(await new Patient().run({ name: "Ada" })).toBe("Hello again Ada");
    expect(attempts).toBe(2);
  });
});
