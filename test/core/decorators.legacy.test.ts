// Compiled with `experimentalDecorators: true` (see vitest.config.ts and tsconfig.legacy-decorators.json):
// the same `@step` must work under TypeScript's legacy decorator convention.
import { expect, it } from "vitest";
import { type Context, Event, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";

class Doubled extends Event<{ n: number }> {}

class LegacyChain extends Workflow<{ n: number }, number> {
  @step({ accepts: [StartEvent], emits: [Doubled] })
  async double(_ctx: Context, ev: StartEvent<{ n: number }>) {
    return new Doubled({ n: ev.n * 2 });
  }

  @step({ accepts: [Doubled], emits: [StopEvent], numWorkers: 2 })
  async finish(ctx: Context, ev: Doubled) {
    await ctx.store.set("last", ev.n);
    return new StopEvent({ result: ev.n + 1 });
  }
}

it("@step works under experimentalDecorators", async () => {
  const conventions: string[] = [];
  const spy = (...args: unknown[]) => void conventions.push(args.length === 3 ? "legacy" : "standard");
  class Probe {
    @spy
    method() {}
  }
  expect(new Probe()).toBeDefined();
  expect(conventions).toEqual(["legacy"]);
  const flow = new LegacyChain();
  expect(await flow.run({ n: 20 })).toBe(41);
  expect([...flow.graph.steps.values()].map((s) => [s.name, s.numWorkers])).toEqual([
    ["double", 1],
    ["finish", 2],
  ]);
});

it("@step refuses static and symbol-named methods under experimentalDecorators", () => {
  const mark = step({ accepts: [StartEvent], emits: [StopEvent] });
  expect(() => {
    class Static extends Workflow {
      @mark
      static async start() {
        return new StopEvent();
      }
    }
    return Static;
  }).toThrow("@step cannot mark a static method (start): make it an ordinary instance method with a string name.");
  const key = Symbol("start");
  expect(() => {
    class Symbolic extends Workflow {
      @mark
      async [key]() {
        return new StopEvent();
      }
    }
    return Symbolic;
  }).toThrow("@step cannot mark a method named by a symbol (Symbol(start)): make it an ordinary instance method with a string name.");
});
