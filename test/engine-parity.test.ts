/**
 * Behaviours ported from Python llama-index-workflows' own tests, where stepflow differed:
 * fan-in buffers, waiters, graph checks, cancel-and-save, and failure modes.
 */
import { describe, expect, it } from "vitest";
import { Context, Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, WorkflowValidationError, step } from "../src/index.ts";

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
    expect(validationMessage(new TwoStops())).toBe('Workflow "TwoStops" is invalid:\n- Only one type of StopEvent is allowed per workflow, found 2: ResultA, ResultB.');
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
    expect(() => new NoStart({ validate: false }).run({})).toThrow('Workflow "NoStart" is invalid:\n- No step accepts a StartEvent. Add a step with accepts: [StartEvent].');
  });
});
