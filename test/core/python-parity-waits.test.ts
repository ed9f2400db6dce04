/**
 * Edge cases of waits and step attempts where a Python workflows user would expect Python's
 * behaviour: which event answers a waitForEvent, and what a step attempt given up on may still do.
 */
import { describe, expect, it } from "vitest";
import {
  Context,
  ContextStateError,
  Event,
  HumanResponseEvent,
  InputRequiredEvent,
  StartEvent,
  StopEvent,
  Workflow,
  WorkflowCancelledByUser,
  WorkflowTimeoutError,
  step,
} from "../../src/index.ts";

class Question extends InputRequiredEvent<{ prefix: string }> {}
class Approval extends HumanResponseEvent<{ approved: boolean }> {}
class Done extends Event<{ text: string }> {}

describe("waitForEvent matches as Python's workflows do", () => {
  it("a waiter for a class is not answered by a subclass of it, which goes to its own waiter", async () => {
    class TwoQuestions extends Workflow<object, string[]> {
      @step({ accepts: [StartEvent], emits: [Done] })
      async ask(ctx: Context) {
        ctx.sendEvent(new Done({ text: "start" }), { step: "general" });
        ctx.sendEvent(new Done({ text: "start" }), { step: "approval" });
      }

      @step({ accepts: [Done], emits: [Done] })
      async general(ctx: Context) {
        const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new Question({ prefix: "general" }) });
        return new Done({ text: `general got ${answer.constructor.name}` });
      }

      @step({ accepts: [Done], emits: [Done] })
      async approval(ctx: Context) {
        const answer = await ctx.waitForEvent(Approval, { waiterEvent: new Question({ prefix: "approval" }) });
        return new Done({ text: `approval got ${answer.constructor.name}` });
      }

      @step({ accepts: [Done], emits: [StopEvent] })
      async end(ctx: Context, ev: Done) {
        const both = ctx.collectEvents(ev, [Done, Done]);
        return both ? new StopEvent({ result: both.map((d) => d.text).sort() }) : undefined;
      }
    }

    const handler = new TwoQuestions({ timeout: 10, validate: false }).run({});
    let asked = 0;
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof Question && ++asked === 2) {
        // The subclass first: a waiter for the base class registered before must not take it.
        handler.ctx.sendEvent(new Approval({ approved: true }));
        handler.ctx.sendEvent(new HumanResponseEvent({ response: "ok" }));
      }
    }
    expect(await handler).toEqual(["approval got Approval", "general got HumanResponseEvent"]);
  });

  it("requirements compare arrays and objects by value, also in a run restored from JSON", async () => {
    class Tagged extends HumanResponseEvent<{ tags: string[]; owner: { id: number } }> {}
    class Review extends Workflow<object, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async review(ctx: Context) {
        const answer = await ctx.waitForEvent(Tagged, {
          requirements: { tags: ["urgent"], owner: { id: 7 } },
          waiterEvent: new Question({ prefix: "tag it" }),
        });
        return new StopEvent({ result: `${answer.tags.join()} for ${answer.owner.id}` });
      }
    }
    const flow = new Review({ timeout: 10 });

    const live = flow.run({});
    for await (const ev of live.streamEvents()) {
      if (ev instanceof Question) {
        live.ctx.sendEvent(new Tagged({ tags: ["urgent", "late"], owner: { id: 7 } }));
        live.ctx.sendEvent(new Tagged({ tags: ["urgent"], owner: { id: 7 } }));
      }
    }
    expect(await live).toBe("urgent for 7");

    const first = flow.run({});
    for await (const ev of first.streamEvents()) if (ev instanceof Question) first.cancel();
    await expect(first).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    const saved = JSON.stringify(first.ctx.toJSON());
    const resumed = flow.run(undefined, { ctx: Context.fromJSON(flow, saved) });
    for await (const ev of resumed.streamEvents()) if (ev instanceof Question) resumed.ctx.sendEvent(new Tagged({ tags: ["urgent"], owner: { id: 7 } }));
    expect(await resumed).toBe("urgent for 7");
  });
});

describe("a retried step that had asked a question", () => {
  it("gets the answer its failed attempt got, and the human is asked once", async () => {
    let attempts = 0;
    class Refund extends Workflow<object, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 2, delay: 0 } })
      async refund(ctx: Context) {
        attempts += 1;
        const answer = await ctx.waitForEvent(Approval, { waiterEvent: new Question({ prefix: "Refund $500?" }) });
        if (attempts === 1) throw new Error("payment service unavailable"); // after the human said yes
        return new StopEvent({ result: `approved: ${answer.approved}, attempt ${attempts}` });
      }
    }
    const handler = new Refund({ timeout: 10 }).run({});
    const questions: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof Question) {
        questions.push(ev.prefix);
        handler.ctx.sendEvent(new Approval({ approved: true }));
      }
    }
    expect(await handler).toBe("approved: true, attempt 2");
    expect(questions).toEqual(["Refund $500?"]);
  });
});

