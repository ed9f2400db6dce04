/**
 * `ctx.waitForEvent` and `ctx.collectEvents` type the events they give by the class passed,
 * options or not, so a step reads their fields without a cast. `npm run typecheck` compiles
 * this file: the reads below must compile, and each `@ts-expect-error` must be an error.
 */
import { describe, expect, it } from "vitest";
import { type Context, Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";

class Question extends InputRequiredEvent<{ prefix: string }> {}
class Answer extends HumanResponseEvent<{ response: string; votes: number }> {}
class Part extends Event<{ text: string }> {}

/** Runs `flow`, answering each question with `answers` in turn, and gives the result. */
async function answered<R>(flow: Workflow<object, R>, answers: Event[]): Promise<R> {
  const handler = flow.run({});
  for await (const ev of handler.streamEvents()) {
    if (ev instanceof InputRequiredEvent) handler.ctx.sendEvent(answers.shift() as Event);
  }
  return handler;
}

describe("waitForEvent gives an event typed by the class passed", () => {
  it("a bare HumanResponseEvent's fields read as unknown, with or without options", async () => {
    class Bare extends Workflow<object, string[]> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async ask(ctx: Context) {
        const plain = await ctx.waitForEvent(HumanResponseEvent, { waiterEvent: new Question({ prefix: "first?" }) });
        const matched = await ctx.waitForEvent(HumanResponseEvent, { requirements: { id: 2 }, waiterEvent: new Question({ prefix: "second?" }) });
        const response: unknown = plain.response;
        // @ts-expect-error -- a field of a bare HumanResponseEvent is unknown until checked
        const unchecked: string = matched.response;
        return new StopEvent({ result: [String(response), String(unchecked), typeof matched.id] });
      }
    }
    const answers = [new HumanResponseEvent({ response: "yes" }), new HumanResponseEvent({ id: 2, response: "no" })];
    expect(await answered(new Bare({ timeout: 10 }), answers)).toEqual(["yes", "no", "number"]);
  });

  it("a class with fields gives them typed; requirements are checked against them", async () => {
    class Typed extends Workflow<object, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async ask(ctx: Context) {
        const answer = await ctx.waitForEvent(Answer, { requirements: { votes: 3 }, timeout: 5, waiterEvent: new Question({ prefix: "vote?" }) });
        const given = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new Question({ prefix: "why?" }) });
        const text: string = `${answer.response.toUpperCase()} (${answer.votes + 0}) ${given.response.toUpperCase()}`;
        return new StopEvent({ result: text });
      }

      @step({ accepts: [Answer], emits: [StopEvent] })
      async never(ctx: Context) {
        // @ts-expect-error -- votes is a number: an answer with votes "3" could never match
        await ctx.waitForEvent(Answer, { requirements: { votes: "3" } });
        // @ts-expect-error -- Answer has no field "vote"
        await ctx.waitForEvent(Answer, { requirements: { vote: 3 } });
      }
    }
    const flow = new Typed({ timeout: 10, validate: false });
    expect(await answered(flow, [new Answer({ response: "yes", votes: 3 }), new HumanResponseEvent({ response: "because" })])).toBe("YES (3) BECAUSE");
  });
});

describe("collectEvents gives events typed by the classes passed", () => {
  it("a bare built-in class's fields read as unknown, a class with fields typed", async () => {
    class Gather extends Workflow<object, string> {
      @step({ accepts: [StartEvent], emits: [Part, HumanResponseEvent] })
      async start(ctx: Context) {
        ctx.sendEvent(new Part({ text: "a" }));
        ctx.sendEvent(new HumanResponseEvent({ response: "b" }));
      }

      @step({ accepts: [Part, HumanResponseEvent], emits: [StopEvent] })
      async gather(ctx: Context, ev: Part | HumanResponseEvent) {
        const both = ctx.collectEvents(ev, [Part, HumanResponseEvent]);
        if (!both) return;
        const [part, answer] = both;
        const text: string = part.text;
        const response: unknown = answer.response;
        // @ts-expect-error -- a field of a bare HumanResponseEvent is unknown until checked
        const unchecked: string = answer.response;
        const parts = ctx.collectEvents(ev, Part, { count: 0 });
        return new StopEvent({ result: `${text}${String(response)}${String(unchecked)}${parts?.map((p) => p.text).join("") ?? ""}` });
      }
    }
    expect(await new Gather({ timeout: 10 }).run({})).toBe("abb");
  });
});
