// A consumer of the optional integrations, with their peer packages installed next to stepflow:
// stepflow/otel traces an offline agent run into an in-memory exporter, and stepflow/mcp gives
// the agent the tools of an MCP server this app serves over streamable HTTP on 127.0.0.1.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { instrumentStepflow } from "stepflow/otel";
import { mcpTools } from "stepflow/mcp";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";
import { calculatorTools } from "stepflow/tools/calculator";
import { OfflineDemoLLM } from "stepflow/llm/offline";
import { ScriptedLLM } from "stepflow/llm/scripted";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const stop = instrumentStepflow({ tracerProvider: provider });
await new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools }).run({ input: "What is 2 + 3?" });
stop();
const names = exporter.getFinishedSpans().map((s) => s.name);
console.log(`otel: ${names.filter((n) => !n.startsWith("step ")).join(", ")}`);

const server = new McpServer({ name: "greeter", version: "1.0.0" });
server.registerTool("greet", { description: "Greet someone.", inputSchema: { name: z.string() } }, ({ name }) => ({
  content: [{ type: "text", text: `Hello, ${name}!` }],
}));
const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
await server.connect(transport);
const http = createServer((req, res) => void transport.handleRequest(req, res));
await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
const greeter = await mcpTools({ url: `http://127.0.0.1:${http.address().port}/mcp` });
const llm = new ScriptedLLM([{ toolCalls: [{ name: "greet", input: { name: "Ada" } }] }, { text: "Done." }]);
const { sources } = await new FunctionCallingAgent({ llm, tools: greeter.tools }).run({ input: "Greet Ada." });
console.log(`mcp: ${sources.map((s) => s.content).join(", ")}`);
await greeter.close();
await server.close();
http.close();