describe("a step attempt the run gave up on", () => {
  it("an attempt that timed out and was retried can no longer send or stream into the run; the retry can", async () => {
    class Fetched extends Event<{ n: number }> {}
    class Note extends Event<{ text: string }> {}
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let lateAttemptDone!: () => void;
    const lateAttempt = new Promise<void>((resolve) => (lateAttemptDone = resolve));
    const refused: string[] = [];
    let attempts = 0;

    class Slow extends Workflow<object, number> {
      @step({ accepts: [StartEvent], emits: [Fetched], timeout: 0.02, retry: { maxAttempts: 2, delay: 0 } })
      async fetch(ctx: Context) {
        attempts += 1;
        if (attempts === 2) {
          ctx.writeEventToStream(new Note({ text: "second attempt" }));
          return new Fetched({ n: 1 });
        }
        await gate; // past the step's timeout: the run has retried this step meanwhile
        for (const act of [() => ctx.sendEvent(new Fetched({ n: 99 })), () => ctx.writeEventToStream(new Note({ text: "late" }))]) {
          try {
            act();
          } catch (error) {
            if (error instanceof ContextStateError) refused.push(error.message);
          }
        }
        lateAttemptDone();
        return new Fetched({ n: 98 });
      }

      @step({ accepts: [Fetched], emits: [StopEvent] })
      async use(_ctx: Context, ev: Fetched) {
        release();
        await lateAttempt;
        return new StopEvent({ result: ev.n });
      }
    }

    const handler = new Slow({ timeout: 10 }).run({});
    const notes: string[] = [];
    for await (const ev of handler.streamEvents()) if (ev instanceof Note) notes.push(ev.text);
    expect(await handler).toBe(1);
    expect(notes).toEqual(["second attempt"]);
    expect(refused).toHaveLength(2);
    const why =
      'this attempt of step "fetch" timed out after 0.02 seconds, and the run goes on without it: what it sends, streams, collects, waits for or writes to the store is refused. Give the step a longer timeout if its work takes longer.';
    expect(refused).toEqual([`sendEvent: ${why}`, `writeEventToStream: ${why}`]);
  });
});

describe("a step that timed out while it waited", () => {
  it("is retried with a wait of its own: the answer goes to the retry, not to the attempt given up on", async () => {
    let attempts = 0;
    class Ask extends Workflow<object, string> {
      // The first attempt is never answered, so it times out whatever the timeout; the retry must
      // be answered before its own: a second, not 50 ms, so that a loaded machine cannot stall past it.
      @step({ accepts: [StartEvent], emits: [StopEvent], timeout: 1, retry: { maxAttempts: 2, delay: 0 } })
      async ask(ctx: Context) {
        const attempt = ++attempts;
        const answer = await ctx.waitForEvent(Approval, { waiterEvent: new Question({ prefix: `attempt ${attempt}` }) });
        return new StopEvent({ result: `${answer.approved} in attempt ${attempt}` });
      }
    }
    const handler = new Ask({ timeout: 10 }).run({});
    const questions: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (!(ev instanceof Question)) continue;
      questions.push(ev.prefix);
      // Only the retry's question is answered: the first attempt timed out unanswered.
      if (ev.prefix === "attempt 2") handler.ctx.sendEvent(new Approval({ approved: true }));
    }
    expect(await handler).toBe("true in attempt 2");
    expect(questions).toEqual(["attempt 1", "attempt 2"]);
  });
});

describe("a run that times out", () => {
  it("names the events it was sent that no step accepted and no wait took", async () => {
    class Refund extends Event<{ amount: number }> {}
    class Orders extends Workflow<object, string> {
      // Declares nothing: what it sends is chosen at run time, and no step accepts it.
      @step({ accepts: [StartEvent], emits: [] })
      async start(ctx: Context) {
        ctx.sendEvent(new Refund({ amount: 5 }));
      }

      @step({ accepts: [Done], emits: [StopEvent] })
      async end(_ctx: Context, ev: Done) {
        return new StopEvent({ result: ev.text });
      }
    }
    const error = await new Orders({ timeout: 0.05, validate: false }).run({}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkflowTimeoutError);
    expect((error as Error).message).toBe(
      'Workflow "Orders" timed out after 0.05 seconds. Active steps: none. Sent but taken by no step or waitForEvent: Refund (routing is by exact class: is it in the accepts of the step meant to take it?).',
    );
  });
});
