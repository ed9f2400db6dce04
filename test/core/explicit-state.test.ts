/**
 * Run observers, codec registries and time slices are objects a workflow is given (or the
 * process's shared ones by default): a workflow given its own never shares them with the rest
 * of the process.
 */
import { describe, expect, it } from "vitest";
import {
  CodecRegistry,
  Codecs,
  type Context,
  RunObservers,
  StartEvent,
  StopEvent,
  TimeSlices,
  Workflow,
  addRunObserver,
  registerCodec,
  sharedRunObservers,
  sharedTimeSlices,
  step,
} from "../../src/index.ts";
import type { RunObserver } from "../../src/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { add } from "../../workflows/tools/calculator.ts";

class Echo extends Workflow<{ n: number }, number> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async echo(_ctx: Context, ev: StartEvent<{ n: number }>) {
    await Promise.resolve();
    return new StopEvent({ result: ev.n });
  }
}

/** An observer that writes down the workflows it saw run and the operations (LLM, tool calls) it saw start. */
function recorder(): RunObserver & { readonly seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    runStarted: (run) => (seen.push(`run ${run.workflow}`), undefined),
    operationStarted: (operation) => (seen.push(operation.name), undefined),
  };
}

describe("run observers given to a workflow", () => {
  it("follow that workflow's runs, LLM and tool calls, and no other workflow's; the shared ones do not see it", async () => {
    const own = recorder();
    const shared = recorder();
    const stop = addRunObserver(shared);
    try {
      const observers = new RunObservers([own]);
      const llm = new ScriptedLLM([{ toolCalls: [{ name: "add", input: { x: 1, y: 2 } }] }, { text: ["3"] }]);
      const agent = new FunctionCallingAgent({ llm, tools: [add], observers });
      await agent.run({ input: "1 + 2?" });
      await new Echo().run({ n: 1 });
      expect(own.seen).toEqual(["run FunctionCallingAgent", "chat scripted", "execute_tool add", "chat scripted"]);
      expect(shared.seen).toEqual(["run Echo"]);
      expect(agent.observers).toBe(observers);
      expect(new Echo().observers).toBe(sharedRunObservers);
    } finally {
      stop();
    }
  });

  it("stop following runs once removed", async () => {
    const observers = new RunObservers();
    const own = recorder();
    const remove = observers.add(own);
    const flow = new Echo({ observers });
    await flow.run({ n: 1 });
    remove();
    await flow.run({ n: 2 });
    expect(own.seen).toEqual(["run Echo"]);
    expect(observers.observing()).toBe(false);
  });
});

describe("codec registries", () => {
  class Money {
    constructor(readonly cents: number) {}
  }
  const money = { test: (v: unknown) => v instanceof Money, encode: (m: unknown) => (m as Money).cents, decode: (c: unknown) => new Money(c as number) };

  it("a Codecs with a registry of its own sees codecs registered there later, and none registered for the process", () => {
    const registry = new CodecRegistry();
    const codecs = new Codecs({}, registry);
    registerCodec("ProcessWideMoney", money);
    expect(codecs.find(new Money(1))).toBeUndefined();
    registry.register("Money", money);
    expect(codecs.encode({ total: new Money(1250) }, "store")).toEqual({ total: { $codec: "Money", value: 1250 } });
    expect(new Codecs().find(new Money(1))?.[0]).toBe("ProcessWideMoney");
  });
});

describe("time slices given to a workflow", () => {
  it("hold the step executions of that workflow's runs, which leave the event loop a turn and all finish, without the shared ones", async () => {
    const timeSlices = new TimeSlices();
    const flow = new Echo({ timeout: null, timeSlices });
    const sharedBefore = sharedTimeSlices.currentSlice();
    const runs = Array.from({ length: 2_000 }, (_, n) => flow.run({ n }));
    expect(await Promise.all(runs)).toEqual(Array.from({ length: 2_000 }, (_, n) => n));
    // 2,000 steps started at once pass the slice's limit of work under way: the rest went on in later slices.
    expect(timeSlices.currentSlice()).toBeGreaterThan(1);
    expect(sharedTimeSlices.currentSlice()).toBe(sharedBefore);
    expect(new Echo().timeSlices).toBe(sharedTimeSlices);
  });
});
