/**
 * The trace-events and validation middleware and `zodEvent`: the behaviours upstream's tests
 * (run-llama/workflows-ts packages/core/tests/middleware, tests/util) check, run against both
 * `@llamaindex/workflow-core` 1.3.4 and `stepflow/compat/workflow-core`.
 */
import { pipeline } from "node:stream/promises";
import { afterEach, describe, expect, test, vi } from "vitest";
import { z } from "zod";
import * as z3 from "zod/v3";
import * as upstreamCore from "../../bench/node_modules/@llamaindex/workflow-core/dist/index.js";
import * as upstreamTrace from "../../bench/node_modules/@llamaindex/workflow-core/middleware/trace-events.js";
import * as upstreamValidation from "../../bench/node_modules/@llamaindex/workflow-core/middleware/validation.js";
import * as upstreamRun from "../../bench/node_modules/@llamaindex/workflow-core/stream/run.js";
import * as upstreamState from "../../bench/node_modules/@llamaindex/workflow-core/middleware/state.js";
import * as upstreamZod from "../../bench/node_modules/@llamaindex/workflow-core/util/zod.js";
import * as compatCore from "../../src/compat/workflow-core/index.ts";
import * as compatTrace from "../../src/compat/workflow-core/middleware/trace-events.ts";
import * as compatValidation from "../../src/compat/workflow-core/middleware/validation.ts";
import * as compatRun from "../../src/compat/workflow-core/stream/run.ts";
import * as compatZod from "../../src/compat/workflow-core/util/zod.ts";
import * as compatState from "../../src/compat/workflow-core/middleware/state.ts";

type Ev = compatCore.WorkflowEventData<unknown>;
interface Implementation {
  core: typeof compatCore;
  trace: typeof compatTrace;
  validation: typeof compatValidation;
  run: typeof compatRun;
  zod: typeof compatZod;
  state: typeof compatState;
}

const implementations: [string, Implementation][] = [
  [
    "upstream",
    {
      core: upstreamCore as unknown as typeof compatCore,
      trace: upstreamTrace as unknown as typeof compatTrace,
      validation: upstreamValidation as unknown as typeof compatValidation,
      run: upstreamRun as unknown as typeof compatRun,
      zod: upstreamZod as unknown as typeof compatZod,
      state: upstreamState as unknown as typeof compatState,
    },
  ],
  ["compat", { core: compatCore, trace: compatTrace, validation: compatValidation, run: compatRun, zod: compatZod, state: compatState }],
];

