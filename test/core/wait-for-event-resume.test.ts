/**
 * A step that asks several questions (`waitForEvent` after `waitForEvent`), saved and restored
 * between them: the restored run executes the step again from its input event, so its waits
 * must get back the answers they had, each its own, and only the questions not answered yet
 * may be asked again.
 */
import { describe, expect, it } from "vitest";
import { Context, Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";

type Reply = HumanResponseEvent<{ response: string }>;
const Reply = HumanResponseEvent<{ response: string }>;

/** Asks `questions` in a row, in one step execution, and says what each was answered. */
class Survey extends Workflow<{ questions: string[] }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async ask(ctx: Context, ev: StartEvent<{ questions: string[] }>) {
    const answers: string[] = [];
    for (const prefix of ev.questions) {
      const answer: Reply = await ctx.waitForEvent(Reply, { waiterEvent: new InputRequiredEvent({ prefix }) });
      answers.push(`${prefix} ${answer.response}`);
    }
    return new StopEvent({ result: answers.join(" / ") });
  }
}

/** The question an InputRequiredEvent asks. */
const prefixOf = (ev: Event) => String((ev as Event & { prefix?: unknown }).prefix);

/** Streams `handler` until its next question, answering none; then saves it and cancels it. */
async function saveAtQuestion(handler: {
  readonly ctx: Context;
  streamEvents(): AsyncIterable<Event>;
  cancel(): void;
  catch(f: () => void): PromiseLike<unknown>;
}) {
  let question = "";
  let saved = "";
  for await (const ev of handler.streamEvents()) {
    if (ev instanceof InputRequiredEvent && !saved) {
      question = prefixOf(ev);
      saved = JSON.stringify(handler.ctx.toJSON());
      handler.cancel();
    }
  }
  await handler.catch(() => undefined);
  return { question, saved };
}

