import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { OpenAI } from "../../src/llm/openai.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { mcpTools } from "../../src/mcp/index.ts";
import type { McpToolset } from "../../src/mcp/index.ts";
import { withoutNullOptionals } from "../../src/tools/null-arguments.ts";
import { runToolCall } from "../../src/tools/tool-calls.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { openApiTools } from "../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../workflows/tools/rest-api.ts";
import { startHrApiServer } from "../support/hr-api-server.ts";
import type { HrApiServer } from "../support/hr-api-server.ts";
import { startMcpHttpServer } from "../support/mcp-server.ts";
import type { McpHttpServer } from "../support/mcp-server.ts";
import { startOpenAIServer } from "../support/openai-sse-server.ts";

let hr: HrApiServer | undefined;
let mcp: McpHttpServer | undefined;
let toolset: McpToolset | undefined;
afterEach(async () => {
  await toolset?.close();
  await mcp?.close();
  await hr?.close();
  hr = mcp = toolset = undefined;
});

const weatherCalls: unknown[] = [];
const weather = tool({
  name: "get_weather",
  description: "The weather in a city.",
  parameters: z.object({ city: z.string(), unit: z.enum(["celsius", "fahrenheit"]).optional(), day: z.string().nullable().optional() }),
  execute: (args) => (weatherCalls.push(args), `Sunny in ${args.city}`),
});

describe("a model's null for an optional argument", () => {
  it("is read as the argument left out: an OpenAI-compatible stream's {city, unit: null} runs the tool with { city }", async () => {
    weatherCalls.length = 0;
    const model = await startOpenAIServer({
      turns: [{ toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris","unit":null}' }] }, { text: "Sunny in Paris." }],
    });
    try {
      const llm = new OpenAI({ model: "gpt-4o-mini", baseURL: model.baseURL, apiKey: "sk-test", maxRetries: 0 });
      const { response, sources } = await new FunctionCallingAgent({ llm, tools: [weather] }).run({ input: "Weather in Paris?" });
      expect(weatherCalls).toEqual([{ city: "Paris" }]);
      expect(sources).toMatchObject([{ toolName: "get_weather", input: { city: "Paris", unit: null }, content: "Sunny in Paris", isError: false }]);
      expect(model.requests[1]?.body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_1", content: "Sunny in Paris" });
      expect(response.content).toBe("Sunny in Paris.");
    } finally {
      await model.close();
    }
  });

  it("stays null for a field whose schema takes null, and is refused for a required field, as before", async () => {
    weatherCalls.length = 0;
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          // LlamaIndex's JSONValue leaves out null, which models send all the same.
          { id: "c1", name: "get_weather", input: { city: "Oslo", day: null, unit: null } as never },
          { id: "c2", name: "get_weather", input: { city: null, unit: "celsius" } as never },
        ],
      },
      { text: "Done." },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [weather] }).run({ input: "Weather?" });
    expect(weatherCalls).toEqual([{ city: "Oslo", day: null }]);
    expect(sources[1]?.content).toBe(
      "Invalid arguments for tool get_weather: city: Invalid input: expected string, received null. The tool was not run; call it again with arguments that match its schema.",
    );
  });

  it("is left out of an OpenAPI operation's request, nullable parameters kept", async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/echo": {
          post: {
            operationId: "echo",
            parameters: [
              { name: "page", in: "query", schema: { type: "integer" } },
              { name: "sort", in: "query", schema: { type: "string", nullable: true } },
            ],
            requestBody: {
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["name"],
                    properties: {
                      name: { type: "string" },
                      note: { type: "string" },
                      tags: { type: "array", items: { type: "object", properties: { label: { type: "string" } } } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    };
    const [echo] = openApiTools({ openApi, baseURL: hr.baseURL });
    const source = await runToolCall(
      { id: "c1", name: "echo", input: { page: null, sort: null, body: { name: "Ada", note: null, tags: [{ label: null }] } } as never },
      echo ? [echo] : [],
    );
    expect(source.isError).toBe(false);
    expect(hr.requests.map((r) => r.path)).toEqual(["/api/echo"]);
    expect(hr.requests[0]?.body).toEqual({ name: "Ada", tags: [{}] });
  });

  it("is left out of an MCP tool's call", async () => {
    const received: unknown[] = [];
    mcp = await startMcpHttpServer({
      moreTools: (server) =>
        server.registerTool(
          "find_flights",
          { description: "Find flights.", inputSchema: { from: z.string(), to: z.string(), date: z.string().optional() } },
          (args) => (received.push(args), { content: [{ type: "text", text: "AF1234" }] }),
        ),
    });
    toolset = await mcpTools({ url: mcp.url }, { include: ["find_flights"] });
    const source = await runToolCall({ id: "c1", name: "find_flights", input: '{"from":"CDG","to":"OSL","date":null}' as never }, toolset.tools);
    expect(source).toMatchObject({ content: "AF1234", isError: false });
    expect(received).toEqual([{ from: "CDG", to: "OSL" }]);
  });

  it("withoutNullOptionals leaves the input itself when there is nothing to leave out, and follows $refs", () => {
    const parameters = {
      type: "object",
      properties: { city: { type: "string" }, where: { $ref: "#/$defs/Where" }, any: {}, either: { anyOf: [{ type: "string" }, { type: "null" }] } },
      required: ["city"],
      $defs: { Where: { type: "object", properties: { lat: { type: "number" } } } },
    };
    const input = { city: "Paris", any: null, either: null };
    expect(withoutNullOptionals(input, parameters)).toBe(input);
    expect(withoutNullOptionals({ city: "Paris", where: { lat: null } }, parameters)).toEqual({ city: "Paris", where: {} });
    expect(withoutNullOptionals({ city: null }, parameters)).toEqual({ city: null });
  });
});
