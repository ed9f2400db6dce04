import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TokenUsageEvent } from "../../events/index.ts";
import { ConfigurationError, Context } from "../../src/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent, RESPOND_TOOL, StructuredOutputError } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { saveOnEvent } from "../support/save-on-event.ts";

const Weather = z.object({ city: z.string(), celsius: z.number() });

describe("FunctionCallingAgent responseFormat, on a model without native structured output", () => {
  it("offers a respond tool whose parameters are the schema, and returns its arguments parsed", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ name: RESPOND_TOOL, input: { city: "Paris", celsius: 21 } }] }]);
    const result = await new FunctionCallingAgent({ llm, tools: calculatorTools, responseFormat: Weather }).run({ input: "Weather in Paris?" });
    expect(result.object).toEqual({ city: "Paris", celsius: 21 });
    expect(result.response).toEqual({ role: "assistant", content: '{"city":"Paris","celsius":21}' });
    expect(llm.requests[0]?.tools).toContain(RESPOND_TOOL);
  });

  it("takes an answer given as JSON text, in a Markdown fence or not", async () => {
    const llm = new ScriptedLLM([{ text: '```json\n{"city":"Oslo","celsius":-3}\n```' }]);
    const { object } = await new FunctionCallingAgent({ llm, responseFormat: Weather }).run({ input: "Weather in Oslo?" });
    expect(object).toEqual({ city: "Oslo", celsius: -3 });
  });

  it("asks for the respond tool once when the model answers in prose, then fails with a typed error", async () => {
    const llm = new ScriptedLLM([{ text: "It is sunny." }, { text: "Sunny, I said." }]);
    const error = await new FunctionCallingAgent({ llm, responseFormat: Weather })
      .run({ input: "Weather?" })
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect((error as StructuredOutputError).answer).toBe("Sunny, I said.");
    expect(llm.requests[1]?.messages.at(-1)?.content).toContain(`calling the ${RESPOND_TOOL} tool`);
  });

  it("runs the other calls of a reply that also calls respond, and takes the answer after their results", async () => {
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { name: "add", input: { x: 20, y: 1 } },
          { name: RESPOND_TOOL, input: { city: "Rome", celsius: 0 } },
        ],
      },
      { toolCalls: [{ name: RESPOND_TOOL, input: { city: "Rome", celsius: 21 } }] },
    ]);
    const { object, sources } = await new FunctionCallingAgent({ llm, tools: calculatorTools, responseFormat: Weather }).run({ input: "20 + 1 in Rome?" });
    expect(sources.map((s) => s.content)).toEqual(["21"]);
    expect(object).toEqual({ city: "Rome", celsius: 21 });
  });

  it("feeds a refused answer back once in all, when the run is saved and restored after doing so", async () => {
    const first = new ScriptedLLM([{ toolCalls: [{ name: RESPOND_TOOL, input: { city: "Lima" } }] }]);
    const saved = await saveOnEvent(new FunctionCallingAgent({ llm: first, responseFormat: Weather }).run({ input: "Weather in Lima?" }), TokenUsageEvent);
    const second = new ScriptedLLM([{ toolCalls: [{ name: RESPOND_TOOL, input: { city: "Lima" } }] }]);
    const restored = new FunctionCallingAgent({ llm: second, responseFormat: Weather });
    const error = await restored
      .run(undefined, { ctx: Context.fromJSON(restored, saved) })
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect(second.requests).toHaveLength(1);
    expect(second.requests[0]?.messages.at(-1)?.content).toContain("celsius");
  });

  it("refuses a schema that is not a zod object, and a tool that takes the respond tool's name", () => {
    const llm = new ScriptedLLM([]);
    expect(() => new FunctionCallingAgent({ llm, responseFormat: z.array(z.string()) })).toThrow(ConfigurationError);
    expect(() => new FunctionCallingAgent({ llm, responseFormat: z.array(z.string()) })).toThrow(/z\.object\(\{ items: z\.array/);
    expect(() => new FunctionCallingAgent({ llm, responseFormat: "city" as unknown as z.ZodType<string> })).toThrow(
      /responseFormat must be a zod object schema/,
    );
    const respond = tool({ name: RESPOND_TOOL, description: "Reply.", parameters: z.object({}), execute: () => "ok" });
    expect(() => new FunctionCallingAgent({ llm, tools: [respond], responseFormat: Weather })).toThrow(/Rename your tool/);
  });

  it("leaves results without responseFormat as they were", async () => {
    const result = await new FunctionCallingAgent({ llm: new ScriptedLLM([{ text: "Hi." }]) }).run({ input: "Hi" });
    expect(Object.keys(result).sort()).toEqual(["response", "sources", "usage"]);
  });
});
