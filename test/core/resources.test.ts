import { describe, expect, it } from "vitest";
import { Event, StartEvent, StopEvent, Workflow, WorkflowValidationError, resource, step, type Context } from "../../src/index.ts";
import type { Resource } from "../../src/index.ts";

class Db {
  constructor(readonly id: number) {}
  readonly rows: string[] = [];
}
class Item extends Event<{ name: string }> {}

describe("resources", () => {
  it("a step receives its resources, typed by their factories, as its third argument", async () => {
    const db = resource(() => new Db(1));
    const greeting = resource(async () => "hello");
    class Flow extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent], resources: { db, greeting } })
      async go(_ctx: Context, _ev: StartEvent, { db, greeting }: { db: Db; greeting: string }) {
        return new StopEvent({ result: `${greeting} from db ${db.id}` });
      }
    }
    expect(await new Flow().run({})).toBe("hello from db 1");
  });

  it('is made once per run by default, and once per workflow with cache: "workflow"', async () => {
    let made = 0;
    let madeShared = 0;
    const perRun = resource(() => new Db(++made));
    const perWorkflow = resource(() => new Db(++madeShared), { cache: "workflow" });
    class Flow extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Item] })
      async start(ctx: Context) {
        ctx.sendEvent(new Item({ name: "a" }));
        ctx.sendEvent(new Item({ name: "b" }));
      }
      @step({ accepts: [Item], emits: [StopEvent], resources: { perRun, perWorkflow } })
      async store(_ctx: Context, ev: Item, r: { perRun: Db; perWorkflow: Db }) {
        r.perRun.rows.push(ev.name);
        r.perWorkflow.rows.push(ev.name);
        if (r.perRun.rows.length === 2) return new StopEvent({ result: `${r.perRun.rows.join("")} ${r.perWorkflow.rows.join("")}` });
      }
    }
    const flow = new Flow();
    expect(await flow.run({})).toBe("ab ab");
    expect(await flow.run({})).toBe("ab abab");
    expect([made, madeShared]).toEqual([2, 1]);
  });

  it("a factory receives the resources it declares", async () => {
    const db = resource(() => new Db(7));
    const repo = resource(({ db }) => ({ describe: () => `repo on db ${db.id}` }), { resources: { db } });
    class Flow extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent], resources: { repo } })
      async go(_ctx: Context, _ev: StartEvent, { repo }: { repo: { describe(): string } }) {
        return new StopEvent({ result: repo.describe() });
      }
    }
    expect(await new Flow().run({})).toBe("repo on db 7");
  });

  it("a factory that fails fails the attempt, and the next attempt makes it again", async () => {
    let calls = 0;
    const flaky = resource(() => {
      if (++calls === 1) throw new Error("cannot connect");
      return new Db(calls);
    });
    class Flow extends Workflow<{}, number> {
      @step({ accepts: [StartEvent], emits: [StopEvent], resources: { flaky }, retry: { maxAttempts: 2 } })
      async go(_ctx: Context, _ev: StartEvent, { flaky }: { flaky: Db }) {
        return new StopEvent({ result: flaky.id });
      }
    }
    expect(await new Flow().run({})).toBe(2);
  });

  it("resources that depend on each other in a cycle are refused with the cycle named", () => {
    const deps: { [name: string]: Resource<unknown> } = {};
    const a = resource(() => 1, { name: "a", resources: deps });
    const b = resource(() => 2, { name: "b", resources: { a } });
    deps.b = b;
    class Flow extends Workflow {
      @step({ accepts: [StartEvent], emits: [StopEvent], resources: { a } })
      async go() {
        return new StopEvent();
      }
    }
    expect(() => new Flow().graph).toThrow(
      new WorkflowValidationError(
        'Workflow "Flow" is invalid:\n- Step "go": resources depend on each other in a cycle: a → b → a. Break the cycle: a resource cannot need itself.',
      ),
    );
  });

  it("addStep gives the resources too", async () => {
    const answer = resource(() => 42);
    const flow = new Workflow<{}, number>().addStep(
      "go",
      { accepts: [StartEvent], emits: [StopEvent], resources: { answer } },
      async (_ctx, _ev, { answer }) => new StopEvent({ result: answer }),
    );
    expect(await flow.run({})).toBe(42);
  });
});
