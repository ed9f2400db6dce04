// The function-calling agent with the calculator tools, streamed: each tool call and result
// as it happens, then the reply word by word. The offline demo model stands in for a real
// one (swap in `new OpenAI({ model: "gpt-4o-mini" })` from "stepflow/llm/openai"); it does
// arithmetic with the tools and remembers a name from the chat history.
import { Context } from "stepflow";
import { FunctionOutputEvent, StreamEvent, ToolCallEvent } from "stepflow/events";
import { OfflineDemoLLM } from "stepflow/llm/offline";
import { calculatorTools } from "stepflow/tools/calculator";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";

const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: 60 });

const handler = agent.run({ input: "What is (2123 + 2321) * 312?" });
for await (const ev of handler.streamEvents()) {
  if (ev instanceof ToolCallEvent) for (const call of ev.toolCalls) console.log(`calling ${call.name}(${JSON.stringify(call.input)})`);
  if (ev instanceof FunctionOutputEvent) console.log(`  ${ev.output.toolName} returned ${ev.output.content}`);
  if (ev instanceof StreamEvent) process.stdout.write(ev.delta);
}
const { response, sources } = await handler;
console.log(`\nfinal answer: ${String(response.content)} (${sources.length} tool calls)`);

// Chat history: runs that share a context continue one conversation.
const ctx = new Context(agent);
await agent.run({ input: "Hello! My name is Logan." }, { ctx });
const again = await agent.run({ input: "What is my name?" }, { ctx });
console.log(String(again.response.content));
