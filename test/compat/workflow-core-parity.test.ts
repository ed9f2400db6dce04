/**
 * The behaviours upstream's own tests (run-llama/workflows-ts, packages/core/tests) check, run
 * against both `@llamaindex/workflow-core` 1.3.4 and `stepflow/compat/workflow-core`: each test
 * passes on upstream, so it states upstream's behaviour, and on compat, so compat keeps it.
 */
import { describe, expect, test, vi } from "vitest";
import * as upstreamCore from "../../bench/node_modules/@llamaindex/workflow-core/dist/index.js";
import * as upstreamRun from "../../bench/node_modules/@llamaindex/workflow-core/stream/run.js";
import * as compatCore from "../../src/compat/workflow-core/index.ts";
import * as compatRun from "../../src/compat/workflow-core/stream/run.ts";

type Core = typeof compatCore;
type Run = typeof compatRun;
type Ev = compatCore.WorkflowEventData<unknown>;

const implementations: [string, Core, Run][] = [
  ["upstream", upstreamCore as unknown as Core, upstreamRun as unknown as Run],
  ["compat", compatCore, compatRun],
];

describe.each(implementations)("%s", (_name, core, helpers) => {
  const { createWorkflow, workflowEvent, eventSource, or, getContext, WorkflowStream } = core;

  describe("events", () => {
    test("uniqueId is a string, or the one configured, and read-only", () => {
      expect(typeof workflowEvent().uniqueId).toBe("string");
      const named = workflowEvent({ uniqueId: "test" });
      expect(named.uniqueId).toBe("test");
      expect(() => {
        (named as { uniqueId: string }).uniqueId = "other";
      }).toThrow();
    });

    test("with / include / eventSource / debugLabel", () => {
      const start = workflowEvent<string>({ debugLabel: "startEvent" });
      const ev1 = start.with("1");
      const ev2 = start.with("2");
      expect(eventSource(ev1)).toBe(eventSource(ev2));
      expect(start.include(ev1) && start.include(ev2)).toBe(true);
      expect(workflowEvent().include(ev1)).toBe(false);
      expect([ev1.data, ev2.data]).toEqual(["1", "2"]);
      expect(String(ev1)).toBe("startEvent");
      const renamed = workflowEvent();
      renamed.debugLabel = "newEvent";
      expect(renamed.debugLabel).toBe("newEvent");
    });

    test("onInit is called for each new instance until cleaned up", () => {
      const event = workflowEvent<number>();
      const cb = vi.fn();
      const cleanup = event.onInit(cb);
      expect(cb).not.toBeCalled();
      event.with(1);
      expect(cb).toBeCalledTimes(1);
      cleanup();
      event.with(2);
      expect(cb).toBeCalledTimes(1);
    });

    test("or() includes its members' instances and its own", () => {
      const a = workflowEvent<string>();
      const b = workflowEvent<number>();
      const either = or(a, b);
      expect(either.include(a.with("x"))).toBe(true);
      expect(either.include(b.with(1))).toBe(true);
      expect(either.include(either.with("direct"))).toBe(true);
      expect(either.include(workflowEvent().with())).toBe(false);
    });
  });

  describe("handlers", () => {
    const start = workflowEvent<string>({ debugLabel: "startEvent" });
    const convert = workflowEvent<number>({ debugLabel: "convertEvent" });
    const stop = workflowEvent<number>({ debugLabel: "stopEvent" });

    for (const kind of ["sync", "async"] as const) {
      test(`${kind} handlers chain through returned events`, async () => {
        const workflow = createWorkflow();
        const wrap = <T>(v: T) => (kind === "sync" ? v : Promise.resolve(v));
        workflow.handle([start], (_ctx, ev) => wrap(convert.with(Number.parseInt(ev.data, 10))));
        workflow.handle([convert], (_ctx, ev) => wrap(stop.with(ev.data > 0 ? 1 : -1)));
        const { stream, sendEvent } = workflow.createContext();
        sendEvent(start.with("100"));
        const events = await stream.until(stop).toArray();
        expect(events.map(eventSource)).toEqual([start, convert, stop]);
        expect(events.at(-1)?.data).toBe(1);
      });
    }

    test("a handler's own stream sees what it caused, and can be read twice (loop)", async () => {
      const parse = workflowEvent<number>({ debugLabel: "parse" });
      const parsed = workflowEvent<number>({ debugLabel: "parsed" });
      const workflow = createWorkflow();
      workflow.handle([start], async (context) => {
        const { sendEvent, stream } = context;
        const ev = parse.with(2);
        sendEvent(ev);
        await stream.until((e: Ev) => parsed.include(e) && e.data === 0).toArray();
        sendEvent(ev);
        await stream.until((e: Ev) => parsed.include(e) && e.data === 0).toArray();
        return stop.with(1);
      });
      workflow.handle([parse], async (context, { data }) => {
        if (data > 0) context.sendEvent(parse.with(data - 1));
        else return parsed.with(0);
      });
      const { stream, sendEvent } = workflow.createContext();
      sendEvent(start.with("100"));
      const events = await stream.until(stop).toArray();
      expect(events.map(eventSource)).toEqual([start, parse, parse, parse, parsed, parse, parse, parse, parsed, stop]);
    });

    test("sendEvent inside a handler is streamed before the handler's returned event", async () => {
      const a = workflowEvent({ debugLabel: "a" });
      const aResult = workflowEvent({ debugLabel: "aResult" });
      const done = workflowEvent({ debugLabel: "done" });
      const workflow = createWorkflow();
      workflow.handle([start], async (context) => {
        context.sendEvent(a.with());
        return done.with();
      });
      workflow.handle([a], async () => aResult.with());
      const { stream, sendEvent } = workflow.createContext();
      sendEvent(start.with(""));
      expect((await stream.until(done).toArray()).map(eventSource)).toEqual([start, a, aResult, done]);
    });

    test("one event runs every handler of its type; a two-event handler waits for both (fan-out, fan-in)", async () => {
      const joke = workflowEvent<string>({ debugLabel: "joke" });
      const critique = workflowEvent<string>({ debugLabel: "critique" });
      const analysis = workflowEvent<string>({ debugLabel: "analysis" });
      const result = workflowEvent<string>({ debugLabel: "result" });
      const workflow = createWorkflow();
      workflow.handle([start], async () => joke.with("joke"));
      workflow.handle([joke], async () => critique.with("critique"));
      workflow.handle([joke], async () => analysis.with("analysis"));
      workflow.handle([analysis, critique], async (_ctx, a, c) => result.with(`${c.data} ${a.data}`));
      const { stream, sendEvent } = workflow.createContext();
      sendEvent(start.with("pirates"));
      const events = await stream.until(result).toArray();
      expect(events.map(eventSource)).toEqual([start, joke, critique, analysis, result]);
      expect(events.at(-1)?.data).toBe("critique analysis");
    });

    test("a handler of [A, A] takes two distinct A events", async () => {
      const workflow = createWorkflow();
      workflow.handle([start], (context, ev) => {
        context.sendEvent(convert.with(Number(ev.data)));
        return convert.with(Number(ev.data));
      });
      workflow.handle([convert, convert], (_ctx, c1, c2) => stop.with(c1.data + c2.data));
      const { stream, sendEvent } = workflow.createContext();
      sendEvent(start.with("100"));
      const events = await stream.until(stop).toArray();
      expect(events.map(eventSource)).toEqual([start, convert, convert, stop]);
      expect(events.at(-1)?.data).toBe(200);
    });

    test("a handler of 100 events runs once, after the 100th (sent from a timer)", async () => {
      const workflow = createWorkflow();
      workflow.handle([start], async (context) => {
        setTimeout(() => {
          for (let i = 0; i < 100; i++) context.sendEvent(convert.with(i));
        }, 1);
      });
      const all = vi.fn(async () => stop.with(1));
      workflow.handle(
        Array.from({ length: 100 }, () => convert),
        all,
      );
      const { stream, sendEvent } = workflow.createContext();
      sendEvent(start.with(""));
      expect(await stream.until(stop).toArray()).toHaveLength(102);
      expect(all).toBeCalledTimes(1);
    });

    test("or(): a handler runs on either event", async () => {
      const first = workflowEvent<string>();
      const second = workflowEvent<number>();
      const result = workflowEvent<string>();
      const workflow = createWorkflow();
      const fn = vi.fn((_ctx: unknown, ev: Ev) => result.with(`Got: ${String(ev.data)}`));
      workflow.handle([or(first, second)], fn);
      const { stream, sendEvent } = workflow.createContext();
      sendEvent(first.with("hello"));
      const events = await stream.until(result).toArray();
      expect(fn).toBeCalledTimes(1);
      expect(events.at(-1)?.data).toBe("Got: hello");
    });

    test("the handler's context has sendEvent and stream; getContext() returns it", async () => {
      const workflow = createWorkflow();
      let same = false;
      workflow.handle([start], async (context) => {
        expect(context.sendEvent).toBeTypeOf("function");
        expect(context.stream).toBeDefined();
        same = getContext() === context;
        await Promise.resolve();
        return stop.with(1);
      });
      const { stream, sendEvent } = workflow.createContext();
      sendEvent(start.with(""));
      await stream.until(stop).toArray();
      expect(same).toBe(true);
      expect(() => getContext()).toThrow();
    });

    test("getContext() after an await is still the handler's own context, also when handlers interleave", async () => {
      const a = workflowEvent<string>();
      const b = workflowEvent<string>();
      const done = workflowEvent<string>();
      const workflow = createWorkflow();
      const handler = async (context: compatCore.WorkflowContext, ev: Ev) => {
        await new Promise((resolve) => setImmediate(resolve));
        const after = getContext();
        await Promise.resolve();
        after.sendEvent(done.with(`${String(ev.data)}:${after === context && getContext() === context}`));
      };
      workflow.handle([a], handler);
      workflow.handle([b], handler);
      const { stream, sendEvent } = workflow.createContext();
      sendEvent(a.with("a"), b.with("b"));
      const seen: string[] = [];
      for await (const ev of stream) {
        if (done.include(ev)) seen.push(ev.data);
        if (seen.length === 2) break;
      }
      expect(seen.sort()).toEqual(["a:true", "b:true"]);
    });

    test("handlers are run synchronously inside sendEvent", () => {
      const workflow = createWorkflow();
      const seen: string[] = [];
      workflow.handle([start], (_ctx, ev) => {
        seen.push(ev.data);
      });
      const { sendEvent } = workflow.createContext();
      sendEvent(start.with("a"), start.with("b"));
      expect(seen).toEqual(["a", "b"]);
    });
  });

  describe("abort signal", () => {
    test("a handler that throws aborts the context's signal with the error", () => {
      const start = workflowEvent();
      const workflow = createWorkflow();
      const err = new Error("1");
      workflow.handle([start], () => {
        throw err;
      });
      for (let i = 0; i < 2; i++) {
        const { sendEvent, signal } = workflow.createContext();
        const onabort = vi.fn();
        signal.onabort = onabort;
        sendEvent(start.with());
        expect(onabort).toBeCalled();
        expect(signal.reason).toBe(err);
      }
    });

    test("only the handler's signal aborts when the handler read it", () => {
      const start = workflowEvent();
      const workflow = createWorkflow();
      const err = new Error("1");
      let handlerSignal: AbortSignal | undefined;
      workflow.handle([start], (context) => {
        handlerSignal = context.signal;
        throw err;
      });
      const { sendEvent, signal } = workflow.createContext();
      sendEvent(start.with());
      expect(signal.aborted).toBe(false);
      expect(handlerSignal?.aborted).toBe(true);
      expect(handlerSignal?.reason).toBe(err);
    });
  });

  describe("stream", () => {
    const message = workflowEvent({ debugLabel: "message", uniqueId: "message" });
    const halt = workflowEvent({ debugLabel: "halt", uniqueId: "halt" });
    const sendMessages = (n: number, withHalt: boolean) => {
      const { sendEvent, stream } = createWorkflow().createContext();
      for (let i = 0; i < n; i++) sendEvent(message.with());
      if (withHalt) sendEvent(halt.with());
      return stream;
    };

    test("until / filter / take / untilEvent", async () => {
      expect((await sendMessages(3, true).until(halt).toArray()).map(eventSource)).toEqual([message, message, message, halt]);
      expect(await sendMessages(3, true).until(halt).filter(message).toArray()).toHaveLength(3);
      expect(await sendMessages(3, true).until(halt).take(2).toArray()).toHaveLength(2);
      expect(eventSource(await sendMessages(2, true).untilEvent(halt))).toBe(halt);
      expect(eventSource(await sendMessages(2, true).untilEvent((e: Ev) => eventSource(e) === halt))).toBe(halt);
      await expect(sendMessages(2, false).take(2).untilEvent(halt)).rejects.toThrow("Stream ended without matching event");
    });

    test("map, forEach and async iteration", async () => {
      expect(
        await sendMessages(2, true)
          .until(halt)
          .map((e: Ev) => eventSource(e)?.uniqueId)
          .toArray(),
      ).toEqual(["message", "message", "halt"]);
      const seen: Ev[] = [];
      await sendMessages(1, true)
        .until(halt)
        .forEach((e) => seen.push(e));
      expect(seen).toHaveLength(2);
      const iterated: Ev[] = [];
      for await (const e of sendMessages(2, true).until(halt)) iterated.push(e);
      expect(iterated).toHaveLength(3);
    });

    test("stream.on calls back as events are sent, until unsubscribed", () => {
      const workflow = createWorkflow();
      const start = workflowEvent();
      const text = workflowEvent<string>();
      workflow.handle([start], (context) => {
        context.sendEvent(text.with("Hello World"));
      });
      const { stream, sendEvent } = workflow.createContext();
      const callback = vi.fn();
      const unsubscribe = stream.on(text, callback);
      sendEvent(start.with());
      expect(callback).toHaveBeenCalledTimes(1);
      expect(callback.mock.calls[0]?.[0].data).toBe("Hello World");
      unsubscribe();
      sendEvent(start.with());
      expect(callback).toHaveBeenCalledTimes(1);
    });

    test("a ReadableStream: pipeThrough, tee, locked, getReader", async () => {
      const start = workflowEvent<number>();
      const stop = workflowEvent<number>();
      const workflow = createWorkflow();
      workflow.handle([start], async (_ctx, ev) => stop.with(ev.data));
      const { stream, sendEvent } = workflow.createContext();
      expect(stream).toBeInstanceOf(ReadableStream);
      const cut = stream.pipeThrough(
        new TransformStream<Ev, Ev>({
          transform(event, controller) {
            controller.enqueue(event);
            if (stop.include(event)) controller.terminate();
          },
        }),
      );
      sendEvent(start.with(7));
      const [left, right] = cut.tee();
      expect(cut.locked).toBe(true);
      expect(await left.until(stop).toArray()).toHaveLength(2);
      const reader = right.getReader();
      expect((await reader.read()).value?.data).toBe(7);
      expect((await reader.read()).value?.data).toBe(7);
      expect((await reader.read()).done).toBe(true);
    });

    test("toResponse / fromResponse round trip", async () => {
      const { sendEvent, stream } = createWorkflow().createContext();
      sendEvent(message.with());
      sendEvent(halt.with());
      const response = stream.until(halt).toResponse();
      const list: Ev[] = [];
      for await (const event of WorkflowStream.fromResponse(response, { message, halt })) list.push(event);
      expect(list.map(eventSource)).toEqual([message, halt]);
    });
  });

  describe("stream/run helpers", () => {
    const start = workflowEvent<string>();
    const middle = workflowEvent<number>();
    const stop = workflowEvent<1 | -1>();
    const workflow = createWorkflow();
    workflow.handle([start], (_ctx, ev) => middle.with(Number.parseInt(ev.data, 10)));
    workflow.handle([middle], (_ctx, ev) => stop.with(ev.data > 0 ? 1 : -1));

    test("runWorkflow, runAndCollect, runStream, run", async () => {
      expect((await helpers.runWorkflow(workflow, start.with("42"), stop)).data).toBe(1);
      expect((await helpers.runWorkflow(workflow, start.with("-10"), stop)).data).toBe(-1);
      expect((await helpers.runAndCollect(workflow, start.with("1"), stop)).map(eventSource)).toEqual([start, middle, stop]);
      const streamed: Ev[] = [];
      for await (const ev of helpers.runStream(workflow, start.with("1"), stop)) streamed.push(ev);
      expect(streamed.map(eventSource)).toEqual([start, middle, stop]);
      expect(
        await helpers
          .run(workflow, [start.with("1"), start.with("2")])
          .filter(stop)
          .take(2)
          .toArray(),
      ).toHaveLength(2);
    });

    test("sub-workflows run inside a handler", async () => {
      const root = createWorkflow();
      const begin = workflowEvent();
      const end = workflowEvent();
      const haltEv = workflowEvent();
      root.handle([begin], async (context) => {
        const sub = createWorkflow();
        sub.handle([begin], (subContext) => {
          subContext.sendEvent(end.with());
        });
        const results = await Promise.all([1, 2, 3].map(() => helpers.run(sub, begin.with()).filter(end).take(1).toArray()));
        context.sendEvent(...results.flat());
        context.sendEvent(haltEv.with());
      });
      const { sendEvent, stream } = root.createContext();
      sendEvent(begin.with());
      expect((await stream.until(haltEv).toArray()).map(eventSource)).toEqual([begin, end, end, end, haltEv]);
    });
  });
});
