// The agent's final answer as a typed object: `responseFormat` takes a zod schema, and the
// run's result has `object`, checked and parsed by it. OpenAI (and Gemini, Ollama) get the
// schema with each request as `response_format`; the stand-in server this example starts on
// 127.0.0.1 shows what it receives and answers, as OpenAI would, with JSON that matches it.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { StreamEvent } from "stepflow/events";
import { OpenAI } from "stepflow/llm/openai";
import { calculatorTools } from "stepflow/tools/calculator";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";

type Request = {
  model: string;
  messages: { role: string; content?: string | null }[];
  response_format?: { json_schema: { name: string; schema: { required: string[] } } };
};

const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk: Buffer) => (body += chunk.toString()));
  req.on("end", () => {
    const { model, messages, response_format } = JSON.parse(body) as Request;
    const schema = response_format?.json_schema;
    if (messages.every((m) => m.role !== "tool")) console.log(`server got response_format ${schema?.name} with fields ${schema?.schema.required.join(", ")}`);
    const send = (delta: object, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    res.writeHead(200, { "content-type": "text/event-stream" });
    const result = messages.find((m) => m.role === "tool")?.content;
    if (result === undefined) {
      send({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "add", arguments: '{"x":2123,"y":2321}' } }] });
      send({}, "tool_calls");
    } else {
      for (const piece of ['{"total":', String(result), ',"explanation":"2123 + 2321"}']) send({ content: piece });
      send({}, "stop");
    }
    res.end("data: [DONE]\n\n");
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

const Answer = z.object({ total: z.number(), explanation: z.string() });
const llm = new OpenAI({ baseURL, apiKey: "no-key-needed-locally", model: "local-model" });
const agent = new FunctionCallingAgent({ llm, tools: calculatorTools, responseFormat: Answer });

const handler = agent.run({ input: "What is 2123 + 2321?" });
for await (const ev of handler.streamEvents()) if (ev instanceof StreamEvent) process.stdout.write(ev.delta);
const { object } = await handler;
process.stdout.write("\n");
console.log(`total + 1 = ${object.total + 1} (${object.explanation})`);
server.close();
