import { describe, expect, it } from "vitest";
import {
  Event,
  EventReceivedEvent,
  HumanResponseEvent,
  InputRequiredEvent,
  RunEndedEvent,
  RunStartedEvent,
  StartEvent,
  StepStateChangedEvent,
  StopEvent,
  Workflow,
  step,
  type Context,
} from "../../src/index.ts";
import type { Event as AnyEvent } from "../../src/index.ts";

class Middle extends Event<{ n: number }> {}

const describeEvent = (ev: AnyEvent): string => {
  if (ev instanceof RunStartedEvent) return `run started${ev.resumed ? " (resumed)" : ""}`;
  if (ev instanceof StepStateChangedEvent)
    return `${ev.step} ${ev.state} #${ev.attempt} on ${ev.inputEvent}${ev.outputEvent ? ` → ${ev.outputEvent}` : ""}${ev.error ? `: ${ev.error}` : ""}${ev.willRetry !== undefined ? ` (retry: ${ev.willRetry})` : ""}`;
  if (ev instanceof RunEndedEvent) return `run ${ev.status}${ev.error ? ` (${ev.error.name}: ${ev.error.message})` : ""}`;
  if (ev instanceof EventReceivedEvent) return `received ${ev.eventType} ${JSON.stringify(ev.event)}`;
  return ev.constructor.name;
};

async function collect(handler: { streamEvents(): AsyncIterable<AnyEvent> }): Promise<string[]> {
  const seen: string[] = [];
  for await (const ev of handler.streamEvents()) seen.push(describeEvent(ev));
  return seen;
}

describe("lifecycle events", () => {
  it("a run that succeeds: started, each step's states, the StopEvent, then ended", async () => {
    let tries = 0;
    class Two extends Workflow<{}, number> {
      @step({ accepts: [StartEvent], emits: [Middle] })
      async first() {
        return new Middle({ n: 1 });
      }
      @step({ accepts: [Middle], emits: [StopEvent], retry: { maxAttempts: 2 } })
      async second(_ctx: Context, ev: Middle) {
        if (++tries === 1) throw new Error("flaky");
        return new StopEvent({ result: ev.n });
      }
    }
    const handler = new Two().run({}, { lifecycleEvents: true });
    expect(await collect(handler)).toEqual([
      "run started",
      "first started #1 on StartEvent",
      "first finished #1 on StartEvent → Middle",
      "second started #1 on Middle",
      "second failed #1 on Middle: flaky (retry: true)",
      "second started #2 on Middle",
      "second finished #2 on Middle → StopEvent",
      "StopEvent",
      "run succeeded",
    ]);
    expect(await handler).toBe(1);
  });

  it("every lifecycle event carries the run's id", async () => {
    class One extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async only() {
        return new StopEvent({ result: "ok" });
      }
    }
    const handler = new One().run({}, { lifecycleEvents: true });
    const ids = new Set<string>();
    for await (const ev of handler.streamEvents()) if ("runId" in ev) ids.add(ev.runId as string);
    expect([...ids]).toEqual([handler.runId]);
  });

  it("a run that fails ends the stream with a failed RunEndedEvent", async () => {
    class Broken extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async boom(): Promise<StopEvent<string>> {
        throw new TypeError("no such thing");
      }
    }
    const handler = new Broken().run({}, { lifecycleEvents: true });
    expect(await collect(handler)).toEqual([
      "run started",
      "boom started #1 on StartEvent",
      "boom failed #1 on StartEvent: no such thing (retry: false)",
      "run failed (TypeError: no such thing)",
    ]);
    await expect(handler).rejects.toThrow("no such thing");
  });

  it("a cancelled run ends the stream with a cancelled RunEndedEvent", async () => {
    class Waits extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async wait(ctx: Context) {
        await ctx.waitForEvent(Middle);
        return new StopEvent({ result: "never" });
      }
    }
    const handler = new Waits().run({}, { lifecycleEvents: true });
    const seen: string[] = [];
    for await (const ev of handler.streamEvents()) {
      seen.push(describeEvent(ev));
      if (ev instanceof StepStateChangedEvent) handler.cancel();
    }
    expect(seen).toEqual(["run started", "wait started #1 on StartEvent", "run cancelled (WorkflowCancelledByUser: The run was cancelled.)"]);
    await handler.catch(() => {});
  });

  it("a run that times out ends the stream with a timedOut RunEndedEvent", async () => {
    class Waits extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async wait(ctx: Context) {
        await ctx.waitForEvent(Middle);
        return new StopEvent({ result: "never" });
      }
    }
    const handler = new Waits({ timeout: 0.05 }).run({}, { lifecycleEvents: true });
    const seen = await collect(handler);
    expect(seen.at(-1)).toBe(
      'run timedOut (WorkflowTimeoutError: Workflow "Waits" timed out after 0.05 seconds. Active steps: wait. Waiting for: Middle (send it with handler.ctx.sendEvent).)',
    );
    await handler.catch(() => {});
  });

  it("an event sent in from outside is written where the run took it, before what it led to; a step's own sends are not", async () => {
    class Ask extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Middle] })
      async ask() {
        return new Middle({ n: 1 });
      }
      @step({ accepts: [Middle], emits: [StopEvent] })
      async wait(ctx: Context) {
        const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: "Go?" }) });
        return new StopEvent({ result: answer.response });
      }
    }
    const handler = new Ask().run({}, { lifecycleEvents: true });
    const seen: string[] = [];
    for await (const ev of handler.streamEvents()) {
      seen.push(describeEvent(ev));
      if (ev instanceof InputRequiredEvent) {
        // Refused: no step named so. Nothing of it is written.
        expect(() => handler.ctx.sendEvent(new HumanResponseEvent({ response: "no" }), { step: "nope" })).toThrow(/no step named "nope"/);
        handler.ctx.sendEvent(new HumanResponseEvent({ response: "yes" }));
      }
    }
    expect(seen).toEqual([
      "run started",
      "ask started #1 on StartEvent",
      "ask finished #1 on StartEvent → Middle",
      "wait started #1 on Middle",
      "InputRequiredEvent",
      'received HumanResponseEvent {"response":"yes"}',
      "wait finished #1 on Middle → StopEvent",
      "StopEvent",
      "run succeeded",
    ]);
    expect(await handler).toBe("yes");
    // Once the run has ended, a send is refused, and nothing is written.
    expect(() => handler.ctx.sendEvent(new HumanResponseEvent({ response: "late" }))).toThrow(/no run is in progress/);
  });

  it("a StopEvent sent in from outside is written before the run's end", async () => {
    class Waits extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async wait(ctx: Context) {
        await ctx.waitForEvent(Middle);
        return new StopEvent({ result: "never" });
      }
    }
    const handler = new Waits().run({}, { lifecycleEvents: true });
    const seen: string[] = [];
    for await (const ev of handler.streamEvents()) {
      seen.push(describeEvent(ev));
      if (ev instanceof StepStateChangedEvent) handler.ctx.sendEvent(new StopEvent({ result: "stopped" }));
    }
    expect(seen).toEqual(["run started", "wait started #1 on StartEvent", 'received StopEvent {"result":"stopped"}', "StopEvent", "run succeeded"]);
    expect(await handler).toBe("stopped");
  });

  it("are not written unless asked for", async () => {
    class One extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async only() {
        return new StopEvent({ result: "ok" });
      }
    }
    expect(await collect(new One().run({}))).toEqual(["StopEvent"]);
  });
});
