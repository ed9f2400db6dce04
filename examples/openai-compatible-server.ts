// The agent through the OpenAI class, against an OpenAI-compatible server: the same code
// talks to OpenAI, Ollama (baseURL http://localhost:11434/v1), vLLM, llama.cpp or LM Studio.
// Here the server is a stand-in this example starts on 127.0.0.1; it streams its replies as
// those servers do (server-sent events), calling the calculator tools and then answering.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { FunctionOutputEvent, StreamEvent, ToolCallEvent } from "stepflow/events";
import { OpenAI } from "stepflow/llm/openai";
import { calculatorTools } from "stepflow/tools/calculator";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";

type Message = { role: string; content?: string | null };

// What the stand-in model does next, from the conversation so far.
function nextReply(messages: Message[]): { call?: { name: string; args: object }; text?: string[] } {
  const toolResults = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
  if (toolResults.length === 0) return { call: { name: "add", args: { x: 2123, y: 2321 } } };
  if (toolResults.length === 1) return { call: { name: "multiply", args: { x: Number(toolResults[0]), y: 312 } } };
  return { text: ["(2123 + 2321) * 312 ", "= ", String(toolResults[1]), "."] };
}

const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk: Buffer) => (body += chunk.toString()));
  req.on("end", () => {
    const { messages, model } = JSON.parse(body) as { messages: Message[]; model: string };
    const reply = nextReply(messages);
    const send = (delta: object, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    res.writeHead(200, { "content-type": "text/event-stream" });
    send({ role: "assistant", content: "" });
    for (const piece of reply.text ?? []) send({ content: piece });
    if (reply.call) {
      // As OpenAI does: the call's id and name first, then its arguments in fragments.
      send({ tool_calls: [{ index: 0, id: `call_${reply.call.name}`, type: "function", function: { name: reply.call.name, arguments: "" } }] });
      for (const fragment of JSON.stringify(reply.call.args).match(/.{1,8}/g) ?? []) send({ tool_calls: [{ index: 0, function: { arguments: fragment } }] });
    }
    send({}, reply.call ? "tool_calls" : "stop");
    res.end("data: [DONE]\n\n");
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

const llm = new OpenAI({ baseURL, apiKey: "no-key-needed-locally", model: "local-model" });
const agent = new FunctionCallingAgent({ llm, tools: calculatorTools, timeout: 60 });

const handler = agent.run({ input: "What is (2123 + 2321) * 312?" });
for await (const ev of handler.streamEvents()) {
  if (ev instanceof ToolCallEvent) for (const call of ev.toolCalls) console.log(`model calls ${call.name}(${JSON.stringify(call.input)})`);
  if (ev instanceof FunctionOutputEvent) console.log(`  → ${ev.output.content}`);
  if (ev instanceof StreamEvent) process.stdout.write(ev.delta);
}
await handler;
process.stdout.write("\n");
server.close();
