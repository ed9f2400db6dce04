import { describe, expect, it } from "vitest";
import {
  ConfigurationError,
  Context,
  Event,
  HumanResponseEvent,
  InputRequiredEvent,
  StartEvent,
  StopEvent,
  Workflow,
  WorkflowCancelledByUser,
  WorkflowRuntimeError,
  WorkflowTimeoutError,
  step,
} from "../../src/index.ts";
import { runToolCall } from "../../src/tools/tool-calls.ts";
import { restApiTool } from "../../workflows/tools/rest-api.ts";
import { gate } from "../support/gate.ts";

class Tick extends Event<{ n: number }> {}
class Progress extends Event<{ n: number }> {}

describe("timeouts", () => {
  it("a step that sleeps past the timeout fails with WorkflowTimeoutError naming it, and aborts ctx.signal", async () => {
    let seen: AbortSignal | undefined;
    class Slow extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async sleepy(ctx: Context) {
        seen = ctx.signal;
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        return new StopEvent();
      }
    }
    const err = await new Slow({ timeout: 0.1 }).run({}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowTimeoutError);
    expect((err as Error).message).toBe('Workflow "Slow" timed out after 0.1 seconds. Active steps: sleepy.');
    expect(seen?.aborted).toBe(true);
  });

  it("fires even when a step loop resolves at once forever (no starved timers)", async () => {
    let dispatchedAfterEnd = 0;
    let ended = false;
    class Spin extends Workflow {
      @step({ accepts: [StartEvent], emits: [Tick] })
      async start() {
        return new Tick({ n: 0 });
      }
      @step({ accepts: [Tick], emits: [Tick, StopEvent] })
      async spin(_ctx: Context, ev: Tick) {
        if (ended) dispatchedAfterEnd++;
        return new Tick({ n: ev.n + 1 });
      }
    }
    const started = performance.now();
    const err = await new Spin({ timeout: 0.2 }).run({}).then(
      () => null,
      (e: unknown) => e,
    );
    ended = true;
    expect(err).toBeInstanceOf(WorkflowTimeoutError);
    expect(performance.now() - started).toBeLessThan(1_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(dispatchedAfterEnd).toBe(0);
  });

  it("a per-step timeout fails the run naming the step", async () => {
    class SlowStep extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent], timeout: 0.05 })
      async lookup() {
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        return new StopEvent();
      }
    }
    await expect(new SlowStep({ timeout: null }).run({})).rejects.toThrow('Step "lookup" timed out after 0.05 seconds.');
  });

  it("run({ timeout }) overrides the workflow's timeout", async () => {
    class Waits extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async wait() {
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        return new StopEvent();
      }
    }
    await expect(new Waits({ timeout: 60 }).run({}, { timeout: 0.05 })).rejects.toBeInstanceOf(WorkflowTimeoutError);
  });

  it("rejects a bad timeout with a clear message", () => {
    expect(() => new Workflow({ timeout: -1 })).toThrow("timeout is in seconds and must be a finite number > 0 (or null for none), got -1.");
  });
});