describe.each(implementations)("%s", (_name, { core, trace, validation, run, zod, state }) => {
  const { createWorkflow, workflowEvent } = core;
  const { withTraceEvents, runOnce, createHandlerDecorator, getEventOrigins } = trace;

  describe("trace-events", () => {
    test("runOnce: a handler runs once per context", () => {
      const workflow = withTraceEvents(createWorkflow());
      const start = workflowEvent();
      const fn = vi.fn(() => {});
      const ref = workflow.handle([start], runOnce(fn));
      expect(ref.handler).toBe(fn);
      const first = workflow.createContext();
      first.sendEvent(start.with());
      first.sendEvent(start.with());
      expect(fn).toBeCalledTimes(1);
      workflow.createContext().sendEvent(start.with());
      expect(fn).toBeCalledTimes(2);
    });

    test("plugins wrap every handler, in order, and handle() returns the wrapped one", () => {
      const calls: string[] = [];
      const plugin =
        (name: string): compatTrace.TracePlugin =>
        (handler) =>
        (context, ...events) => {
          calls.push(name);
          return handler(context, ...events);
        };
      const workflow = withTraceEvents(createWorkflow(), { plugins: [plugin("inner"), plugin("outer")] });
      const start = workflowEvent();
      const original = () => {
        calls.push("handler");
      };
      const ref = workflow.handle([start], original);
      expect(ref.handler).not.toBe(original);
      workflow.createContext().sendEvent(start.with());
      expect(calls).toEqual(["outer", "inner", "handler"]);
    });

    test("substream keeps the events one event caused", async () => {
      const workflow = withTraceEvents(createWorkflow());
      const start = workflowEvent({ debugLabel: "startEvent" });
      const message = workflowEvent<number>({ debugLabel: "messageEvent" });
      let counter = 0;
      workflow.handle([start], (context) => {
        context.sendEvent(message.with(counter++));
      });
      const context = workflow.createContext();
      const [left, right] = context.stream.tee();
      const first = start.with();
      context.sendEvent(first);
      context.sendEvent(start.with());
      context.sendEvent(start.with());
      const all = await (left as compatCore.WorkflowStream<Ev>).until((ev: Ev) => ev.data === 2).toArray();
      const caused = await workflow
        .substream(
          first,
          (right as compatCore.WorkflowStream<Ev>).until((ev: Ev) => ev.data === 2),
        )
        .filter((ev: Ev) => message.include(ev))
        .toArray();
      expect(all).toHaveLength(6);
      expect(caused.map((ev) => ev.data)).toEqual([0]);
    });

    test("a decorator's metadata is kept per context and handler: no two calls of a handler at once", async () => {
      const workflow = withTraceEvents(createWorkflow());
      const start = workflowEvent();
      const noParallel = createHandlerDecorator<{ previous: Promise<unknown> }>({
        getInitialValue: () => ({ previous: Promise.resolve() }),
        onBeforeHandler:
          (handler, _call, metadata) =>
          (context, ...events) => {
            const run = metadata.previous.then(() => handler(context, ...events));
            metadata.previous = run;
            return run as ReturnType<typeof handler>;
          },
        onAfterHandler: (metadata) => metadata,
      });
      const gates: (() => void)[] = [];
      const order: string[] = [];
      let running = 0;
      workflow.handle(
        [start],
        noParallel(async (_context: unknown, ev: Ev) => {
          running++;
          order.push(`start ${String(ev.data)} (${running} running)`);
          await new Promise<void>((resolve) => gates.push(resolve));
          running--;
        }),
      );
      const { sendEvent } = workflow.createContext();
      sendEvent(start.with(1 as never), start.with(2 as never));
      await vi.waitFor(() => expect(gates).toHaveLength(1));
      gates[0]?.();
      await vi.waitFor(() => expect(gates).toHaveLength(2));
      gates[1]?.();
      expect(order).toEqual(["start 1 (1 running)", "start 2 (1 running)"]);
    });

    test("getEventOrigins names the input that led to an event", async () => {
      const start = workflowEvent<string>({ debugLabel: "startEvent" });
      const branches = ["A", "B", "C"].map((name) => workflowEvent<string>({ debugLabel: `branch${name}Event` }));
      const complete = workflowEvent<string>({ debugLabel: "branchCompleteEvent" });
      const stop = workflowEvent<string>({ debugLabel: "stopEvent" });
      const workflow = withTraceEvents(createWorkflow());
      let origins: Record<string, unknown> = {};
      workflow.handle([start], async (context) => {
        const { sendEvent, stream } = context; // the stream exists before the branches run
        for (const [i, branch] of branches.entries()) sendEvent(branch.with(`Branch ${"ABC"[i]}`));
        const results = await stream.filter(complete).take(3).toArray();
        origins = Object.fromEntries(results.map((ev) => [String(getEventOrigins(ev, context)[0]), ev.data]));
        return stop.with(results.map((ev) => ev.data).join(", "));
      });
      for (const branch of branches) workflow.handle([branch], (_context, ev) => complete.with(ev.data));
      const { stream, sendEvent } = workflow.createContext();
      sendEvent(start.with("initial data"));
      const result = await pipeline(stream, async function (source: AsyncIterable<Ev>) {
        for await (const ev of source) if (stop.include(ev)) return `Result: ${ev.data}`;
        return "no stop";
      });
      expect(result).toBe("Result: Branch A, Branch B, Branch C");
      expect(origins).toEqual({ branchAEvent: "Branch A", branchBEvent: "Branch B", branchCEvent: "Branch C" });
    });
  });

  describe("validation", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    afterEach(() => {
      warn.mockClear();
    });

    test("strictHandle: declared sends pass; undeclared ones are sent and warned about", async () => {
      const start = workflowEvent<void, "start">({ debugLabel: "start" });
      const non = workflowEvent<number, "non">({ debugLabel: "non" });
      const parse = workflowEvent<string, "parse">({ debugLabel: "parse" });
      const stop = workflowEvent<number, "stop">({ debugLabel: "stop" });
      const workflow = validation.withValidation(createWorkflow(), [
        [[start], [stop]],
        [[start], [parse, parse]],
      ]);
      const seen: string[] = [];
      workflow.handle([non], (_context, ev) => {
        seen.push(`non ${ev.data}`);
      });
      workflow.strictHandle([start], (sendEvent) => {
        // @ts-expect-error non is not among the declared outputs of start
        sendEvent(non.with(1));
        sendEvent(parse.with(""));
        sendEvent(stop.with(1));
      });
      const { sendEvent, stream } = workflow.createContext();
      sendEvent(start.with());
      expect((await stream.untilEvent(stop)).data).toBe(1);
      expect(seen).toEqual(["non 1"]);
      expect(warn).toBeCalledTimes(2);
      expect(warn.mock.calls.map((call) => [String(call[0]).startsWith("Invalid input detected [%s]"), call[1]])).toEqual([
        [true, "1"],
        [true, ""],
      ]);
    });

    test("a strict workflow runs with runWorkflow", async () => {
      const start = workflowEvent<void, "start">();
      const stop = workflowEvent<number, "stop">();
      const workflow = validation.withValidation(createWorkflow(), [[[start], [stop]]]);
      workflow.strictHandle([start], (sendEvent) => {
        sendEvent(stop.with(1));
      });
      expect((await run.runWorkflow(workflow, start.with(), stop)).data).toBe(1);
      expect(warn).not.toBeCalled();
    });
  });

  test("all middleware together: state over validation over trace-events, with zod events", async () => {
    const start = zod.zodEvent(z.string(), { debugLabel: "start" });
    const stop = zod.zodEvent(z.string(), { debugLabel: "stop" });
    const { withState } = state.createStatefulMiddleware((id: string) => ({ id }));
    const workflow = withState(validation.withValidation(withTraceEvents(createWorkflow()), [[[start], [stop]]]));
    workflow.strictHandle([start], (sendEvent, context, ev) => {
      expect(ev.data).toBe("start");
      sendEvent(stop.with((context as compatState.StatefulContext<{ id: string }>).state.id));
    });
    expect(typeof workflow.substream).toBe("function");
    const { sendEvent, stream } = workflow.createContext("run-1");
    sendEvent(start.with("start"));
    const events = await stream.until(stop).toArray();
    expect(events.map((ev) => core.eventSource(ev))).toEqual([start, stop]);
    expect(events.at(-1)?.data).toBe("run-1");
  });

  describe("zodEvent", () => {
    for (const [version, schema] of [
      ["zod 4", z.object({ name: z.string(), age: z.number() })],
      ["zod 3", z3.object({ name: z3.string(), age: z3.number() })],
    ] as const) {
      test(`${version}: .with() checks the data; .schema is the schema`, () => {
        const event = zod.zodEvent(schema as compatZod.ZodSchema<{ name: string; age: number }>);
        expect(event.schema).toBe(schema);
        expect(event.with({ name: "John", age: 30 }).data).toEqual({ name: "John", age: 30 });
        expect(() => event.with({ name: "John", age: "30" } as never)).toThrow(/age/);
        expect(event.include(event.with({ name: "Ada", age: 36 }))).toBe(true);
      });
    }
  });
});

