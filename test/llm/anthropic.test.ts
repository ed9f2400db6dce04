import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Anthropic, anthropicMessages } from "../../src/llm/anthropic.ts";
import { FunctionCallingAgent, RESPOND_TOOL } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { anthropicToolResults, startAnthropicServer } from "../support/anthropic-wire-server.ts";
import { describeProvider } from "../support/provider-scenarios.ts";

describeProvider("Anthropic", {
  start: (turns) => startAnthropicServer({ turns }),
  model: (server) => new Anthropic({ model: "claude-sonnet-5-5", apiKey: "test-key", baseURL: server.url }),
  toolResults: anthropicToolResults,
  answers: "respond",
  schemaSent: (body) => (body as { tools?: { name: string; input_schema: unknown }[] }).tools?.find((t) => t.name === RESPOND_TOOL)?.input_schema,
});

describe("Anthropic", () => {
  it("answers responseFormat by a respond tool it is made to call: tool_choice any on every request", async () => {
    const server = await startAnthropicServer({ turns: [{ calls: [{ name: RESPOND_TOOL, input: { total: 3 } }] }] });
    try {
      const llm = new Anthropic({ apiKey: "test-key", baseURL: server.url });
      const { object } = await new FunctionCallingAgent({ llm, tools: calculatorTools, responseFormat: z.object({ total: z.number() }) }).run({
        input: "1+2?",
      });
      expect(object).toEqual({ total: 3 });
      expect(server.requests.map((r) => (r.body as { tool_choice?: unknown }).tool_choice)).toEqual([{ type: "any" }]);
      expect(server.refused).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("never shows the API key, even when the server repeats it in an error", async () => {
    const server = await startAnthropicServer({ turns: [], echoKey: true, apiKey: "sk-ant-secret-1234567890" });
    try {
      const llm = new Anthropic({ apiKey: "sk-ant-secret-1234567890", baseURL: server.url, maxRetries: 0 });
      const error = await new FunctionCallingAgent({ llm, tools: calculatorTools }).run({ input: "Hi" }).catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(Error);
      expect(String((error as Error).message)).toContain("invalid x-api-key");
      expect(`${(error as Error).message} ${(error as Error).stack} ${JSON.stringify(error)}`).not.toContain("sk-ant-secret-1234567890");
    } finally {
      await server.close();
    }
  });

  it("sends system messages apart, merges turns of one role and puts tool results first", () => {
    const { system, messages } = anthropicMessages([
      { role: "system", content: "Be brief." },
      { role: "user", content: "1+2 and 3+4?" },
      {
        role: "assistant",
        content: "",
        options: {
          toolCall: [
            { id: "a", name: "add", input: '{"x":1,"y":2}' },
            { id: "b", name: "add", input: { x: 3, y: 4 } },
          ],
        },
      },
      { role: "user", content: "3", options: { toolResult: { id: "a", result: "3", isError: false } } },
      { role: "user", content: "7", options: { toolResult: { id: "b", result: "7", isError: false } } },
    ]);
    expect(system).toBe("Be brief.");
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "1+2 and 3+4?" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "a", name: "add", input: { x: 1, y: 2 } },
          { type: "tool_use", id: "b", name: "add", input: { x: 3, y: 4 } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "a", content: "3", is_error: false },
          { type: "tool_result", tool_use_id: "b", content: "7", is_error: false },
        ],
      },
    ]);
  });
});