describe("streaming", () => {
  class Writes extends Workflow<{ fail: boolean }, string> {
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async work(ctx: Context, ev: StartEvent<{ fail: boolean }>) {
      ctx.writeEventToStream(new Progress({ n: 1 }));
      ctx.writeEventToStream(new Progress({ n: 2 }));
      if (ev.fail) throw new Error("tool exploded");
      return new StopEvent({ result: "done" });
    }
  }

  it("streams the written events, then the StopEvent, and nothing after it", async () => {
    const handler = new Writes().run({ fail: false });
    const seen: string[] = [];
    for await (const ev of handler.streamEvents()) seen.push(ev instanceof Progress ? `progress ${ev.n}` : ev.constructor.name);
    expect(seen).toEqual(["progress 1", "progress 2", "StopEvent"]);
    expect(await handler).toBe("done");
  });

  it("ends the stream when a step throws, and awaiting the handler throws the step's error", async () => {
    const handler = new Writes().run({ fail: true });
    const seen: number[] = [];
    for await (const ev of handler.streamEvents()) if (ev instanceof Progress) seen.push(ev.n);
    expect(seen).toEqual([1, 2]);
    await expect(handler).rejects.toThrow("tool exploded");
  });

  it("a second consumer gets an error, not a hang", async () => {
    const handler = new Writes().run({ fail: false });
    handler.streamEvents();
    expect(() => handler.streamEvents()).toThrow(WorkflowRuntimeError);
    expect(() => handler.streamEvents()).toThrow("streamEvents() was already called for this run.");
    await handler;
  });

  it("nothing is written to the stream after the StopEvent, even by late workers", async () => {
    const late = gate();
    class Racy extends Workflow {
      @step({ accepts: [StartEvent], emits: [Tick, StopEvent] })
      async start(ctx: Context) {
        ctx.sendEvent(new Tick({ n: 1 }));
        return new StopEvent({ result: "first" });
      }
      @step({ accepts: [Tick], emits: [StopEvent] })
      async straggler(ctx: Context) {
        await late.promise;
        try {
          ctx.writeEventToStream(new Progress({ n: 99 }));
        } catch {
          // the context has no run any more: that is the point
        }
        return new StopEvent({ result: "second" });
      }
    }
    const handler = new Racy().run({});
    const names: string[] = [];
    const consumed = (async () => {
      for await (const ev of handler.streamEvents()) names.push(ev.constructor.name);
    })();
    expect(await handler).toBe("first");
    late.open();
    await consumed;
    await new Promise((resolve) => setImmediate(resolve));
    expect(names).toEqual(["StopEvent"]);
  });
});

describe("concurrency and retries", () => {
  it("numWorkers: 5 with 10 events behind a barrier runs exactly 5 at once", async () => {
    let active = 0;
    let maxActive = 0;
    const barrier = gate();
    class Fan extends Workflow<{}, number> {
      @step({ accepts: [StartEvent], emits: [Tick] })
      async fan(ctx: Context) {
        for (let n = 0; n < 10; n++) ctx.sendEvent(new Tick({ n }));
      }
      @step({ accepts: [Tick], emits: [Progress], numWorkers: 5 })
      async work(_ctx: Context, ev: Tick) {
        active++;
        maxActive = Math.max(maxActive, active);
        if (active === 5) barrier.open();
        await barrier.promise;
        active--;
        return new Progress({ n: ev.n });
      }
      @step({ accepts: [Progress], emits: [StopEvent] })
      async gather(ctx: Context, ev: Progress) {
        const done = (await ctx.store.get<number[]>("done", [])).concat(ev.n);
        await ctx.store.set("done", done);
        return done.length === 10 ? new StopEvent({ result: maxActive }) : undefined;
      }
    }
    expect(await new Fan().run({})).toBe(5);
  });

  it("retry with maxAttempts 4 succeeds on the 3rd try", async () => {
    let calls = 0;
    class Flaky extends Workflow<{}, number> {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 4, delay: 0 } })
      async flaky() {
        calls++;
        if (calls < 3) throw new Error(`attempt ${calls} failed`);
        return new StopEvent({ result: calls });
      }
    }
    expect(await new Flaky().run({})).toBe(3);
  });

  it("retry gives up after the last attempt with the last error", async () => {
    let calls = 0;
    class Broken extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 4 } })
      async broken(): Promise<StopEvent> {
        calls++;
        throw new Error(`attempt ${calls} failed`);
      }
    }
    await expect(new Broken().run({})).rejects.toThrow("attempt 4 failed");
    expect(calls).toBe(4);
  });

  it("a retry function decides the delay and when to give up", async () => {
    const asked: Array<[number, string]> = [];
    class Broken extends Workflow {
      @step({
        accepts: [StartEvent],
        emits: [StopEvent],
        retry: (attempts, error) => (asked.push([attempts, (error as Error).message]), attempts < 2 ? 0 : null),
      })
      async broken(): Promise<StopEvent> {
        throw new Error("nope");
      }
    }
    await expect(new Broken().run({})).rejects.toThrow("nope");
    expect(asked).toEqual([
      [1, "nope"],
      [2, "nope"],
    ]);
  });
});

