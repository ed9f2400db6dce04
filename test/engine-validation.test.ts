import { describe, expect, it } from "vitest";
import { Context, Event, StartEvent, StopEvent, Workflow, WorkflowValidationError, step } from "../src/index.ts";

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
    expect(validationMessage(new Unproduced())).toBe('Workflow "Unproduced" is invalid:\n- Orphan is accepted by "never" but no step emits it.');
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
    expect(validationMessage(new NoStop())).toBe('Workflow "NoStop" is invalid:\n- No step emits a StopEvent, so no run could finish. Add StopEvent to the emits of the final step.');
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
    expect(validationMessage(new StopEater())).toBe('Workflow "StopEater" is invalid:\n- Step "after" accepts StopEvent; a StopEvent ends the run and cannot be accepted by a step.');
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
    expect(validationMessage(new TwoStarts())).toBe('Workflow "TwoStarts" is invalid:\n- More than one StartEvent type is accepted: StartEvent, Other. A workflow has one StartEvent type.');
  });

  it("bad step options are refused where they are written", () => {
    expect(() => step({ accepts: [StartEvent], emits: [StopEvent], numWorkers: 0 })).toThrow("@step: numWorkers must be a whole number ≥ 1, got 0.");
    expect(() => step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 0 } })).toThrow("@step: retry.maxAttempts must be a whole number ≥ 1, got 0.");
  });
});
