/**
 * Workflows the inspector's tests run: one whose step fails (with the message given, which may
 * look like markup) while its sibling still executes, so that the run ends failed with the
 * sibling cancelled; and one that asks a human a question.
 */
import { type Context, Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";

class Slow extends Event<{ n: number }> {}
class Fast extends Event<{ n: number }> {}

/** A run of it fails with `message` from its `fast` step while `slow` still executes (it ends with the run). */
export function siblingsWorkflow(message: string): Workflow<Record<string, never>, string> {
  class Siblings extends Workflow<Record<string, never>, string> {
    @step({ accepts: [StartEvent], emits: [Slow, Fast] })
    async start(ctx: Context) {
      ctx.sendEvent(new Slow({ n: 1 }));
      ctx.sendEvent(new Fast({ n: 2 }));
    }

    @step({ accepts: [Slow], emits: [StopEvent] })
    async slow(ctx: Context, _ev: Slow) {
      // Never finishes by itself: it ends with the run.
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      return new StopEvent({ result: "late" });
    }

    @step({ accepts: [Fast], emits: [StopEvent] })
    async fast(_ctx: Context, _ev: Fast): Promise<StopEvent<string>> {
      await new Promise((resolve) => setImmediate(resolve)); // after the start step has finished
      throw new Error(message);
    }
  }
  return new Siblings({ timeout: null });
}

/** Asks a human "Which plan?" and ends with the answer (`response`) as its result. */
export function planWorkflow(): Workflow<Record<string, never>, string> {
  class Plan extends Workflow<Record<string, never>, string> {
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async ask(ctx: Context) {
      const answer = await ctx.waitForEvent(HumanResponseEvent, { waiterEvent: new InputRequiredEvent({ prefix: "Which plan?" }) });
      return new StopEvent({ result: String((answer as HumanResponseEvent & { response?: unknown }).response) });
    }
  }
  return new Plan({ timeout: null });
}
