/**
 * `@step` checks a returned StopEvent against the result type the workflow declares
 * (`Workflow<In, Result>`), as `await run()` is typed by it. The `@ts-expect-error` lines are
 * checked by `npm run typecheck`: each must be an error there. The legacy-decorator twin is
 * step-result-types.legacy.test.ts.
 */
import { describe, expect, it } from "vitest";
import { type Context, Event, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";

class Verdict extends StopEvent.withFields<{ approved: boolean }>() {}
class Done extends StopEvent<number> {}
class Scored extends Event<{ result: string }> {}

describe("a StopEvent's result is checked against the workflow's result type", () => {
  it("a StopEvent whose result is the declared type compiles, and run() gives that result", async () => {
    class Count extends Workflow<{ n: number }, number> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async count(_ctx: Context, ev: StartEvent<{ n: number }>) {
        return new StopEvent({ result: ev.n + 1 });
      }
    }
    const result: number = await new Count({ timeout: 10 }).run({ n: 41 });
    expect(result).toBe(42);
  });

  it("a workflow whose result is void or undefined ends with a bare new StopEvent()", async () => {
    class Fire extends Workflow<{}, void> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async fire(_ctx: Context) {
        return new StopEvent();
      }
    }
    class Quiet extends Workflow<{}, undefined> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async quiet(_ctx: Context) {
        return new StopEvent();
      }
    }
    class Maybe extends Workflow<{}, string | undefined> {
      // @ts-expect-error -- a result that may be a string is checked: write new StopEvent({ result: undefined })
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async maybe(_ctx: Context) {
        return new StopEvent();
      }
    }
    expect(await new Fire({ timeout: 10 }).run({})).toBeUndefined();
    expect(await new Quiet({ timeout: 10 }).run({})).toBeUndefined();
    expect(new Maybe().graph.steps.has("maybe")).toBe(true);
  });

  it("a StopEvent with a result of another type is a compile error", async () => {
    class Mislabelled extends Workflow<{}, number> {
      // @ts-expect-error -- the result is a string; the workflow declares number
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async answer(_ctx: Context) {
        return new StopEvent({ result: "forty-two" });
      }
    }
    // What the check prevents: run() typed number, giving a string.
    expect(typeof (await new Mislabelled({ timeout: 10 }).run({}))).toBe("string");
  });

  it("a StopEvent annotated without its result type is an error too: its result is unknown", () => {
    class Annotated extends Workflow<{}, string> {
      // @ts-expect-error -- Promise<StopEvent> is Promise<StopEvent<unknown>>; write Promise<StopEvent<string>>
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async answer(_ctx: Context): Promise<StopEvent> {
        return new StopEvent({ result: "yes" });
      }
    }
    expect(new Annotated().graph.steps.has("answer")).toBe(true);
  });

  it("a StopEvent subclass is the result itself, so it must be the declared type", async () => {
    class Review extends Workflow<{}, Verdict> {
      @step({ accepts: [StartEvent], emits: [Verdict] })
      async decide(_ctx: Context) {
        return new Verdict({ approved: true });
      }
    }
    const verdict: Verdict = await new Review({ timeout: 10 }).run({});
    expect(verdict).toBeInstanceOf(Verdict);
    expect(verdict.approved).toBe(true);

    class NumberFlow extends Workflow<{}, number> {
      // @ts-expect-error -- run() would give the Verdict event, not a number
      @step({ accepts: [StartEvent], emits: [Verdict] })
      async decide(_ctx: Context) {
        return new Verdict({ approved: true });
      }
    }
    expect(await new NumberFlow({ timeout: 10 }).run({})).toBeInstanceOf(Verdict);

    class SubclassWithResult extends Workflow<{}, number> {
      // @ts-expect-error -- Done carries a number result, but run() gives the Done event itself
      @step({ accepts: [StartEvent], emits: [Done] })
      async finish(_ctx: Context) {
        return new Done({ result: 1 });
      }
    }
    expect(await new SubclassWithResult({ timeout: 10 }).run({})).toBeInstanceOf(Done);
  });

  it("an event that is not a StopEvent but has a result field is not checked", () => {
    class Scoring extends Workflow<{}, number> {
      @step({ accepts: [StartEvent], emits: [Scored] })
      async score(_ctx: Context) {
        return new Scored({ result: "high" });
      }
      @step({ accepts: [Scored], emits: [StopEvent] })
      async finish(_ctx: Context, ev: Scored) {
        return new StopEvent({ result: ev.result.length });
      }
    }
    expect(new Scoring().graph.steps.size).toBe(2);
  });

  it("a workflow without a declared result type takes any StopEvent", async () => {
    class Loose extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async finish(_ctx: Context) {
        return new StopEvent();
      }
    }
    expect(await new Loose({ timeout: 10 }).run({})).toBeUndefined();
  });

  it("addStep checks the same", async () => {
    const flow = new Workflow<{ n: number }, number>({ timeout: 10 });
    flow.addStep("double", { accepts: [StartEvent], emits: [StopEvent] }, async (_ctx, ev: StartEvent<{ n: number }>) => new StopEvent({ result: ev.n * 2 }));
    expect(await flow.run({ n: 21 })).toBe(42);

    const wrong = new Workflow<{ n: number }, number>({ timeout: 10 });
    wrong.addStep(
      "double",
      { accepts: [StartEvent], emits: [StopEvent] },
      // @ts-expect-error -- the result is a string; the workflow declares number
      async (_ctx, ev: StartEvent<{ n: number }>) => new StopEvent({ result: `${ev.n * 2}` }),
    );
    expect(await wrong.run({ n: 21 })).toBe("42");
  });
});
