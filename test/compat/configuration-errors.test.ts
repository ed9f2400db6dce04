/**
 * A bad argument to a compat function that sets a workflow up is a ConfigurationError (as
 * every bad option in stepflow is), naming the option and what it got.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigurationError } from "../../src/index.ts";
import { createContext } from "../../src/compat/workflow-core/context.ts";
import { createWorkflow } from "../../src/compat/workflow-core/index.ts";
import { runOnce, withTraceEvents } from "../../src/compat/workflow-core/middleware/trace-events.ts";
import { withValidation } from "../../src/compat/workflow-core/middleware/validation.ts";
import { zodEvent } from "../../src/compat/workflow-core/util/zod.ts";

const configurationError = (option: string) => expect.objectContaining({ name: "ConfigurationError", option });

describe("compat workflow-core: bad options are ConfigurationErrors", () => {
  it("createWorkflow({ timeout }) and a run's timeout", () => {
    expect(() => createWorkflow({ timeout: -1 })).toThrow(configurationError("timeout"));
    expect(() => createWorkflow({ timeout: -1 })).toThrow(ConfigurationError);
    expect(() => createContext({ listeners: new Map(), timeout: Number.NaN })).toThrow(configurationError("timeout"));
  });

  it("workflow.handle() without event types", () => {
    expect(() => createWorkflow().handle([] as never, () => {})).toThrow(configurationError("accept"));
  });

  it("zodEvent() without a schema", () => {
    expect(() => zodEvent("name" as never)).toThrow(configurationError("schema"));
    expect(zodEvent(z.object({ name: z.string() }))).toBeDefined();
  });

  it("withValidation() without [inputs, outputs] pairs", () => {
    expect(() => withValidation(createWorkflow(), "start" as never)).toThrow(configurationError("validation"));
  });

  it("a handler decorator given no function, and withTraceEvents() given another workflow", () => {
    expect(() => runOnce("handler" as never)).toThrow(configurationError("handler"));
    const foreign = { handle: () => {}, createContext: () => ({}) } as never;
    const traced = withTraceEvents(foreign) as unknown as { createContext(): unknown };
    expect(() => traced.createContext()).toThrow(configurationError("workflow"));
  });
});
