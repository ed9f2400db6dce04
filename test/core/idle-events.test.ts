/**
 * WorkflowIdleEvent, Python's idle tracking: a run with nothing queued and no step executing,
 * which only an event from outside can move on, says so once per idle period on a stream of
 * lifecycle events, and to its run observers.
 */
import { describe, expect, it } from "vitest";
import {
  Context,
  Event,
  EventReceivedEvent,
  HumanResponseEvent,
  InputRequiredEvent,
  RunEndedEvent,
  RunObservers,
  RunStartedEvent,
  StartEvent,
  StepStateChangedEvent,
  StopEvent,
  Workflow,
  WorkflowIdleEvent,
  step,
} from "../../src/index.ts";
import type { Event as AnyEvent, WorkflowHandler } from "../../src/index.ts";

class Question extends InputRequiredEvent<{ prefix: string }> {}
class Answer extends HumanResponseEvent<{ response: string }> {}
class Ask extends Event<{ q: string }> {}
class Work extends Event<{ n: number }> {}

const describeEvent = (ev: AnyEvent): string => {
  if (ev instanceof RunStartedEvent) return `run started${ev.resumed ? " (resumed)" : ""}`;
  if (ev instanceof StepStateChangedEvent) return `${ev.step} ${ev.state}`;
  if (ev instanceof WorkflowIdleEvent) return "idle";
  if (ev instanceof EventReceivedEvent) return `received ${ev.eventType}`;
  if (ev instanceof RunEndedEvent) return `run ${ev.status}`;
  if (ev instanceof Question) return `asked ${ev.prefix}`;
  return ev.constructor.name;
};

/** What `handler`'s stream says, answering each question only once the run says it is idle. */
async function answeredWhenIdle(handler: WorkflowHandler<unknown>, answers: string[]): Promise<string[]> {
  const seen: string[] = [];
  for await (const ev of handler.streamEvents()) {
    seen.push(describeEvent(ev));
    if (ev instanceof WorkflowIdleEvent) handler.ctx.sendEvent(new Answer({ response: answers.shift() ?? "none" }));
  }
  return seen;
}

/** Gives every callback already queued on the event loop (an idle check among them) its turn. */
const turns = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Asks two questions with waitForEvent, one after the other, in one step execution. */
class TwoQuestions extends Workflow<{}, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async ask(ctx: Context) {
    const name = await ctx.waitForEvent(Answer, { waiterEvent: new Question({ prefix: "name?" }) });
    const city = await ctx.waitForEvent(Answer, { waiterEvent: new Question({ prefix: "city?" }) });
    return new StopEvent({ result: `${name.response} from ${city.response}` });
  }
}

