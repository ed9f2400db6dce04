/**
 * A step attempt that timed out runs on (a promise cannot be cancelled): what the run takes
 * back from it, its `ctx.signal` and its store writes, and what the run does with the waits it
 * left and the worker it gave back.
 */
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import {
  Context,
  ContextStateError,
  Event,
  StartEvent,
  StepFailedEvent,
  StopEvent,
  Workflow,
  WorkflowCancelledByUser,
  WorkflowTimeoutError,
  step,
} from "../../src/index.ts";

class Fetched extends Event<{ n: number }> {}
class Answer extends Event<{ text: string }> {}

/** A promise and the function that resolves it. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

describe("an attempt that timed out", () => {
  it("has its ctx.signal aborted with the step's timeout error while the run goes on, and the retry gets a signal of its own", async () => {
    const signals: AbortSignal[] = [];
    class Slow extends Workflow<object, string> {
      // The first attempt never ends, so it times out whatever the timeout; the retry returns at once.
      @step({ accepts: [StartEvent], emits: [StopEvent], timeout: 0.02, retry: { maxAttempts: 2, delay: 0 } })
      async fetch(ctx: Context) {
        signals.push(ctx.signal);
        if (signals.length === 1) return new Promise<never>(() => {}); // a request that never answers
        const first = signals[0] as AbortSignal;
        const reason = first.reason as Error;
        return new StopEvent({ result: `${first.aborted} ${reason?.constructor.name}: ${reason?.message} / retry aborted: ${ctx.signal.aborted}` });
      }
    }
    expect(await new Slow({ timeout: 10 }).run({})).toBe('true WorkflowTimeoutError: Step "fetch" timed out after 0.02 seconds. / retry aborted: false');
    expect(signals[0]).not.toBe(signals[1]);
    expect((signals[0] as AbortSignal).reason).toBeInstanceOf(WorkflowTimeoutError);
  });

  it("finds ctx.signal aborted when it first reads it after its timeout", async () => {
    const late = gate();
    const read = gate<AbortSignal>();
    let attempts = 0;
    class Slow extends Workflow<object, number> {
      @step({ accepts: [StartEvent], emits: [Fetched], timeout: 0.02, retry: { maxAttempts: 2, delay: 0 } })
      async fetch(ctx: Context) {
        if (++attempts === 2) return new Fetched({ n: 2 });
        await late.promise; // past the step's timeout: the run has retried this step meanwhile
        read.open(ctx.signal);
        return new Fetched({ n: 1 });
      }

      @step({ accepts: [Fetched], emits: [StopEvent] })
      async use(_ctx: Context, ev: Fetched) {
        late.open();
        const signal = await read.promise;
        return new StopEvent({ result: signal.aborted && signal.reason instanceof WorkflowTimeoutError ? ev.n : -1 });
      }
    }
    expect(await new Slow({ timeout: 10 }).run({})).toBe(2);
  });

  it("can still read the store, but its writes are refused with the reason the run gave up on it", async () => {
    const late = gate();
    const lateDone = gate();
    const refused: string[] = [];
    let read: unknown;
    let attempts = 0;
    class Slow extends Workflow<object, string> {
      @step({ accepts: [StartEvent], emits: [Fetched], timeout: 0.02, retry: { maxAttempts: 2, delay: 0 } })
      async fetch(ctx: Context) {
        if (++attempts === 2) {
          await ctx.store.set("owner", "retry");
          return new Fetched({ n: 2 });
        }
        await late.promise; // past the step's timeout: the run has retried this step meanwhile
        read = await ctx.store.get("owner");
        const writes = [
          () => ctx.store.set("owner", "late attempt"),
          () => ctx.store.delete("owner"),
          () => ctx.store.clear(),
          () => ctx.store.edit((state) => ({ ...state, owner: "late edit" })),
        ];
        for (const write of writes) {
          await write().catch((error: unknown) => {
            if (error instanceof ContextStateError) refused.push(error.message);
          });
        }
        lateDone.open();
        return new Fetched({ n: 1 });
      }

      @step({ accepts: [Fetched], emits: [StopEvent] })
      async use(ctx: Context) {
        late.open();
        await lateDone.promise;
        return new StopEvent({ result: await ctx.store.get<string>("owner") });
      }
    }
    const ctx = new Context(new Slow({ timeout: 10 }));
    expect(await new Slow({ timeout: 10 }).run({}, { ctx })).toBe("retry");
    expect(read).toBe("retry");
    const why =
      'this attempt of step "fetch" timed out after 0.02 seconds, and the run goes on without it: what it sends, streams, collects, waits for or writes to the store is refused. Give the step a longer timeout if its work takes longer.';
    expect(refused).toEqual([`store.set: ${why}`, `store.delete: ${why}`, `store.clear: ${why}`, `store.edit: ${why}`]);
    expect(await ctx.store.get("owner")).toBe("retry");
  });
});

describe("an attempt of a step with a timeout that has not timed out", () => {
  it("leaves no listener on the run's signal once it ended, however many attempts read ctx.signal", async () => {
    class Loop extends Workflow<object, number> {
      @step({ accepts: [StartEvent, Fetched], emits: [Fetched, StopEvent], timeout: 10 })
      async again(ctx: Context, ev: StartEvent | Fetched) {
        const n = ev instanceof Fetched ? ev.n : 0;
        if (ctx.signal.aborted) return new StopEvent({ result: -1 });
        return n < 50 ? new Fetched({ n: n + 1 }) : new StopEvent({ result: n });
      }
    }
    const handler = new Loop({ timeout: 10 }).run({});
    expect(await handler).toBe(50);
    expect(getEventListeners(handler.ctx.signal, "abort")).toEqual([]);
  });

  it("keeps the signal it read unaborted once it returned, when the run then fails", async () => {
    const read: AbortSignal[] = [];
    const failing = gate();
    class Early extends Event<{ n: number }> {}
    class Busy extends Workflow<object, string> {
      @step({ accepts: [StartEvent], emits: [Early, Fetched] })
      async start(ctx: Context) {
        ctx.sendEvent(new Early({ n: 1 }));
        ctx.sendEvent(new Fetched({ n: 1 }));
      }

      @step({ accepts: [Early], emits: [], timeout: 10 })
      async quick(ctx: Context) {
        read.push(ctx.signal);
        failing.open();
      }

      @step({ accepts: [Fetched], emits: [StopEvent], timeout: 10 })
      async slow(ctx: Context) {
        read.push(ctx.signal);
        await failing.promise;
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error("the run fails while this attempt runs");
      }
    }
    await expect(new Busy().run({})).rejects.toThrow("the run fails while this attempt runs");
    const [quick, slow] = read as [AbortSignal, AbortSignal];
    expect(quick.aborted).toBe(false);
    expect(slow.aborted).toBe(false);
  });

  it("has its ctx.signal aborted when the run is cancelled, and writes to the store", async () => {
    const started = gate<AbortSignal>();
    class Waiting extends Workflow<object, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent], timeout: 10 })
      async work(ctx: Context) {
        await ctx.store.set("started", true);
        started.open(ctx.signal);
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        return new StopEvent({ result: "never" });
      }
    }
    const ctx = new Context(new Waiting());
    const handler = new Waiting().run({}, { ctx });
    const signal = await started.promise;
    expect(signal.aborted).toBe(false);
    handler.cancel();
    await expect(handler).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(WorkflowCancelledByUser);
    expect(await ctx.store.get("started")).toBe(true);
  });
});

describe("a step that timed out while it waited, and that a recovery step took over from", () => {
  it("leaves no wait behind: an answer sent after the recovery is kept, as if no wait existed, for the next wait that asks", async () => {
    class Recovering extends Event<{ step: string }> {}
    const answered = gate();
    class Ask extends Workflow<object, string> {
      // Never answered, so it times out whatever the timeout.
      @step({ accepts: [StartEvent], emits: [StopEvent], timeout: 0.01 })
      async ask(ctx: Context) {
        const answer = await ctx.waitForEvent(Answer);
        return new StopEvent({ result: `ask got ${answer.text}` });
      }

      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { forSteps: ["ask"] } })
      async fallback(ctx: Context, ev: StepFailedEvent) {
        ctx.writeEventToStream(new Recovering({ step: ev.step }));
        await answered.promise; // the answer is sent meanwhile, while no wait is registered
        const answer = await ctx.waitForEvent(Answer);
        return new StopEvent({ result: `fallback got ${answer.text} after ${ev.error.name}` });
      }
    }
    const handler = new Ask({ timeout: 10 }).run({});
    for await (const ev of handler.streamEvents()) {
      if (!(ev instanceof Recovering)) continue;
      handler.ctx.sendEvent(new Answer({ text: "yes" }));
      answered.open();
    }
    expect(await handler).toBe("fallback got yes after WorkflowTimeoutError");
  });
});

describe("the retry of a step that timed out while it waited", () => {
  it("waits for a worker when another execution of the step took the one it gave back: numWorkers: 1 holds", async () => {
    class Job extends Event<{ id: string }> {}
    class Done extends Event<{ id: string }> {}
    const bEntered = gate();
    const retryDecided = gate();
    let inside = 0;
    let most = 0;
    let attemptsOfA = 0;
    class Jobs extends Workflow<object, string> {
      @step({ accepts: [StartEvent], emits: [Job] })
      async start(ctx: Context) {
        ctx.sendEvent(new Job({ id: "A" }));
        ctx.sendEvent(new Job({ id: "B" }));
      }

      // A's first attempt is never answered, so it times out whatever the timeout; the rest ends in microtasks.
      @step({ accepts: [Job], emits: [Done], numWorkers: 1, timeout: 0.01, retry: { maxAttempts: 2, delay: 0 } })
      async work(ctx: Context, ev: Job) {
        if (ev.id === "A" && ++attemptsOfA === 1) {
          // Waiting, it holds no worker, and B's execution takes it. The wait ends, with the
          // step's timeout error, when the run decides to retry A.
          await ctx.waitForEvent(Answer).catch(() => retryDecided.open());
          return;
        }
        most = Math.max(most, ++inside);
        try {
          if (ev.id === "B") {
            bEntered.open();
            await retryDecided.promise;
          } else await bEntered.promise; // A's retry would run beside B if it did not wait for B's worker
          return new Done({ id: ev.id });
        } finally {
          inside--;
        }
      }

      @step({ accepts: [Done], emits: [StopEvent] })
      async end(ctx: Context, ev: Done) {
        const both = ctx.collectEvents(ev, [Done, Done]);
        if (!both) return;
        return new StopEvent({ result: `${both.map((done) => done.id).join(",")}: at most ${most} at once` });
      }
    }
    expect(await new Jobs({ timeout: 10 }).run({})).toBe("B,A: at most 1 at once");
    expect(attemptsOfA).toBe(2);
  });
});
