/**
 * Where stepflow/compat/workflow-core deliberately differs from @llamaindex/workflow-core: a
 * failing handler fails the run's readers instead of leaving them waiting (upstream: an
 * unhandled rejection, or a reader that never returns), timeouts fire, a finished run keeps no
 * event, getContext() names its limit.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, test, vi } from "vitest";
import { WorkflowTimeoutError } from "../../src/index.ts";
import { createWorkflow, getContext, WorkflowStream, workflowEvent, type AnyWorkflowEventData } from "../../src/compat/workflow-core/index.ts";
import { createStatefulMiddleware } from "../../src/compat/workflow-core/middleware/state.ts";
import * as upstream from "../../bench/node_modules/@llamaindex/workflow-core/dist/index.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const start = workflowEvent<number>({ debugLabel: "start" });
const ping = workflowEvent<number>({ debugLabel: "ping" });
const stop = workflowEvent<number>({ debugLabel: "stop" });

afterEach(() => {
  vi.useRealTimers();
});

describe("a failing handler", () => {
  test("an async handler's rejection fails the reader and aborts the signal, with no unhandled rejection", async () => {
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      const workflow = createWorkflow();
      const boom = new Error("the model is down");
      workflow.handle([start], async () => {
        await Promise.resolve();
        throw boom;
      });
      const { stream, sendEvent, signal } = workflow.createContext();
      sendEvent(start.with(1));
      await expect(stream.until(stop).toArray()).rejects.toBe(boom);
      expect(signal.reason).toBe(boom);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });

  test("a synchronous throw fails a reader that started before it, and one that starts after it", async () => {
    const workflow = createWorkflow();
    workflow.handle([ping], () => {
      throw new TypeError("bad input");
    });
    const first = workflow.createContext();
    const reading = first.stream.until(stop).toArray();
    first.sendEvent(ping.with(1));
    await expect(reading).rejects.toThrow("bad input");
    const second = workflow.createContext();
    second.sendEvent(ping.with(1));
    await expect(second.stream.until(stop).toArray()).rejects.toThrow("bad input");
  });
});

describe("createWorkflow({ timeout })", () => {
  test("a run that never sends the awaited event fails with WorkflowTimeoutError", async () => {
    vi.useFakeTimers();
    const workflow = createWorkflow({ timeout: 5_000 });
    let handlerSignal: AbortSignal | undefined;
    workflow.handle([start], (context) => {
      handlerSignal = context.signal; // a handler's own signal aborts with the run
    });
    const { stream, sendEvent, signal } = workflow.createContext();
    sendEvent(start.with(1));
    const reading = stream.until(stop).toArray();
    const failed = expect(reading).rejects.toBeInstanceOf(WorkflowTimeoutError);
    await vi.advanceTimersByTimeAsync(5_000);
    await failed;
    expect(signal.reason).toBeInstanceOf(WorkflowTimeoutError);
    expect(handlerSignal?.aborted).toBe(true);
  });

  test("a run that ends in time leaves no timer behind", async () => {
    vi.useFakeTimers();
    const workflow = createWorkflow({ timeout: 5_000 });
    workflow.handle([start], async (_ctx, ev) => stop.with(ev.data));
    const { stream, sendEvent, signal } = workflow.createContext();
    sendEvent(start.with(1));
    expect(await stream.until(stop).toArray()).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
    expect(signal.aborted).toBe(false);
  });

  test("a timeout that is not a positive number is refused, saying what to pass", () => {
    expect(() => createWorkflow({ timeout: -1 })).toThrow(/positive number of milliseconds, or null/);
  });
});

describe("memory", () => {
  /** Runs a ping-pong of `n` events on `core`, keeping the context; returns a WeakRef to its first ping. */
  type Core = { createWorkflow: typeof createWorkflow; workflowEvent: typeof workflowEvent };
  async function pingPong(core: Core, n: number) {
    const s = core.workflowEvent<number>();
    const p = core.workflowEvent<number>();
    const unhandled = core.workflowEvent<number>();
    const done = core.workflowEvent<number>();
    const workflow = core.createWorkflow();
    let first: WeakRef<object> | undefined;
    workflow.handle([s], async () => {
      const ev = p.with(0);
      first = new WeakRef(ev);
      return ev;
    });
    workflow.handle([p], async (context, ev) => {
      context.sendEvent(unhandled.with(ev.data)); // a progress event no handler takes
      return ev.data >= n ? done.with(ev.data) : p.with(ev.data + 1);
    });
    const context = workflow.createContext();
    context.sendEvent(s.with(0));
    await context.stream.untilEvent(done);
    return { context, first: first as WeakRef<object> };
  }

  test("a finished run keeps none of its events, even while its context is referenced (upstream keeps them all)", async () => {
    const ours = await pingPong({ createWorkflow, workflowEvent }, 200);
    const theirs = await pingPong(upstream as unknown as Core, 200);
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(ours.first.deref()).toBeUndefined();
    expect(theirs.first.deref()).toBeDefined();
    expect(ours.context && theirs.context).toBeTruthy();
  });
});

