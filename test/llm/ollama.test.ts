import { describe, expect, it } from "vitest";
import { Ollama, ollamaMessages } from "../../src/llm/ollama.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { ollamaToolResults, startOllamaServer } from "../support/ollama-wire-server.ts";
import { describeProvider } from "../support/provider-scenarios.ts";

describeProvider("Ollama", {
  start: (turns) => startOllamaServer({ turns }),
  model: (server) => new Ollama({ model: "llama3.1:8b", host: server.url }),
  toolResults: ollamaToolResults,
  answers: "text",
  schemaSent: (body) => (body as { format?: unknown }).format,
});

describe("Ollama", () => {
  it("keeps the assistant's tool calls in the history and names the tool of each result", () => {
    expect(
      ollamaMessages([
        { role: "user", content: "1+2?" },
        { role: "assistant", content: "Adding.", options: { toolCall: [{ id: "c1", name: "add", input: '{"x":1,"y":2}' }] } },
        { role: "user", content: "3", options: { toolResult: { id: "c1", result: "3", isError: false } } },
      ]),
    ).toEqual([
      { role: "user", content: "1+2?" },
      { role: "assistant", content: "Adding.", tool_calls: [{ function: { name: "add", arguments: { x: 1, y: 2 } } }] },
      { role: "tool", content: "3", tool_name: "add" },
    ]);
  });

  it("says which model is missing, as Ollama does", async () => {
    const server = await startOllamaServer({ turns: [] });
    try {
      const llm = new Ollama({ model: "qwen3:0.6b", host: server.url });
      const error = await new FunctionCallingAgent({ llm, tools: calculatorTools }).run({ input: "Hi" }).catch((e: unknown) => e as Error);
      expect((error as Error).message).toBe('model "qwen3:0.6b" not found, try pulling it first');
    } finally {
      await server.close();
    }
  });
});