describe("compat only", () => {
  test("trace-events: a finished call leaves its parent's next (but the last of each handler), so a long run does not keep every call", async () => {
    const { createWorkflow, workflowEvent } = compatCore;
    const start = workflowEvent<number>();
    const tick = workflowEvent<number>();
    const stop = workflowEvent<number>();
    const workflow = compatTrace.withTraceEvents(createWorkflow());
    let root: compatTrace.HandlerContext | undefined;
    workflow.handle([start], (_context, ev) => tick.with(ev.data));
    workflow.handle(
      [tick],
      compatTrace.createHandlerDecorator<null>({
        getInitialValue: () => null,
        onBeforeHandler: (handler, call) => {
          root = call.root;
          return handler;
        },
        onAfterHandler: () => null,
      })(async (_context: unknown, ev: Ev) => ((ev.data as number) < 100 ? tick.with((ev.data as number) + 1) : stop.with(ev.data as number))),
    );
    const { stream, sendEvent } = workflow.createContext();
    sendEvent(start.with(0));
    expect((await stream.untilEvent(stop)).data).toBe(100);
    await Promise.resolve();
    // The start handler's call stays, as the last call of its handler from outside; none of the 101 tick calls does.
    expect([...(root?.next ?? [])].map((call) => [call.inputEvents, call.next.size])).toEqual([[[start], 0]]);
  });

  test("trace-events: a call that kept its last finished child lets it go when it finishes", async () => {
    const { createWorkflow, workflowEvent } = compatCore;
    const job = workflowEvent<number>();
    const part = workflowEvent<number>();
    const done = workflowEvent<number>();
    const workflow = compatTrace.withTraceEvents(createWorkflow());
    let root: compatTrace.HandlerContext | undefined;
    workflow.handle([part], () => {});
    workflow.handle(
      [job],
      compatTrace.createHandlerDecorator<null>({
        getInitialValue: () => null,
        onBeforeHandler: (handler, call) => {
          root = call.root;
          return handler;
        },
        onAfterHandler: () => null,
      })(async (context: compatCore.WorkflowContext, ev: Ev) => {
        context.sendEvent(part.with(ev.data as number)); // a child call that finishes while the job runs
        await Promise.resolve();
        return done.with(ev.data as number);
      }),
    );
    const { stream, sendEvent } = workflow.createContext();
    const dones = stream.filter(done).take(50).toArray();
    for (let i = 0; i < 50; i++) sendEvent(job.with(i));
    expect(await dones).toHaveLength(50);
    await Promise.resolve();
    // Only the last job's call stays, without its child: not 50 jobs, each with its part.
    expect([...(root?.next ?? [])].map((call) => [call.inputEvents, call.next.size])).toEqual([[[job], 0]]);
  });

  test("getEventOrigins outside a traced workflow says what it needs", () => {
    const ev = compatCore.workflowEvent().with();
    expect(() => compatTrace.getEventOrigins(ev, compatCore.createWorkflow().createContext())).toThrow(/withTraceEvents/);
  });

  test("zodEvent without a schema says what it takes", () => {
    expect(() => compatZod.zodEvent(undefined as never)).toThrow(/takes a zod schema/);
  });

  test("zodEvent rejects with the schema's own error: a zod schema's ZodError", () => {
    const event = compatZod.zodEvent(z.object({ age: z.number() }));
    expect(() => event.with({ age: "30" } as never)).toThrow(z.ZodError);
  });

  test("trace-events composes with the state middleware: a traced human-in-the-loop run snapshots and resumes", async () => {
    const { createWorkflow, workflowEvent } = compatCore;
    const ask = workflowEvent<string>();
    const answer = workflowEvent<string>();
    const done = workflowEvent<string>();
    const { withState } = compatState.createStatefulMiddleware((input: { asked: number }) => input);
    const workflow = withState(compatTrace.withTraceEvents(createWorkflow()));
    const once = vi.fn();
    workflow.handle([ask], (context) => {
      context.state.asked++;
      once();
    });
    workflow.handle([answer], (context, ev) => done.with(`${ev.data} after ${context.state.asked}`));
    const context = workflow.createContext({ asked: 0 });
    context.sendEvent(ask.with("may I?"));
    const saved = JSON.parse(JSON.stringify(await context.snapshot()));
    const resumed = workflow.resume(saved);
    resumed.sendEvent(answer.with("yes"));
    expect((await resumed.stream.untilEvent(done)).data).toBe("yes after 1");
    expect(once).toBeCalledTimes(1);
  });
});
