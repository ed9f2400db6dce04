// A consumer's TypeScript: a decorated workflow, the agent with the offline model, the REST
// tool's and the sessions' types. Type-checked (nodenext and bundler), then bundled by esbuild
// with its default target and run.
import { Context, Event, StartEvent, StopEvent, Workflow, step, type ContextJSON } from "stepflow";
import { StreamEvent } from "stepflow/events";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";
import { calculatorTools } from "stepflow/tools/calculator";
import { restApiTool } from "stepflow/tools/rest-api";
import { OfflineDemoLLM } from "stepflow/llm/offline";
import { ScriptedLLM } from "stepflow/llm/scripted";
import { OpenAI } from "stepflow/llm/openai";
import { MemorySessionStore, Sessions, type SessionStore } from "stepflow/sessions";
import { WorkflowServer } from "stepflow/server";
import { WorkflowClient, type HandlerInfo } from "stepflow/client";

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
const saved: ContextJSON = ctx.toJSON();
console.log(await flow.run({ topic: "duck" }, { ctx: Context.fromJSON(flow, saved) }));

const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: 30 });
const handler = agent.run({ input: "What is (2123 + 2321) * 312?" });
let streamed = 0;
for await (const event of handler.streamEvents()) if (event instanceof StreamEvent) streamed++;
const result = await handler;
console.log(`${result.response.content} (streamed: ${streamed > 0})`);

const store: SessionStore = new MemorySessionStore();
const sessions = new Sessions(agent, store);
console.log(typeof sessions.run, typeof restApiTool, typeof ScriptedLLM, typeof OpenAI);

const server = new WorkflowServer({ workflows: { agent }, store: new MemorySessionStore() });
const { url } = await server.listen({ port: 0 });
const done: HandlerInfo = await new WorkflowClient({ baseUrl: url }).run("agent", { input: "What is 6 * 7?" });
await server.close();
console.log(`server: ${done.status}`);
