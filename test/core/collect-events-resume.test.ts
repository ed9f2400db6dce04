/**
 * `collectEvents` and runs that go on elsewhere: a step saved mid-execution runs again after
 * restore and collects its event again, and a retried attempt collects again; neither may
 * count an event twice or lose the events a completed set took.
 */
import { describe, expect, it } from "vitest";
import { Context, Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import { Answer, Progress, Question, StockCount } from "../fixtures/workflows.ts";

class Part extends Event<{ n: number }> {}
class Confirm extends HumanResponseEvent<{ ok: boolean }> {}

/** Gathers three parts; once it has them, asks for a confirmation before it answers. */
class ConfirmedSum extends Workflow<{}, string> {
  @step({ accepts: [StartEvent], emits: [Part] })
  async start(ctx: Context) {
    ctx.sendEvent(new Part({ n: 1 }));
    ctx.sendEvent(new Part({ n: 2 }));
    return new Part({ n: 3 });
  }

  @step({ accepts: [Part], emits: [StopEvent] })
  async gather(ctx: Context, ev: Part) {
    const parts = ctx.collectEvents(ev, [Part, Part, Part]);
    if (!parts) return undefined;
    const answer = await ctx.waitForEvent(Confirm, { waiterEvent: new InputRequiredEvent({ prefix: "sum?" }) });
    return new StopEvent({ result: `${answer.ok ? "sum" : "no"}: ${parts.map((p) => p.n).join("+")}` });
  }
}

describe("collectEvents across save and restore", () => {
  it("a step saved after collecting its event, before it returned, collects it once after restore", async () => {
    const flow = new StockCount({ timeout: 30 });
    const handler = flow.run({ item: "chairs" });
    let saved = "";
    let collected = 0;
    let asked = false;
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof Progress) collected = ev.collected;
      if (ev instanceof Question) asked = true;
      if (asked && collected === 2 && !saved) {
        saved = JSON.stringify(handler.ctx.toJSON());
        handler.cancel();
      }
    }
    await handler.catch(() => undefined);
    const again = new StockCount({ timeout: 30 });
    const resumed = again.run(undefined, { ctx: Context.fromJSON(again, saved) });
    for await (const ev of resumed.streamEvents()) if (ev instanceof Question) resumed.ctx.sendEvent(new Answer({ response: "1" }));
    expect(await resumed).toBe("6 chairs in Berlin, Lyon, Porto");
  });

  it("a step saved after its collectEvents completed a set, while it waits, gets the whole set again after restore", async () => {
    const handler = new ConfirmedSum({ timeout: 30 }).run({});
    let saved = "";
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof InputRequiredEvent && !saved) {
        saved = JSON.stringify(handler.ctx.toJSON());
        handler.cancel();
      }
    }
    await handler.catch(() => undefined);
    const flow = new ConfirmedSum({ timeout: 30 });
    const resumed = flow.run(undefined, { ctx: Context.fromJSON(flow, saved) });
    for await (const ev of resumed.streamEvents()) if (ev instanceof InputRequiredEvent) resumed.ctx.sendEvent(new Confirm({ ok: true }));
    expect(await resumed).toBe("sum: 1+2+3");
  });

  it("a retried attempt of a collecting step gets the set its first attempt completed", async () => {
    let attempts = 0;
    class Flaky extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Part] })
      async start(ctx: Context) {
        ctx.sendEvent(new Part({ n: 1 }));
        return new Part({ n: 2 });
      }

      @step({ accepts: [Part], emits: [StopEvent], retry: (attempt) => (attempt < 3 ? 0 : null) })
      async gather(ctx: Context, ev: Part) {
        const parts = ctx.collectEvents(ev, [Part, Part]);
        if (!parts) return undefined;
        if (++attempts < 3) throw new Error("flaky");
        return new StopEvent({ result: parts.map((p) => p.n).join("+") });
      }
    }
    expect(await new Flaky({ timeout: 30 }).run({})).toBe("1+2");
    expect(attempts).toBe(3);
  });

  it("a retried attempt of a step that collected and failed does not count its event twice", async () => {
    let failed = false;
    class Twice extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Part] })
      async start(ctx: Context) {
        ctx.sendEvent(new Part({ n: 1 }));
        ctx.sendEvent(new Part({ n: 2 }));
        return new Part({ n: 3 });
      }

      @step({ accepts: [Part], emits: [StopEvent], retry: (attempt) => (attempt < 2 ? 0 : null) })
      async gather(ctx: Context, ev: Part) {
        const parts = ctx.collectEvents(ev, [Part, Part, Part]);
        if (ev.n === 1 && !failed) {
          failed = true;
          throw new Error("flaky");
        }
        return parts ? new StopEvent({ result: parts.map((p) => p.n).join("+") }) : undefined;
      }
    }
    expect(await new Twice({ timeout: 30 }).run({})).toBe("1+2+3");
    expect(failed).toBe(true);
  });
});