describe("getContext()", () => {
  test("with createWorkflow({ asyncContext: false }) it works before the handler's first await, and after it throws naming the context argument", async () => {
    const workflow = createWorkflow({ asyncContext: false });
    const seen: string[] = [];
    workflow.handle([start], async (context) => {
      seen.push(getContext() === context ? "same" : "other");
      await Promise.resolve();
      try {
        getContext();
      } catch (error) {
        seen.push((error as Error).message);
      }
      return stop.with(1);
    });
    const { stream, sendEvent } = workflow.createContext();
    sendEvent(start.with(1));
    await stream.until(stop).toArray();
    expect(seen[0]).toBe("same");
    expect(seen[1]).toMatch(/Use the context passed to the handler as its first argument/);
  });

  test("outside any handler it throws, naming the context argument", () => {
    expect(() => getContext()).toThrow(/Use the context passed to the handler as its first argument/);
  });
});

describe("streams", () => {
  test("a handler's stream sees only the events it caused, not a sibling's", async () => {
    const a = workflowEvent<string>();
    const child = workflowEvent<string>();
    const workflow = createWorkflow();
    const seen: string[] = [];
    workflow.handle([a], async (context, ev) => {
      const { stream, sendEvent } = context;
      sendEvent(child.with(ev.data));
      const [own] = await stream.filter(child).take(1).toArray();
      seen.push(`${ev.data} saw ${String(own?.data)}`);
    });
    workflow.handle([child], async () => undefined);
    const { sendEvent } = workflow.createContext();
    sendEvent(a.with("x"), a.with("y"));
    await vi.waitFor(() => expect(seen).toHaveLength(2));
    expect(seen.sort()).toEqual(["x saw x", "y saw y"]);
  });

  test("fromResponse reads an event split across two chunks (upstream drops it)", async () => {
    const message = workflowEvent<string>({ uniqueId: "message" });
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('{"uniqueId":"message","da'));
        controller.enqueue(encoder.encode('ta":"hello"}\n'));
        controller.close();
      },
    });
    const events: AnyWorkflowEventData[] = await WorkflowStream.fromResponse(new Response(body), { message }).toArray();
    expect(events.map((e) => e.data)).toEqual(["hello"]);
  });

  test("a second reader of a one-time stream is refused with the fix in the message", async () => {
    const stream = WorkflowStream.fromReadableStream(ReadableStream.from([1, 2]));
    await stream.toArray();
    expect(() => stream.toArray()).toThrow(/locked.*tee\(\)/);
  });
});

describe("snapshots", () => {
  test("a snapshot waits for running handlers, keeps the events a handler awaits, and stops the context", async () => {
    const request = workflowEvent<string>({ debugLabel: "request" });
    const answer = workflowEvent<string>({ debugLabel: "answer" });
    const half = workflowEvent<number>({ debugLabel: "half" });
    const { withState } = createStatefulMiddleware((input: { asked: number }) => input);
    const workflow = withState(createWorkflow());
    workflow.handle([start], async (context, ev) => {
      context.state.asked++;
      await Promise.resolve();
      context.sendEvent(half.with(ev.data)); // waits for a second half: part of the snapshot
      return request.with("your name?");
    });
    workflow.handle([half, half], (_ctx, a, b) => stop.with(a.data + b.data));
    workflow.handle([answer], (context, ev) => {
      context.sendEvent(half.with(ev.data.length));
    });
    const { sendEvent, snapshot, stream } = workflow.createContext({ asked: 0 });
    sendEvent(start.with(40));
    const saved = JSON.parse(JSON.stringify(await snapshot()));
    expect(JSON.parse(saved.state)).toEqual({ asked: 1 });
    expect(saved.queue).toHaveLength(1);
    sendEvent(answer.with("ok")); // the snapshot stopped this context: no handler runs
    await expect(snapshot()).rejects.toThrow(/already locked/);
    void stream;

    const resumed = workflow.resume(saved);
    expect(resumed.state).toEqual({ asked: 1 });
    resumed.sendEvent(answer.with("ok"));
    expect((await resumed.stream.until(stop).toArray()).at(-1)?.data).toBe(42);
  });
});