describe("WorkflowIdleEvent", () => {
  it("a run waiting for a human is idle once per question, after the question, and not while its step runs", async () => {
    const handler = new TwoQuestions({ timeout: 10 }).run({}, { lifecycleEvents: true });
    expect(await answeredWhenIdle(handler, ["Ada", "London"])).toEqual([
      "run started",
      "ask started",
      "asked name?",
      "idle",
      "received Answer",
      "asked city?",
      "idle",
      "received Answer",
      "ask finished",
      "StopEvent",
      "run succeeded",
    ]);
    expect(await handler).toBe("Ada from London");
  });

  it("carries the run's id", async () => {
    const handler = new TwoQuestions({ timeout: 10 }).run({}, { lifecycleEvents: true });
    const ids: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (!(ev instanceof WorkflowIdleEvent)) continue;
      ids.push(ev.runId);
      handler.ctx.sendEvent(new Answer({ response: "x" }));
    }
    expect(ids).toEqual([handler.runId, handler.runId]);
  });

  it("a step that returns an InputRequiredEvent and a step that accepts the answer: idle without any waitForEvent", async () => {
    class Returns extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Question] })
      async ask() {
        return new Question({ prefix: "name?" });
      }
      @step({ accepts: [Answer], emits: [StopEvent] })
      async greet(_ctx: Context, ev: Answer) {
        return new StopEvent({ result: `Hello ${ev.response}` });
      }
    }
    const handler = new Returns({ timeout: 10 }).run({}, { lifecycleEvents: true });
    expect(await answeredWhenIdle(handler, ["Ada"])).toEqual([
      "run started",
      "ask started",
      "ask finished",
      "asked name?",
      "idle",
      "received Answer",
      "greet started",
      "greet finished",
      "StopEvent",
      "run succeeded",
    ]);
    expect(await handler).toBe("Hello Ada");
  });

  it("is not idle while another step executes: one idle event, once that step has finished", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    class Parallel extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Ask, Work] })
      async start(ctx: Context) {
        ctx.sendEvent(new Ask({ q: "name?" }));
        ctx.sendEvent(new Work({ n: 1 }));
      }
      @step({ accepts: [Ask], emits: [StopEvent] })
      async ask(ctx: Context, ev: Ask) {
        const answer = await ctx.waitForEvent(Answer, { waiterEvent: new Question({ prefix: ev.q }) });
        return new StopEvent({ result: answer.response });
      }
      @step({ accepts: [Work], emits: [] })
      async work() {
        await gate;
      }
    }
    const handler = new Parallel({ timeout: 10 }).run({}, { lifecycleEvents: true });
    const seen: string[] = [];
    for await (const ev of handler.streamEvents()) {
      seen.push(describeEvent(ev));
      if (ev instanceof InputRequiredEvent) {
        await turns(); // an idle check made now would have told by then
        expect(seen).not.toContain("idle");
        release();
      }
      if (ev instanceof WorkflowIdleEvent) handler.ctx.sendEvent(new Answer({ response: "Ada" }));
    }
    expect(seen.filter((s) => s === "idle")).toHaveLength(1);
    expect(seen.slice(seen.indexOf("work finished"))).toEqual(["work finished", "idle", "received Answer", "ask finished", "StopEvent", "run succeeded"]);
    expect(await handler).toBe("Ada");
  });

  it("a run that never waits is never idle, however long its steps take", async () => {
    class Slow extends Workflow<{}, number> {
      @step({ accepts: [StartEvent], emits: [Work] })
      async first() {
        await turns();
        return new Work({ n: 1 });
      }
      @step({ accepts: [Work], emits: [StopEvent] })
      async second(_ctx: Context, ev: Work) {
        await turns();
        return new StopEvent({ result: ev.n + 1 });
      }
    }
    const handler = new Slow({ timeout: 10 }).run({}, { lifecycleEvents: true });
    const seen: string[] = [];
    for await (const ev of handler.streamEvents()) seen.push(describeEvent(ev));
    expect(seen).toEqual(["run started", "first started", "first finished", "second started", "second finished", "StopEvent", "run succeeded"]);
  });

  it("an answer sent as soon as the question is read leaves no idle period to tell of", async () => {
    const handler = new TwoQuestions({ timeout: 10 }).run({}, { lifecycleEvents: true });
    const seen: string[] = [];
    for await (const ev of handler.streamEvents()) {
      seen.push(describeEvent(ev));
      if (ev instanceof InputRequiredEvent) handler.ctx.sendEvent(new Answer({ response: "x" }));
    }
    expect(seen).not.toContain("idle");
    expect(await handler).toBe("x from x");
  });

  it("a restored run that waits again is idle again", async () => {
    const flow = new TwoQuestions({ timeout: 10 });
    const ctx = new Context(flow);
    const first = flow.run({}, { ctx, lifecycleEvents: true });
    for await (const ev of first.streamEvents()) if (ev instanceof WorkflowIdleEvent) first.cancel();
    await expect(first).rejects.toThrow("cancelled");

    const resumed = flow.run(undefined, { ctx: Context.fromJSON(flow, JSON.stringify(ctx.toJSON())), lifecycleEvents: true });
    expect(await answeredWhenIdle(resumed, ["Ada", "London"])).toEqual([
      "run started (resumed)",
      "ask started",
      "asked name?",
      "idle",
      "received Answer",
      "asked city?",
      "idle",
      "received Answer",
      "ask finished",
      "StopEvent",
      "run succeeded",
    ]);
    expect(await resumed).toBe("Ada from London");
  });

  it("is written only with lifecycle events", async () => {
    const handler = new TwoQuestions({ timeout: 10 }).run({});
    const seen: string[] = [];
    for await (const ev of handler.streamEvents()) {
      seen.push(describeEvent(ev));
      if (ev instanceof InputRequiredEvent) {
        await turns(); // idle by now
        handler.ctx.sendEvent(new Answer({ response: "x" }));
      }
    }
    expect(seen).toEqual(["asked name?", "asked city?", "StopEvent"]);
  });

  it("run observers are told with idle(), once per idle period", async () => {
    const told: string[] = [];
    const observers = new RunObservers([
      {
        runStarted: () => ({
          stepStarted: (s) => (told.push(`step ${s.step}`), undefined),
          idle: () => told.push("idle"),
          runEnded: (end) => told.push(`ended ${end.status}`),
        }),
      },
    ]);
    const handler = new TwoQuestions({ timeout: 10, observers }).run({}, { lifecycleEvents: true });
    await answeredWhenIdle(handler, ["Ada", "London"]);
    expect(told).toEqual(["step ask", "idle", "idle", "ended succeeded"]);
  });
});
