// Human in the loop: a step asks a question (InputRequiredEvent) and waits for the answer
// (HumanResponseEvent). The first run is answered at once; the second is saved while it
// waits, ended, and continued later from the saved JSON, as another process would.
import { Context, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, WorkflowCancelledByUser, step } from "stepflow";

class Question extends InputRequiredEvent<{ prefix: string }> {}
class Answer extends HumanResponseEvent<{ response: string }> {}

class FireEmployee extends Workflow<{ name: string }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async fire(ctx: Context, ev: StartEvent<{ name: string }>) {
    const answer = await ctx.waitForEvent(Answer, {
      waiterEvent: new Question({ prefix: `Fire ${ev.name}? (yes/no)` }),
    });
    return new StopEvent({ result: answer.response === "yes" ? `${ev.name} fired` : `${ev.name} kept` });
  }
}

const flow = new FireEmployee({ timeout: 30 });

// 1. Answered while the run waits.
const handler = flow.run({ name: "Lawson" });
for await (const ev of handler.streamEvents()) {
  if (ev instanceof Question) {
    console.log("asked:", ev.prefix);
    handler.ctx.sendEvent(new Answer({ response: "yes" }));
  }
}
console.log("result:", await handler);

// 2. Saved while it waits; the answer comes later.
const waiting = flow.run({ name: "Ferguson" });
let saved = "";
for await (const ev of waiting.streamEvents()) {
  if (ev instanceof Question) {
    console.log("asked:", ev.prefix);
    saved = JSON.stringify(waiting.ctx.toJSON()); // store it anywhere: a file, a database row
    waiting.cancel();
  }
}
await waiting.catch((error: unknown) => {
  if (!(error instanceof WorkflowCancelledByUser)) throw error;
  console.log("saved and ended the waiting run");
});

const resumed = flow.run(undefined, { ctx: Context.fromJSON(flow, saved) });
resumed.ctx.sendEvent(new Answer({ response: "no" }));
console.log("result after restore:", await resumed);
