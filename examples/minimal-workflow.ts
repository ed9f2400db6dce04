// A workflow of two steps: the first turns the topic into a joke, the second numbers it,
// keeping a counter in the context's store across runs that share the context.
import { Context, Event, StartEvent, StopEvent, Workflow, step } from "stepflow";

class Joke extends Event<{ text: string }> {}

class JokeFlow extends Workflow<{ topic: string }, string> {
  @step({ accepts: [StartEvent], emits: [Joke] })
  async write(_ctx: Context, ev: StartEvent<{ topic: string }>) {
    return new Joke({ text: `Why did the ${ev.topic} cross the road?` });
  }

  @step({ accepts: [Joke], emits: [StopEvent] })
  async number(ctx: Context, ev: Joke) {
    const told = (await ctx.store.get<number>("told", 0)) + 1;
    await ctx.store.set("told", told);
    return new StopEvent({ result: `${ev.text} (joke #${told})` });
  }
}

const flow = new JokeFlow({ timeout: 10 });
const ctx = new Context(flow);
console.log(await flow.run({ topic: "chicken" }, { ctx }));
console.log(await flow.run({ topic: "duck" }, { ctx }));