describe("a step with several waitForEvent calls, saved and restored between them", () => {
  it("asks each question once across three restores, and each answer goes to its own question", async () => {
    const questions = ["Name?", "Colour?", "Size?"];
    const replies: Record<string, string> = { "Name?": "Ada", "Colour?": "green", "Size?": "M" };
    const asked: string[] = [];
    let flow = new Survey({ timeout: 30 });
    let { question, saved } = await saveAtQuestion(flow.run({ questions }));
    for (;;) {
      asked.push(question);
      // A new process: restore the run, give it the answer to the question it asked, and let it go on to the next.
      flow = new Survey({ timeout: 30 });
      const ctx = Context.fromJSON(flow, saved);
      const resumed = flow.run(undefined, { ctx });
      resumed.ctx.sendEvent(new Reply({ response: replies[question] as string }));
      if (asked.length === questions.length) {
        for await (const ev of resumed.streamEvents()) if (ev instanceof InputRequiredEvent) asked.push(`asked again: ${prefixOf(ev)}`);
        expect(await resumed).toBe("Name? Ada / Colour? green / Size? M");
        break;
      }
      ({ question, saved } = await saveAtQuestion(resumed));
    }
    expect(asked).toEqual(questions);
  });

  it("keeps the answers an in-flight step took ahead of those sent early for later questions", async () => {
    const flow = new Survey({ timeout: 30 });
    const handler = flow.run({ questions: ["Name?", "Colour?", "Size?"] });
    handler.ctx.sendEvent(new Reply({ response: "Ada" })); // sent before the question: kept for it
    let saved = "";
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof InputRequiredEvent && !saved) {
        handler.ctx.sendEvent(new Reply({ response: "green" })); // to the waiting question
        handler.ctx.sendEvent(new Reply({ response: "M" })); // sent early, for the question after it
        saved = JSON.stringify(handler.ctx.toJSON());
        handler.cancel();
      }
    }
    await handler.catch(() => undefined);
    const again = new Survey({ timeout: 30 });
    const resumed = again.run(undefined, { ctx: Context.fromJSON(again, saved) });
    const asked: string[] = [];
    for await (const ev of resumed.streamEvents()) if (ev instanceof InputRequiredEvent) asked.push(prefixOf(ev));
    expect(await resumed).toBe("Name? Ada / Colour? green / Size? M");
    expect(asked).toEqual([]);
  });

  it("gives each of two waiting steps its own answers back", async () => {
    class Flight extends HumanResponseEvent<{ response: string }> {}
    class Hotel extends HumanResponseEvent<{ response: string }> {}
    class Done extends Event<{ text: string }> {}
    class Trip extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Done] })
      async flight(ctx: Context) {
        const from = await ctx.waitForEvent(Flight, { waiterEvent: new InputRequiredEvent({ prefix: "Fly from?" }) });
        const to = await ctx.waitForEvent(Flight, { waiterEvent: new InputRequiredEvent({ prefix: "Fly to?" }) });
        return new Done({ text: `${from.response}-${to.response}` });
      }

      @step({ accepts: [StartEvent], emits: [Done] })
      async hotel(ctx: Context) {
        const city = await ctx.waitForEvent(Hotel, { waiterEvent: new InputRequiredEvent({ prefix: "Hotel in?" }) });
        const nights = await ctx.waitForEvent(Hotel, { waiterEvent: new InputRequiredEvent({ prefix: "Nights?" }) });
        return new Done({ text: `${city.response} x${nights.response}` });
      }

      @step({ accepts: [Done], emits: [StopEvent] })
      async book(ctx: Context, ev: Done) {
        const both = ctx.collectEvents(ev, [Done, Done]);
        return both
          ? new StopEvent({
              result: both
                .map((d) => d.text)
                .sort()
                .join(", "),
            })
          : undefined;
      }
    }
    const replies: Record<string, Event> = {
      "Fly from?": new Flight({ response: "LIS" }),
      "Fly to?": new Flight({ response: "OSL" }),
      "Hotel in?": new Hotel({ response: "Oslo" }),
      "Nights?": new Hotel({ response: "3" }),
    };
    const handler = new Trip({ timeout: 30 }).run({});
    const asked: string[] = [];
    let saved = "";
    for await (const ev of handler.streamEvents()) {
      if (!(ev instanceof InputRequiredEvent)) continue;
      asked.push(prefixOf(ev));
      if (asked.length <= 2) handler.ctx.sendEvent(replies[prefixOf(ev)] as Event);
      else if (asked.length === 4) {
        saved = JSON.stringify(handler.ctx.toJSON());
        handler.cancel();
      }
    }
    await handler.catch(() => undefined);
    expect(asked.sort()).toEqual(["Fly from?", "Fly to?", "Hotel in?", "Nights?"]);
    const flow = new Trip({ timeout: 30 });
    const resumed = flow.run(undefined, { ctx: Context.fromJSON(flow, saved) });
    const again: string[] = [];
    for await (const ev of resumed.streamEvents()) {
      if (!(ev instanceof InputRequiredEvent)) continue;
      again.push(prefixOf(ev));
      resumed.ctx.sendEvent(replies[prefixOf(ev)] as Event);
    }
    expect(await resumed).toBe("LIS-OSL, Oslo x3");
    expect(again.sort()).toEqual(["Fly to?", "Nights?"]);
  });

  it("keeps an answer that a recorded ctx.once holds: the step, run again, gets the record and does not wait for it", async () => {
    class Recorded extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async ask(ctx: Context) {
        const first = await ctx.once("first", async () => {
          const answer: Reply = await ctx.waitForEvent(Reply, { waiterEvent: new InputRequiredEvent({ prefix: "First?" }) });
          return answer.response;
        });
        const second: Reply = await ctx.waitForEvent(Reply, { waiterEvent: new InputRequiredEvent({ prefix: "Second?" }) });
        return new StopEvent({ result: `${first.status === "unknown" ? "?" : first.value} ${second.response}` });
      }
    }
    const handler = new Recorded({ timeout: 30 }).run({});
    let saved = "";
    for await (const ev of handler.streamEvents()) {
      if (!(ev instanceof InputRequiredEvent)) continue;
      if (prefixOf(ev) === "First?") handler.ctx.sendEvent(new Reply({ response: "a" }));
      else {
        saved = JSON.stringify(handler.ctx.toJSON());
        handler.cancel();
      }
    }
    await handler.catch(() => undefined);
    const flow = new Recorded({ timeout: 30 });
    const resumed = flow.run(undefined, { ctx: Context.fromJSON(flow, saved) });
    const asked: string[] = [];
    for await (const ev of resumed.streamEvents()) {
      if (!(ev instanceof InputRequiredEvent)) continue;
      asked.push(prefixOf(ev));
      resumed.ctx.sendEvent(new Reply({ response: "b" }));
    }
    expect(await resumed).toBe("a b");
    expect(asked).toEqual(["Second?"]);
  });

  it("a retry takes again what its failed attempt's waits took, without asking; a save mid-retry gives it back too", async () => {
    let attempts = 0;
    class Retried extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: (attempt) => (attempt < 2 ? 0 : null) })
      async ask(ctx: Context) {
        attempts++;
        const first: Reply = await ctx.waitForEvent(Reply, { waiterEvent: new InputRequiredEvent({ prefix: `A${attempts}?` }) });
        if (attempts === 1) throw new Error("lost the connection");
        const second: Reply = await ctx.waitForEvent(Reply, { waiterEvent: new InputRequiredEvent({ prefix: "B?" }) });
        return new StopEvent({ result: `${first.response} ${second.response}` });
      }
    }
    const handler = new Retried({ timeout: 30 }).run({});
    const asked: string[] = [];
    let saved = "";
    for await (const ev of handler.streamEvents()) {
      if (!(ev instanceof InputRequiredEvent)) continue;
      asked.push(prefixOf(ev));
      if (prefixOf(ev) === "B?") {
        saved = JSON.stringify(handler.ctx.toJSON());
        handler.cancel();
      } else handler.ctx.sendEvent(new Reply({ response: "first" }));
    }
    await handler.catch(() => undefined);
    // As in Python's workflows, the retry got the answer to A again: A was asked once.
    expect(asked).toEqual(["A1?", "B?"]);
    const flow = new Retried({ timeout: 30 });
    const resumed = flow.run(undefined, { ctx: Context.fromJSON(flow, saved) });
    for await (const ev of resumed.streamEvents()) {
      if (!(ev instanceof InputRequiredEvent)) continue;
      asked.push(prefixOf(ev));
      resumed.ctx.sendEvent(new Reply({ response: "yes" }));
    }
    expect(await resumed).toBe("first yes");
    expect(asked).toEqual(["A1?", "B?", "B?"]);
  });
});
