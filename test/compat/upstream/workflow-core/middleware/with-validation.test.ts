import { createWorkflow, workflowEvent } from "../../../../../src/compat/workflow-core/index.ts";
import { withValidation } from "../../../../../src/compat/workflow-core/middleware/validation.ts";
import { find } from "../../../../../src/compat/workflow-core/stream/find.ts";
import { runWorkflow } from "../../../../../src/compat/workflow-core/stream/run.ts";
import { afterEach, describe, expect, test, vi } from "vitest";

describe("with directed graph", () => {
  const consoleWarnMock = vi
    .spyOn(console, "warn")
    .mockImplementation(() => undefined);
  afterEach(() => {
    consoleWarnMock.mockReset();
  });

  test("basic", async () => {
    const startEvent = workflowEvent<void, "start">({
      debugLabel: "start",
    });
    const nonEvent = workflowEvent<number, "non">({
      debugLabel: "non",
    });
    const parseEvent = workflowEvent<string, "parse">({
      debugLabel: "parse",
    });
    const stopEvent = workflowEvent<number, "stop">({
      debugLabel: "stop",
    });
    const workflow = withValidation(createWorkflow(), [
      [[startEvent], [stopEvent]],
      [[startEvent], [parseEvent, parseEvent]],
    ]);
    const fn = vi.fn();

    workflow.strictHandle([startEvent], (sendEvent) => {
      fn();
      sendEvent(
        // @ts-expect-error - expecting error ts(2345) (argument of type X is not assignable to type Y)
        nonEvent.with(1),
      );
      sendEvent(parseEvent.with(""));
      sendEvent(stopEvent.with(1));
    });

    const { sendEvent, stream } = workflow.createContext();
    sendEvent(startEvent.with());
    await find(stream, stopEvent);
    expect(fn).toBeCalled();
    expect(consoleWarnMock).toBeCalledTimes(2);
    expect(consoleWarnMock).toHaveBeenNthCalledWith(
      1,
      "Invalid input detected [%s]",
      "1",
    );
    expect(consoleWarnMock).toHaveBeenNthCalledWith(
      2,
      "Invalid input detected [%s]",
      "",
    );
  });

  test("promise", async () => {
    const startEvent = workflowEvent<void, "start">();
    const stopEvent = workflowEvent<number, "stop">();
    const workflow = withValidation(createWorkflow(), [
      [[startEvent], [stopEvent]],
    ]);

    workflow.strictHandle([startEvent], (sendEvent) => {
      sendEvent(stopEvent.with(1));
    });

    const result = await runWorkflow(workflow, startEvent.with(), stopEvent);
    expect(result.data).toBe(1);
  });
});
