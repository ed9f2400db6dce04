/**
 * Compiled with `experimentalDecorators: true`: `@step` checks a returned StopEvent against
 * the workflow's result type under the legacy convention too, where it reads that type from
 * the prototype it is given. The `@ts-expect-error` lines are checked by `npm run typecheck`.
 */
import { expect, it } from "vitest";
import { type Context, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";

class Verdict extends StopEvent.withFields<{ approved: boolean }>() {}

it("a StopEvent's result of the declared type compiles; another type, or a StopEvent subclass that is not the result, does not", async () => {
  class Count extends Workflow<{ n: number }, number> {
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async count(_ctx: Context, ev: StartEvent<{ n: number }>) {
      return new StopEvent({ result: ev.n + 1 });
    }
  }
  const result: number = await new Count({ timeout: 10 }).run({ n: 41 });
  expect(result).toBe(42);

  class Mislabelled extends Workflow<{}, number> {
    // @ts-expect-error -- the result is a string; the workflow declares number
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async answer(_ctx: Context) {
      return new StopEvent({ result: "forty-two" });
    }
  }
  expect(await new Mislabelled({ timeout: 10 }).run({})).toBe("forty-two");

  class NumberFlow extends Workflow<{}, number> {
    // @ts-expect-error -- run() would give the Verdict event, not a number
    @step({ accepts: [StartEvent], emits: [Verdict] })
    async decide(_ctx: Context) {
      return new Verdict({ approved: true });
    }
  }
  expect(await new NumberFlow({ timeout: 10 }).run({})).toBeInstanceOf(Verdict);

  class Review extends Workflow<{}, Verdict> {
    @step({ accepts: [StartEvent], emits: [Verdict] })
    async decide(_ctx: Context) {
      return new Verdict({ approved: false });
    }
  }
  expect((await new Review({ timeout: 10 }).run({})).approved).toBe(false);
});

it("a workflow whose result is void ends with a bare new StopEvent(); one that may be a string does not", async () => {
  class Fire extends Workflow<{}, void> {
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async fire(_ctx: Context) {
      return new StopEvent();
    }
  }
  expect(await new Fire({ timeout: 10 }).run({})).toBeUndefined();

  class Maybe extends Workflow<{}, string | undefined> {
    // @ts-expect-error -- a result that may be a string is checked: write new StopEvent({ result: undefined })
    @step({ accepts: [StartEvent], emits: [StopEvent] })
    async maybe(_ctx: Context) {
      return new StopEvent();
    }
  }
  expect(new Maybe().graph.steps.has("maybe")).toBe(true);
});
