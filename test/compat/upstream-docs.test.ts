/**
 * Upstream's documented examples (run-llama/workflows-ts docs/examples: branching, loops,
 * fan-in/fan-out, human in the loop, state, the tracing plugin), with only their imports
 * changed, checked by the same assertions as upstream's docs/tests. (Its other tracing example
 * needs the separate @llamaindex/workflow-otel package; its map-reduce page has no code.)
 */
import { describe, expect, test, vi } from "vitest";
import * as branching from "./upstream-docs/branching.ts";
import * as fanInFanOut from "./upstream-docs/fan_in_fan_out.ts";
import * as humanInTheLoop from "./upstream-docs/human_in_the_loop.ts";
import * as loops from "./upstream-docs/loops.ts";
import * as state from "./upstream-docs/state.ts";

describe("upstream's documented examples on stepflow/compat/workflow-core", () => {
  test("branching", async () => {
    const { workflow, inputEvent, successEvent } = branching;
    const context1 = workflow.createContext();
    context1.sendEvent(inputEvent.with("I am some data"));
    expect((await context1.stream.until(successEvent).toArray()).at(-1)?.data).toBe("Processed string I am some data");
    const context2 = workflow.createContext();
    context2.sendEvent(inputEvent.with(1));
    expect((await context2.stream.until(successEvent).toArray()).at(-1)?.data).toBe("Processed number 1");
  });

  test("loops", async () => {
    const { workflow, startEvent, stopEvent } = loops;
    const { stream, sendEvent } = workflow.createContext({ counter: 0, max_counter: 5 });
    sendEvent(startEvent.with());
    expect((await stream.until(stopEvent).toArray()).at(-1)?.data).toBe(5);
  });

  test("fan-in / fan-out, read with for await … break", async () => {
    const { workflow, startEvent, processItemEvent, resultEvent, completeEvent } = fanInFanOut;
    const { stream, sendEvent } = workflow.createContext();
    sendEvent(startEvent.with("Start fan-out"));
    let completed: string[] = [];
    for await (const event of stream) {
      if (processItemEvent.include(event)) expect(event.data).toBeLessThan(10);
      else if (resultEvent.include(event)) expect(event.data.startsWith("Processed: ")).toBe(true);
      else if (completeEvent.include(event)) {
        completed = event.data;
        break;
      }
    }
    expect([...completed].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `Processed: ${i}`).sort());
  });

  test("human in the loop: snapshot, then resume from JSON", async () => {
    const { workflow, startEvent, humanRequestEvent, humanResponseEvent, stopEvent } = humanInTheLoop;
    const { sendEvent, snapshot, stream } = workflow.createContext();
    sendEvent(startEvent.with("begin"));
    await stream.until(humanRequestEvent).toArray();
    const saved = JSON.parse(JSON.stringify(await snapshot()));
    const resumed = workflow.resume(saved);
    resumed.sendEvent(humanResponseEvent.with("hello world"));
    expect((await resumed.stream.until(stopEvent).toArray()).at(-1)?.data).toBe("Human said: hello world");
  });

  test("state", async () => {
    const { workflow, startEvent, stopEvent } = state;
    const { stream, sendEvent } = workflow.createContext({ previous_message: "my initial previous message" });
    sendEvent(startEvent.with({ userInput: "Hello, how are you?" }));
    expect((await stream.untilEvent(stopEvent)).data.result).toBe("Processed message: Hello, how are you? previous message: my initial previous message");
  });

  test("tracing plugin: a handler decorator times each handler", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      const { workflow } = await import("./upstream-docs/tracing_plugin.ts");
      expect(typeof workflow.substream).toBe("function");
      await vi.waitFor(() => expect(log).toHaveBeenCalledWith("[trace] handler duration (ms):", expect.any(Number)), { timeout: 10_000 });
      // Only the trace lines: examples of earlier tests may still be printing their own lines.
      expect(log.mock.calls.filter(([first]) => first === "[trace] handler duration (ms):")).toHaveLength(1);
    } finally {
      log.mockRestore();
    }
  });
});