describe("context operations", () => {
  it("collectEvents returns the events in the order asked, once all arrived", async () => {
    class A extends Event<{ v: string }> {}
    class B extends Event<{ v: string }> {}
    class Gather extends Workflow<{}, string[]> {
      @step({ accepts: [StartEvent], emits: [A, B] })
      async start(ctx: Context) {
        ctx.sendEvent(new B({ v: "b" }));
        ctx.sendEvent(new A({ v: "a" }));
      }
      @step({ accepts: [A, B], emits: [StopEvent] })
      async join(ctx: Context, ev: A | B) {
        const ready = ctx.collectEvents(ev, [A, B]);
        if (!ready) return;
        const [ev1, ev2] = ready;
        return new StopEvent({ result: [ev1.v, ev2.v, ev1.constructor.name, ev2.constructor.name] });
      }
    }
    expect(await new Gather().run({})).toEqual(["a", "b", "A", "B"]);
  });

  it("waitForEvent resolves with a HumanResponseEvent sent through the handler", async () => {
    class Approval extends Workflow<{ action: string }, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async ask(ctx: Context, ev: StartEvent<{ action: string }>) {
        const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, {
          waiterEvent: new InputRequiredEvent({ prefix: `${ev.action}? (yes/no)` }),
        });
        return new StopEvent({ result: `${ev.action}: ${answer.response}` });
      }
    }
    const handler = new Approval().run({ action: "Fire Lawson" });
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof InputRequiredEvent) {
        expect((ev as InputRequiredEvent<{ prefix: string }>).prefix).toBe("Fire Lawson? (yes/no)");
        handler.ctx.sendEvent(new HumanResponseEvent({ response: "no" }));
      }
    }
    expect(await handler).toBe("Fire Lawson: no");
  });

  it("a step may accept HumanResponseEvent with no step emitting it", async () => {
    class Asks extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [InputRequiredEvent] })
      async ask() {
        return new InputRequiredEvent({ prefix: "name?" });
      }
      @step({ accepts: [HumanResponseEvent], emits: [StopEvent] })
      async answer(_ctx: Context, ev: HumanResponseEvent<{ response: string }>) {
        return new StopEvent({ result: `hello ${ev.response}` });
      }
    }
    const handler = new Asks().run({});
    handler.ctx.sendEvent(new HumanResponseEvent({ response: "Logan" }));
    expect(await handler).toBe("hello Logan");
  });

  it("sendEvent to an unknown step, or to a step that does not accept the event, is a clear error", async () => {
    const errors: string[] = [];
    class Targets extends Workflow {
      @step({ accepts: [StartEvent], emits: [Tick, StopEvent] })
      async start(ctx: Context) {
        for (const [ev, name] of [
          [new Tick({ n: 1 }), "nope"],
          [new Progress({ n: 1 }), "tock"],
        ] as const) {
          try {
            ctx.sendEvent(ev, { step: name });
          } catch (e) {
            errors.push((e as Error).message);
          }
        }
        ctx.sendEvent(new Tick({ n: 2 }), { step: "tock" });
      }
      @step({ accepts: [Tick], emits: [StopEvent] })
      async tock(_ctx: Context, ev: Tick) {
        return new StopEvent({ result: ev.n });
      }
    }
    expect(await new Targets().run({})).toBe(2);
    expect(errors).toEqual([
      'sendEvent: there is no step named "nope". Steps: start, tock.',
      'sendEvent: step "tock" does not accept Progress; it accepts Tick.',
    ]);
  });

  it("cancel() rejects with WorkflowCancelledByUser and aborts ctx.signal", async () => {
    const started = gate();
    class Forever extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async wait(ctx: Context): Promise<StopEvent> {
        started.open();
        await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
        return new StopEvent();
      }
    }
    const handler = new Forever().run({});
    await started.promise;
    handler.cancel();
    await expect(handler).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    expect(handler.ctx.signal.aborted).toBe(true);
  });

  it("a run that finishes with no step executing leaves ctx.signal unaborted", async () => {
    class Quick extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async only(ctx: Context) {
        return new StopEvent({ result: ctx.signal.aborted });
      }
    }
    const handler = new Quick().run({});
    expect(await handler).toBe(false);
    expect(handler.ctx.signal.aborted).toBe(false);
  });

  it("a run that finishes while a step is still executing aborts ctx.signal, so that step can stop", async () => {
    class Go extends Event {}
    class Finish extends Event {}
    let stoppedWith: unknown;
    class Race extends Workflow {
      @step({ accepts: [StartEvent], emits: [Go] })
      async start() {
        return new Go();
      }
      @step({ accepts: [Go], emits: [Finish, StopEvent] })
      async slow(ctx: Context): Promise<StopEvent> {
        const signal = ctx.signal;
        const aborted = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
        ctx.sendEvent(new Finish()); // another step ends the run while this one is still working
        await aborted;
        stoppedWith = signal.reason;
        return new StopEvent({ result: "too late" });
      }
      @step({ accepts: [Finish], emits: [StopEvent] })
      async finish() {
        return new StopEvent({ result: "finished" });
      }
    }
    expect(await new Race().run({})).toBe("finished");
    await new Promise((resolve) => setImmediate(resolve));
    expect(stoppedWith).toBeInstanceOf(WorkflowRuntimeError);
    expect((stoppedWith as Error).message).toBe("The run has finished.");
  });

  it("ctx.signal first read after a cancel is already aborted, with the cancel as its reason", async () => {
    const started = gate();
    const never = gate();
    class Held extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async hold(): Promise<StopEvent> {
        started.open();
        await never.promise;
        return new StopEvent();
      }
    }
    const handler = new Held().run({});
    await started.promise;
    handler.cancel();
    await expect(handler).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    expect(handler.ctx.signal.aborted).toBe(true);
    expect(handler.ctx.signal.reason).toBeInstanceOf(WorkflowCancelledByUser);
  });

  it("a second run on a running context is a ContextStateError", async () => {
    const release = gate();
    class Held extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async hold() {
        await release.promise;
        return new StopEvent({ result: 1 });
      }
    }
    const flow = new Held();
    const ctx = new Context(flow);
    const first = flow.run({}, { ctx });
    expect(() => flow.run({}, { ctx })).toThrow("This context is already running a workflow.");
    release.open();
    expect(await first).toBe(1);
    expect(await flow.run({}, { ctx })).toBe(1);
  });

  it("store: dot paths, defaults, and a clear error for a missing key", async () => {
    const ctx = new Context(new Workflow());
    await ctx.store.set("user.name", "Logan");
    expect(await ctx.store.get("user")).toEqual({ name: "Logan" });
    expect(await ctx.store.get("user.name")).toBe("Logan");
    expect(await ctx.store.get("user.age", 30)).toBe(30);
    await expect(ctx.store.get("user.age")).rejects.toThrow(
      'The context store has no key "user.age". Set it first, or pass a default: ctx.store.get("user.age", defaultValue).',
    );
  });

  it("store: keys from user input cannot reach Object.prototype", async () => {
    const ctx = new Context(new Workflow());
    for (const key of ["__proto__", "__proto__.polluted", "prefs.__proto__.isAdmin"]) {
      await expect(ctx.store.set(key, true)).rejects.toThrow(`Invalid store key ${JSON.stringify(key)}: "__proto__" cannot be part of a key.`);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await ctx.store.set("constructor.name", "Ada"); // a name Object.prototype also has
    expect(await ctx.store.get("constructor.name")).toBe("Ada");
  });
});

