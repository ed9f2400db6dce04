/**
 * Tools made with the `llamaindex` umbrella package (not only @llamaindex/core, which stepflow
 * depends on) work with the agent: an application that already uses LlamaIndex keeps its tools.
 */
import { FunctionTool, tool } from "llamaindex";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

describe("tools from the llamaindex package", () => {
  it("the agent calls a tool() and a FunctionTool.from, and answers with their results", async () => {
    const weather = tool({
      name: "weather",
      description: "The weather in a city.",
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => `Sunny in ${city}`,
    });
    const shout = FunctionTool.from(({ text }: { text: string }) => text.toUpperCase(), {
      name: "shout",
      description: "Upper-cases a text.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { name: "weather", input: { city: "Oslo" } },
          { name: "shout", input: { text: "hi" } },
        ],
      },
      { text: "Sunny in Oslo. HI" },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools: [weather, shout], timeout: 10 });
    const result = await agent.run({ input: "Weather in Oslo, and shout hi." });
    expect(result.response.content).toBe("Sunny in Oslo. HI");
    expect(result.sources.map((s) => [s.toolName, s.content])).toEqual([
      ["weather", "Sunny in Oslo"],
      ["shout", "HI"],
    ]);
    expect(llm.requests[0]?.tools).toEqual(["weather", "shout"]);
  });
});
