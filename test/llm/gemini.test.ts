import { describe, expect, it } from "vitest";
import { Gemini, geminiContents } from "../../src/llm/gemini.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { geminiToolResults, startGeminiServer } from "../support/gemini-wire-server.ts";
import { describeProvider } from "../support/provider-scenarios.ts";

describeProvider("Gemini", {
  start: (turns) => startGeminiServer({ turns }),
  model: (server) => new Gemini({ model: "gemini-2.5-flash", apiKey: "test-key", baseURL: server.url }),
  toolResults: geminiToolResults,
  answers: "text",
  schemaSent: (body) => (body as { generationConfig?: { responseJsonSchema?: unknown } }).generationConfig?.responseJsonSchema,
});

describe("Gemini", () => {
  it("keeps the model's text in a turn that also called a function, and answers all its calls in one turn", () => {
    const { system, contents } = geminiContents([
      { role: "system", content: "Be brief." },
      { role: "user", content: "1+2 and 3+4?" },
      {
        role: "assistant",
        content: "Adding both.",
        options: {
          toolCall: [
            { id: "call_a~sig~c2ln", name: "add", input: { x: 1, y: 2 } },
            { id: "call_b", name: "add", input: '{"x":3,"y":4}' },
          ],
        },
      },
      { role: "user", content: "3", options: { toolResult: { id: "call_a~sig~c2ln", result: "3", isError: false } } },
      { role: "user", content: "7", options: { toolResult: { id: "call_b", result: "7", isError: false } } },
    ]);
    expect(system).toBe("Be brief.");
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "1+2 and 3+4?" }] },
      {
        role: "model",
        parts: [
          { text: "Adding both." },
          { functionCall: { name: "add", args: { x: 1, y: 2 } }, thoughtSignature: "c2ln" },
          { functionCall: { name: "add", args: { x: 3, y: 4 } } },
        ],
      },
      {
        role: "user",
        parts: [{ functionResponse: { name: "add", response: { output: "3" } } }, { functionResponse: { name: "add", response: { output: "7" } } }],
      },
    ]);
  });

  it("never shows the API key, even when the server repeats it in an error", async () => {
    const server = await startGeminiServer({ turns: [], echoKey: true, apiKey: "AIza-secret-1234567890" });
    try {
      const llm = new Gemini({ apiKey: "AIza-secret-1234567890", baseURL: server.url });
      const error = await new FunctionCallingAgent({ llm, tools: calculatorTools }).run({ input: "Hi" }).catch((e: unknown) => e as Error);
      expect((error as Error).message).toContain("API key not valid");
      expect(`${(error as Error).message} ${(error as Error).stack} ${JSON.stringify(error)}`).not.toContain("AIza-secret-1234567890");
    } finally {
      await server.close();
    }
  });
});
