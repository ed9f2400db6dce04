// This file is compiled with standard (TC39) decorators; the check below proves that the
// esbuild pre-transform did not fall back to the legacy convention.
import { expect, it } from "vitest";
import { Context, StartEvent, StopEvent, Workflow, step } from "../src/index.ts";

it("@step works under standard decorators and receives a decorator context", async () => {
  const kinds: string[] = [];
  const spy = (value: unknown, context: unknown) => {
    kinds.push(typeof context === "object" && context !== null && "kind" in context ? String(context.kind) : "legacy");
    return value as undefined;
  };
  class Standard extends Workflow<{}, string> {
    @spy
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async only(_ctx: Context) {
      return new StopEvent({ result: "standard" });
    }
  }
  expect(kinds).toEqual(["method"]);
  expect(await new Standard().run({})).toBe("standard");
});