describe("human in the loop", () => {
  it("an InputRequiredEvent a step returns goes to the stream, and the answer continues the run", async () => {
    class Ask extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [InputRequiredEvent] })
      async ask() {
        return new InputRequiredEvent({ prefix: "Fire Lawson? (yes/no)" });
      }
      @step({ accepts: [HumanResponseEvent], emits: [StopEvent] })
      async decide(_ctx: Context, ev: HumanResponseEvent<{ response: string }>) {
        return new StopEvent({ result: ev.response === "yes" ? "fired" : "kept" });
      }
    }
    const handler = new Ask({ timeout: 10 }).run({});
    const prompts: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof InputRequiredEvent) {
        prompts.push((ev as InputRequiredEvent<{ prefix: string }>).prefix);
        handler.ctx.sendEvent(new HumanResponseEvent({ response: "yes" }));
      }
    }
    expect(prompts).toEqual(["Fire Lawson? (yes/no)"]);
    expect(await handler).toBe("fired");
  });

  it("a run that times out says what it was waiting for, also with requirements JSON cannot write", async () => {
    class Waits extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async ask(ctx: Context) {
        const [a, b] = await Promise.all([
          ctx.waitForEvent(HumanResponseEvent<{ ticket: string }>, { requirements: { ticket: "T-1" } }),
          ctx.waitForEvent(HumanResponseEvent<{ n: bigint }>, { requirements: { n: 1n } }),
        ]);
        return new StopEvent({ result: `${a.ticket} ${b.n}` });
      }
    }
    await expect(new Waits({ timeout: 0.5 }).run({})).rejects.toThrow(
      'Workflow "Waits" timed out after 0.5 seconds. Active steps: ask. Waiting for: HumanResponseEvent with {"ticket":"T-1"}, HumanResponseEvent with n set (send it with handler.ctx.sendEvent).',
    );
  });

  it("waits longer than setTimeout's 24.8-day limit for an answer", async () => {
    const month = 30 * 24 * 3600;
    class Slow extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async ask(ctx: Context) {
        const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, {
          waiterEvent: new InputRequiredEvent({ prefix: "Approve?" }),
          timeout: month,
        });
        return new StopEvent({ result: answer.response });
      }
    }
    const handler = new Slow({ timeout: 2 * month }).run({});
    let settled = false;
    void handler.then(
      () => (settled = true),
      () => (settled = true),
    );
    const events = handler.streamEvents()[Symbol.asyncIterator]();
    expect((await events.next()).value).toBeInstanceOf(InputRequiredEvent);
    // Node fires a timer of more than 2³¹−1 ms after 1 ms; a later 5 ms timer fires after it would have.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(settled).toBe(false);
    handler.ctx.sendEvent(new HumanResponseEvent({ response: "yes" }));
    expect(await handler).toBe("yes");
  });
});

