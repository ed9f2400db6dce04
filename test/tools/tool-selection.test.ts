import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { toolSpecTokens } from "../../src/llm/token-usage.ts";
import { tool } from "../../src/tools/tool.ts";
import { bm25ToolSelector } from "../../src/tools/tool-selection.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

const make = (name: string, description: string, parameters = z.object({})) => tool({ name, description, parameters, execute: () => `${name} done` });
const tools = [
  make("listEmployees", "List the company's employees, a page at a time.", z.object({ page: z.number().optional() })),
  make("fireEmployee", "Remove an employee from the company (terminate their contract).", z.object({ id: z.number() })),
  make("get_weather_forecast", "The weather forecast for a city for the next days.", z.object({ city: z.string() })),
  make("convertCurrency", "Convert an amount of money from one currency to another.", z.object({ amount: z.number(), from: z.string(), to: z.string() })),
  make("refundOrder", "Refund an order to the customer's card.", z.object({ orderId: z.string() })),
  make("shipOrder", "Ship an order with a carrier.", z.object({ orderId: z.string(), carrier: z.string() })),
];
const names = (list: readonly { metadata: { name: string } }[]) => list.map((t) => t.metadata.name);

describe("tool selection", () => {
  it("bm25ToolSelector ranks tools by the words of the question, across case styles and word forms", () => {
    const selector = bm25ToolSelector(tools);
    expect(names(selector.select("What will the weather be in Oslo?", 1))).toEqual(["get_weather_forecast"]);
    expect(names(selector.select("How much is 100 dollars in euros? Convert it.", 1))).toEqual(["convertCurrency"]);
    expect(names(selector.select("Please refund order 1234", 1))).toEqual(["refundOrder"]);
    expect(names(selector.select("Which orders were shipped?", 2)).sort()).toEqual(["refundOrder", "shipOrder"]);
    expect(names(selector.select("terminate Lawson's contract", 1))).toEqual(["fireEmployee"]);
    expect(selector.select("hello there", 3)).toEqual([]);
  });

  it("with maxToolsPerCall, sends the model the relevant tools and those it called this turn, in the agent's order", async () => {
    const llm = new ScriptedLLM([
      { toolCalls: [{ name: "listEmployees", input: { page: 1 } }] },
      { toolCalls: [{ name: "fireEmployee", input: { id: 7 } }] },
      { text: "Done." },
      { toolCalls: [{ name: "get_weather_forecast", input: { city: "Oslo" } }] },
      { text: "Sunny." },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools, maxToolsPerCall: 1 });
    const handler = agent.run({ input: "Fire the employee Lawson" });
    const fired = await handler;
    // The first call gets one tool; then listEmployees, called meanwhile, goes along too.
    expect(llm.requests.map((r) => r.tools)).toEqual([["fireEmployee"], ["listEmployees", "fireEmployee"], ["listEmployees", "fireEmployee"]]);
    expect(fired.sources.map((s) => s.content)).toEqual(["listEmployees done", "fireEmployee done"]);
    expect(fired.usage.calls.map((c) => [c.toolsSent, c.toolsAvailable])).toEqual([
      [1, 6],
      [2, 6],
      [2, 6],
    ]);
    expect(fired.usage.calls[0]?.toolSpecTokens).toBe(toolSpecTokens([tools[1] as (typeof tools)[number]]));

    // The next question's selection starts afresh.
    await agent.run({ input: "And the weather in Oslo?" }, { ctx: handler.ctx });
    expect(llm.requests.slice(3).map((r) => r.tools)).toEqual([["get_weather_forecast"], ["get_weather_forecast"]]);
  });

  it("falls back on the questions before when the latest finds too few tools, and takes a selector of the application's", async () => {
    const llm = new ScriptedLLM([{ text: "Which city?" }, { text: "Rainy." }]);
    const agent = new FunctionCallingAgent({ llm, tools, maxToolsPerCall: 1 });
    const handler = agent.run({ input: "What is the weather forecast?" });
    await handler;
    await agent.run({ input: "Bergen" }, { ctx: handler.ctx });
    expect(llm.requests.map((r) => r.tools)).toEqual([["get_weather_forecast"], ["get_weather_forecast"]]);

    const own = new ScriptedLLM([{ text: "ok" }]);
    const byPrefix = { select: (query: string, k: number) => tools.filter((t) => t.metadata.name.startsWith(query.toLowerCase().slice(0, 4))).slice(0, k) };
    await new FunctionCallingAgent({ llm: own, tools, maxToolsPerCall: 2, toolSelector: byPrefix }).run({ input: "Ship it" });
    expect(own.requests[0]?.tools).toEqual(["shipOrder"]);
  });

  it("never leaves the model without tools: a message that matches none gets the tools called last, then the first ones", async () => {
    const llm = new ScriptedLLM([
      { text: "Hello! How can I help?" },
      { toolCalls: [{ name: "convertCurrency", input: { amount: 100, from: "USD", to: "EUR" } }] },
      { text: "92 euros." },
      { text: "De rien." },
      { text: "Bitte." },
      { text: "どういたしまして。" },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools, maxToolsPerCall: 2 });
    const handler = agent.run({ input: "Hi" });
    await handler;
    // Nothing scores for "Hi": the first two tools, in the agent's order, rather than none.
    expect(llm.requests[0]?.tools).toEqual(["listEmployees", "fireEmployee"]);
    await agent.run({ input: "Convert 100 dollars to euros" }, { ctx: handler.ctx });
    expect(llm.requests[1]?.tools).toEqual(["convertCurrency"]);
    for (const input of ["Merci !", "Danke schön", "ありがとう"]) await agent.run({ input }, { ctx: handler.ctx });
    // "Merci !" and "Danke schön" still have the currency question among the two before them;
    // "ありがとう" has not: it gets the tool called last in the conversation, then the first one.
    expect(llm.requests.slice(3).map((r) => r.tools)).toEqual([["convertCurrency"], ["convertCurrency"], ["listEmployees", "convertCurrency"]]);
  });

  it("refuses a maxToolsPerCall or toolSelector it cannot use, saying what it takes", () => {
    const llm = new ScriptedLLM([]);
    expect(() => new FunctionCallingAgent({ llm, tools, maxToolsPerCall: 0 })).toThrow(
      "maxToolsPerCall must be a whole number ≥ 1 (the tools sent on each LLM call), or left out to send every tool; got 0.",
    );
    expect(() => new FunctionCallingAgent({ llm, tools, toolSelector: bm25ToolSelector(tools) })).toThrow(
      "toolSelector picks maxToolsPerCall tools per LLM call: give maxToolsPerCall too, e.g. 10.",
    );
    expect(() => new FunctionCallingAgent({ llm, tools, maxToolsPerCall: 3, toolSelector: {} as never })).toThrow(
      "toolSelector must be an object with a select(query, k) method",
    );
  });
});
