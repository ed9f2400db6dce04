// This file is compiled with standard (TC39) decorators; the check below proves that the
// esbuild pre-transform did not fall back to the legacy convention.
import { expect, it } from "vitest";
import { type Context, StartEvent, StopEvent, Workflow, WorkflowValidationError, step } from "../../src/index.ts";

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

it("@step refuses #private, static and symbol-named methods, which a workflow cannot find", () => {
  const mark = step({ accepts: [StartEvent], emits: [StopEvent] });
  const define = (kind: "private" | "static" | "symbol") => () => {
    if (kind === "private") {
      class Hidden extends Workflow {
        @mark
        // eslint-disable-next-line no-unused-private-class-members -- the test is that @step refuses a private method
        async #start() {
          return new StopEvent();
        }
      }
      return Hidden;
    }
    if (kind === "static") {
      class Static extends Workflow {
        @mark
        static async start() {
          return new StopEvent();
        }
      }
      return Static;
    }
    const key = Symbol("start");
    class Symbolic extends Workflow {
      @mark
      async [key]() {
        return new StopEvent();
      }
    }
    return Symbolic;
  };
  expect(define("private")).toThrow(WorkflowValidationError);
  expect(define("private")).toThrow("@step cannot mark a #private method (#start): make it an ordinary instance method with a string name.");
  expect(define("static")).toThrow("@step cannot mark a static method (start): make it an ordinary instance method with a string name.");
  expect(define("symbol")).toThrow("@step cannot mark a method named by a symbol (Symbol(start)): make it an ordinary instance method with a string name.");
});

it("@step refuses a getter", () => {
  const mark = step({ accepts: [StartEvent], emits: [StopEvent] }) as unknown as (value: unknown, context: ClassGetterDecoratorContext) => void;
  expect(() => {
    class Getter extends Workflow {
      @mark
      get start() {
        return async () => new StopEvent();
      }
    }
    return Getter;
  }).toThrow("@step can only decorate a method, not a getter (start).");
});