describe("runs that end early", () => {
  const timersNow = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

  it("a step left running by a cancelled run sees its own run's signal and cannot write into the next run on the context", async () => {
    class Delta extends Event<{ text: string }> {}
    const proceed = { first: gate(), second: gate() };
    const leftover: string[] = [];
    class Chat extends Workflow<{ q: "first" | "second" }, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async answer(ctx: Context, ev: StartEvent<{ q: "first" | "second" }>) {
        await proceed[ev.q].promise;
        try {
          if (ev.q === "first") leftover.push(`aborted: ${ctx.signal.aborted}`);
          ctx.writeEventToStream(new Delta({ text: ev.q }));
        } catch (error) {
          leftover.push((error as Error).name);
          throw error;
        }
        return new StopEvent({ result: `answer to ${ev.q}` });
      }
    }
    const flow = new Chat({ timeout: 10 });
    const ctx = new Context(flow);
    const first = flow.run({ q: "first" }, { ctx });
    await Promise.resolve(); // the first step starts
    first.cancel();
    await expect(first).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    const second = flow.run({ q: "second" }, { ctx });
    proceed.first.open(); // run 1's step wakes up while run 2 is going
    await new Promise((resolve) => setImmediate(resolve));
    proceed.second.open();
    const seen: string[] = [];
    for await (const ev of second.streamEvents()) if (ev instanceof Delta) seen.push(ev.text);
    expect(await second).toBe("answer to second");
    expect(seen).toEqual(["second"]);
    expect(leftover).toEqual(["aborted: true", "ContextStateError"]);
    expect(first.ctx.signal.aborted).toBe(true);
    expect(second.ctx.signal.aborted).toBe(false);
  });

  it("a run cancelled right after run(), or given an aborted signal, runs no step, and a saved run stays saved", async () => {
    const ran: string[] = [];
    class Charge extends Workflow<{ who: string }, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async charge(_ctx: Context, ev: StartEvent<{ who: string }>) {
        ran.push(ev.who);
        return new StopEvent({ result: "charged" });
      }
    }
    const flow = new Charge();
    const handler = flow.run({ who: "cancelled" });
    handler.cancel();
    await expect(handler).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    await expect(flow.run({ who: "aborted" }, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    expect(ran).toEqual([]);

    const gateway = gate();
    class Waits extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async wait(ctx: Context) {
        const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({}) });
        return new StopEvent({ result: answer.response });
      }
    }
    const waits = new Waits();
    const running = waits.run({});
    for await (const ev of running.streamEvents()) if (ev instanceof InputRequiredEvent) break;
    const saved = Context.fromJSON(waits, JSON.stringify(running.ctx.toJSON()));
    running.cancel();
    gateway.open();
    await expect(waits.run(undefined, { ctx: saved, signal: AbortSignal.abort() })).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    expect(saved.hasSavedRun).toBe(true);
    const resumed = waits.run(undefined, { ctx: saved });
    for await (const ev of resumed.streamEvents()) if (ev instanceof InputRequiredEvent) resumed.ctx.sendEvent(new HumanResponseEvent({ response: "ok" }));
    expect(await resumed).toBe("ok");
  });

  it("a step with a timeout that throws at once fails the run with its error, and no timer is left", async () => {
    const before = timersNow();
    const flow = new Workflow({ timeout: null }).addStep("check", { accepts: [StartEvent], emits: [StopEvent], timeout: 3600 }, ((): never => {
      throw new Error("bad input");
    }) as never);
    await expect(flow.run({})).rejects.toThrow("bad input");
    expect(timersNow()).toBe(before);
  });

  it("after a cancel or a failure, no retry delay or step timeout keeps the process alive", async () => {
    const before = timersNow();
    const started = gate();
    class Stuck extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent], timeout: 3600 })
      async hang(): Promise<StopEvent> {
        started.open();
        return new Promise(() => {});
      }
    }
    const stuck = new Stuck({ timeout: null }).run({});
    await started.promise;
    stuck.cancel();
    await expect(stuck).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    expect(timersNow()).toBe(before);

    const failed = gate();
    class Flaky extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 3, delay: 3600 } })
      async flaky(): Promise<StopEvent> {
        failed.open();
        throw new Error("try later");
      }
    }
    const flaky = new Flaky({ timeout: null }).run({});
    await failed.promise;
    await Promise.resolve();
    flaky.cancel();
    await expect(flaky).rejects.toBeInstanceOf(WorkflowCancelledByUser);
    expect(timersNow()).toBe(before);
  });

  it("a retry function that throws or returns nonsense fails the run with a clear error", async () => {
    const flow = (retry: (attempts: number) => number | null) =>
      new Workflow({ timeout: null }).addStep("work", { accepts: [StartEvent], emits: [StopEvent], retry }, async (): Promise<StopEvent> => {
        throw new Error("flaky");
      });
    await expect(flow(() => Infinity).run({})).rejects.toThrow(
      'The retry function of step "work" returned Infinity. Return the seconds to wait before the next attempt (a finite number ≥ 0), or null to give up.',
    );
    await expect(
      flow(() => {
        throw new Error("policy bug");
      }).run({}),
    ).rejects.toThrow("policy bug");
  });

  it("numWorkers holds when the same event instance is sent many times", async () => {
    const release = gate();
    let running = 0;
    let peak = 0;
    class Fan extends Workflow<{}, number> {
      @step({ accepts: [StartEvent], emits: [Tick] })
      async start(ctx: Context) {
        const same = new Tick({ n: 1 });
        for (let i = 0; i < 6; i++) ctx.sendEvent(same);
      }
      @step({ accepts: [Tick], emits: [StopEvent], numWorkers: 2 })
      async work(ctx: Context, ev: Tick) {
        peak = Math.max(peak, ++running);
        if (running === 2) release.open();
        await release.promise;
        running--;
        return ctx.collectEvents(ev, [Tick, Tick, Tick, Tick, Tick, Tick]) ? new StopEvent({ result: peak }) : undefined;
      }
    }
    expect(await new Fan().run({})).toBe(2);
  });

  it("rejects timeouts that are not a finite number of seconds > 0 with ConfigurationError, wherever they are given", async () => {
    const flow = new Workflow().addStep("only", { accepts: [StartEvent], emits: [StopEvent] }, async () => new StopEvent());
    const thrown = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    for (const [make, received] of [
      [() => new Workflow({ timeout: Infinity }), Infinity],
      [() => flow.run({}, { timeout: 0 }), 0],
      [() => step({ accepts: [StartEvent], emits: [StopEvent], timeout: -5 }), -5],
      [() => runToolCall({ id: "c", name: "add", input: {} }, [], { timeout: -1 }), -1],
      [() => restApiTool({ baseURL: "http://127.0.0.1:1", description: "x", timeout: "30" as unknown as number }), "30"],
    ] as const) {
      const error = thrown(make);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error).toMatchObject({ name: "ConfigurationError", option: "timeout", received });
    }
    expect(() => new Workflow({ timeout: Infinity })).toThrow("timeout is in seconds and must be a finite number > 0 (or null for none), got Infinity.");
    expect(() => flow.run({}, { timeout: 0 })).toThrow("run({ timeout }) is in seconds and must be a finite number > 0 (or null for none), got 0.");
    expect(() => step({ accepts: [StartEvent], emits: [StopEvent], timeout: Number.NaN })).toThrow(
      "@step: timeout is in seconds and must be a finite number > 0 (or null for none), got NaN.",
    );
    class Waits extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async wait(ctx: Context) {
        await ctx.waitForEvent(HumanResponseEvent, { timeout: -1 });
        return new StopEvent();
      }
    }
    await expect(new Waits().run({})).rejects.toMatchObject({ name: "ConfigurationError", option: "timeout", received: -1 });
    await expect(new Waits().run({})).rejects.toThrow(
      "waitForEvent(HumanResponseEvent): timeout is in seconds and must be a finite number > 0 (or leave it out to wait forever), got -1.",
    );
  });
});

describe("InputRequiredEvent subclasses a step accepts", () => {
  it("goes to the stream and to the step that accepts it", async () => {
    class Ask extends InputRequiredEvent<{ question: string }> {}
    class Asks extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Ask] })
      async ask() {
        return new Ask({ question: "?" });
      }
      @step({ accepts: [Ask], emits: [StopEvent] })
      async got(_ctx: Context, ev: Ask) {
        return new StopEvent({ result: `got ${ev.question}` });
      }
    }
    const handler = new Asks({ timeout: 10 }).run({});
    const streamed: string[] = [];
    for await (const ev of handler.streamEvents()) streamed.push(ev.constructor.name);
    expect(await handler).toBe("got ?");
    expect(streamed).toEqual(["Ask", "StopEvent"]);
  });

  it("store.delete of a name Object.prototype has removes nothing", async () => {
    const ctx = new Context(new Workflow());
    await ctx.store.set("o", {});
    expect(await ctx.store.delete("toString")).toBe(false);
    expect(await ctx.store.delete("o.toString")).toBe(false);
  });
});
