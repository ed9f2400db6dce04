// A consumer's CommonJS TypeScript (a .cts file, as in a `"type": "commonjs"` project): tsc
// turns its imports into require() calls, which Node 20.19 and later answer with the package's
// ES modules; its own @step workflow, decorators lowered by tsc; no top-level await.
import { Event, StartEvent, StopEvent, Workflow, step, type Context } from "stepflow";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";
import { calculatorTools } from "stepflow/tools/calculator";
import { OfflineDemoLLM } from "stepflow/llm/offline";

class Greeting extends Event<{ text: string }> {}

class GreetFlow extends Workflow<{ name: string }, string> {
  @step({ accepts: [StartEvent], emits: [Greeting] })
  async greet(_ctx: Context, ev: StartEvent<{ name: string }>) {
    return new Greeting({ text: `Hello, ${ev.name}!` });
  }

  @step({ accepts: [Greeting], emits: [StopEvent] })
  async stop(_ctx: Context, ev: Greeting) {
    return new StopEvent({ result: ev.text });
  }
}

async function main(): Promise<void> {
  console.log(`commonjs: ${await new GreetFlow({ timeout: 10 }).run({ name: "Ada" })}`);
  const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: 30 });
  console.log(`commonjs agent: ${(await agent.run({ input: "What is 6 * 7?" })).response.content}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
