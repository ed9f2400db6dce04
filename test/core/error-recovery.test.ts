import { describe, expect, it } from "vitest";
import { type Context, Event, StartEvent, StepFailedEvent, StopEvent, Workflow, WorkflowValidationError, step } from "../../src/index.ts";

class Query extends Event<{ q: string }> {}

describe("recovery steps (catchErrors)", () => {
  it("a step that exhausts its retries hands over to the recovery step, which can end the run", async () => {
    let attempts = 0;
    class Search extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Query] })
      async start() {
        return new Query({ q: "cats" });
      }
      @step({ accepts: [Query], emits: [StopEvent], retry: { maxAttempts: 2 } })
      async fetch(_ctx: Context, _ev: Query): Promise<StopEvent<string>> {
        attempts++;
        throw new Error("server down");
      }
      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { forSteps: ["fetch"] } })
      async recover(_ctx: Context, ev: StepFailedEvent) {
        return new StopEvent({
          result: `${ev.step} failed ${ev.attempts} times on ${ev.inputEvent} ${JSON.stringify(ev.input)}: ${ev.error.name}: ${ev.error.message}`,
        });
      }
    }
    expect(await new Search().run({})).toBe('fetch failed 2 times on Query {"q":"cats"}: Error: server down');
    expect(attempts).toBe(2);
  });

  it("after maxRecoveries the run fails as it would without a recovery step", async () => {
    let recovered = 0;
    class Loop extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Query] })
      async start() {
        return new Query({ q: "x" });
      }
      @step({ accepts: [Query], emits: [StopEvent] })
      async fetch(): Promise<StopEvent<string>> {
        throw new Error("still down");
      }
      @step({ accepts: [StepFailedEvent], emits: [Query], catchErrors: { maxRecoveries: 2 } })
      async retryLater(_ctx: Context, ev: StepFailedEvent) {
        recovered++;
        return new Query({ q: String(ev.input.q) });
      }
    }
    await expect(new Loop().run({})).rejects.toThrow("still down");
    expect(recovered).toBe(2);
  });

  it("a step not named in forSteps fails the run", async () => {
    class Other extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Query, StopEvent] })
      async start(): Promise<Query> {
        throw new Error("start broke");
      }
      @step({ accepts: [Query], emits: [StopEvent] })
      async fetch() {
        return new StopEvent({ result: "ok" });
      }
      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { forSteps: ["fetch"] } })
      async recover() {
        return new StopEvent({ result: "recovered" });
      }
    }
    await expect(new Other().run({})).rejects.toThrow("start broke");
  });

  it("a recovery step that does not accept StepFailedEvent, or names a step that does not exist, is refused", () => {
    class Bad extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async start() {
        return new StopEvent();
      }
      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { forSteps: ["nope"] } })
      async recover() {
        return new StopEvent();
      }
    }
    expect(() => new Bad().graph).toThrow(
      new WorkflowValidationError('Workflow "Bad" is invalid:\n- Step "recover" catches errors of "nope", which is not a step of this workflow.'),
    );
    expect(() => step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { maxRecoveries: 0 } })).toThrow(
      "@step: catchErrors.maxRecoveries must be a whole number ≥ 1, got 0.",
    );
  });
});
