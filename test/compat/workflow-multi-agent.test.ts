/**
 * `agent()` and `multiAgent()` of stepflow/compat/workflow against upstream's
 * (`@llamaindex/workflow` 1.1.24, installed for the llamaindex umbrella test): the same scripted
 * model, the same tools, the same events in the same order, each naming its agent; the handoff
 * reaches the next agent with the whole conversation.
 */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import * as upstream from "../llamaindex/node_modules/@llamaindex/workflow/dist/index.js";
import * as compat from "../../src/compat/workflow/index.ts";
import { ConfigurationError, WorkflowTimeoutError } from "../../src/index.ts";
import { ScriptedLLM, type ScriptedReply } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";

type Api = typeof compat;
const implementations: [string, Api][] = [
  ["upstream", upstream as unknown as Api],
  ["compat", compat],
];

const weather = tool({
  name: "weather",
  description: "The weather in a city",
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny in ${city}`,
});

const makeAgents = (llm: ScriptedLLM) => {
  const weatherAgent = compat.agent({ name: "WeatherAgent", description: "Knows the weather", tools: [weather], llm });
  const frontDesk = compat.agent({ name: "FrontDesk", description: "Greets the user", llm, canHandoffTo: [weatherAgent] });
  return compat.multiAgent({ agents: [frontDesk, weatherAgent], rootAgent: frontDesk });
};

const script: ScriptedReply[] = [
  { toolCalls: [{ name: "handOff", input: { toAgent: "WeatherAgent", reason: "it is about the weather" } }] },
  { toolCalls: [{ name: "weather", input: { city: "Paris" } }] },
  { text: ["It is sunny ", "in Paris."] },
];

/** Each event as "type agent detail", with the names of the implementation's own event types. */
function describeEvents(api: Api, events: compat.AnyWorkflowEventData[]): string[] {
  const names: [string, compat.WorkflowEvent<unknown>][] = [
    ["start", api.startAgentEvent],
    ["input", api.agentInputEvent],
    ["setup", api.agentSetupEvent],
    ["stream", api.agentStreamEvent],
    ["output", api.agentOutputEvent],
    ["toolCall", api.agentToolCallEvent],
    ["toolResult", api.agentToolCallResultEvent],
    ["stop", api.stopAgentEvent],
    ["step", api.agentStepEvent],
    ["toolCalls", api.toolCallsEvent],
    ["toolResults", api.toolResultsEvent],
  ];
  return events.flatMap((ev) => {
    const name = names.find(([, type]) => type.include(ev))?.[0];
    if (name === undefined) return [];
    const data = ev.data as Record<string, unknown>;
    const agent = data.currentAgentName ?? data.agentName ?? "";
    const detail = name === "toolCall" || name === "toolResult" ? String(data.toolName) : name === "stream" ? String(data.delta) : "";
    return [`${name} ${String(agent)} ${detail}`.trim()];
  });
}

describe.each(implementations)("%s agent()", (_name, api) => {
  test("each model call is announced by input and setup events; tool calls and results follow the output that made them", async () => {
    const add = tool({ name: "add", description: "x + y", parameters: z.object({ x: z.number(), y: z.number() }), execute: ({ x, y }) => x + y });
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { name: "add", input: { x: 2, y: 3 } },
          { name: "add", input: { x: 4, y: 5 } },
        ],
      },
      { text: ["5 and ", "9."] },
    ]);
    const events: compat.AnyWorkflowEventData[] = await api
      .agent({ name: "Math", llm, tools: [add], systemPrompt: "You add." })
      .runStream("2 + 3 and 4 + 5?")
      .toArray();
    const described = describeEvents(api, events).filter((d) => d !== "stream Math");
    // Upstream runs the calls one after the other (call, result, call, result); compat in parallel.
    const calls = described.filter((d) => /^tool(Call|Result) /.test(d));
    expect(calls.filter((d) => d.startsWith("toolCall"))).toEqual(["toolCall Math add", "toolCall Math add"]);
    expect(calls.filter((d) => d.startsWith("toolResult"))).toEqual(["toolResult  add", "toolResult  add"]);
    expect(described.filter((d) => !calls.includes(d))).toEqual([
      "start",
      "input Math",
      "setup Math",
      "step Math",
      "output Math",
      "toolCalls Math",
      "toolResults Math",
      "input Math",
      "setup Math",
      "stream Math 5 and",
      "stream Math 9.",
      "step Math",
      "output Math",
      "stop",
    ]);
    const results = events.find((ev) => api.toolResultsEvent.include(ev));
    expect(results?.data.results.map((r) => r.toolOutput.result).sort()).toEqual(["5", "9"]);
    const setups = events.filter((ev) => api.agentSetupEvent.include(ev));
    expect(setups.map((ev) => ev.data.input[0])).toEqual([
      { role: "system", content: "You add." },
      { role: "system", content: "You add." },
    ]);
    expect(events.at(-1)?.data.result).toBe("5 and 9.");
  });
});

describe.each(implementations)("%s multiAgent()", (_name, api) => {
  const make = (llm: ScriptedLLM) => {
    const weatherAgent = api.agent({ name: "WeatherAgent", description: "Knows the weather", tools: [weather], llm, systemPrompt: "You know the weather." });
    const frontDesk = api.agent({ name: "FrontDesk", description: "Greets the user", tools: [], llm, canHandoffTo: [weatherAgent] });
    return api.multiAgent({ agents: [frontDesk, weatherAgent], rootAgent: frontDesk });
  };

  test("the root agent hands off; the next one answers; the events name their agent", async () => {
    const llm = new ScriptedLLM(script);
    const events: compat.AnyWorkflowEventData[] = await make(llm).runStream("What is the weather in Paris?").toArray();
    const described = describeEvents(api, events);
    expect(described[0]).toBe("start");
    expect(described.slice(1, 3)).toEqual(["input FrontDesk", "setup FrontDesk"]);
    const handoffAt = described.indexOf("toolResult  handOff");
    expect(described.filter((d) => d.startsWith("toolCall "))).toEqual(["toolCall FrontDesk handOff", "toolCall WeatherAgent weather"]);
    expect(described.slice(handoffAt + 1, handoffAt + 4)).toEqual(["toolResults FrontDesk", "input WeatherAgent", "setup WeatherAgent"]);
    // Upstream also streams the empty deltas of tool-call chunks; compat streams text only.
    expect(described.filter((d) => d.startsWith("stream") && d.split(" ").length > 2)).toEqual([
      "stream WeatherAgent It is sunny",
      "stream WeatherAgent in Paris.",
    ]);
    expect(described.at(-1)).toBe("stop");
    const handoff = events.find((ev) => api.agentToolCallResultEvent.include(ev) && ev.data.toolName === "handOff");
    expect(handoff?.data.returnDirect).toBe(true);
    expect(events.at(-1)?.data.result).toBe("It is sunny in Paris.");
    expect(events.at(-1)?.data.state.currentAgentName).toBe("WeatherAgent");
  });

  test("the model is offered handOff only by an agent that can hand off; the next agent reads the conversation and the handoff note", async () => {
    const llm = new ScriptedLLM(script);
    await make(llm).run("What is the weather in Paris?");
    expect(llm.requests.map((r) => r.tools)).toEqual([["handOff"], ["weather"], ["weather"]]);
    const second = llm.requests[1]?.messages ?? [];
    expect(second[0]).toMatchObject({ role: "system", content: "You know the weather." });
    expect(second[1]).toMatchObject({ role: "user", content: "What is the weather in Paris?" });
    // The handoff's tool result ends what the next agent reads. (Upstream's note has a literal "\\n".)
    expect(second.at(-1)?.role).toBe("user");
    expect(second.at(-1)?.content).toMatch(
      /^Agent WeatherAgent is now handling the request due to the following reason: it is about the weather\.(\n|\\n)Please continue/,
    );
    expect(second.at(-2)?.options).toMatchObject({ toolCall: [{ name: "handOff" }] });
  });

  test("bad configurations are refused when the workflow is made", () => {
    const llm = new ScriptedLLM([]);
    const a = api.agent({ name: "A", llm, canHandoffTo: ["Ghost"] });
    const b = api.agent({ name: "B", llm });
    expect(() => api.multiAgent({ agents: [a, b], rootAgent: b })).toThrow(/non-existent agents in canHandoffTo: Ghost/);
    const twin = api.agent({ name: "B", llm });
    expect(() => api.multiAgent({ agents: [b, twin], rootAgent: b })).toThrow(/unique/);
    expect(() => api.multiAgent({ agents: [b], rootAgent: a })).toThrow(/not found in agents|not among the agents/);
  });
});

describe("compat multiAgent() only", () => {
  test("handing off to an agent it may not reach is reported to the model, which goes on (upstream answers the user with the error)", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "handOff", input: { toAgent: "Nobody", reason: "why not" } }] }, { text: "I will answer myself." }]);
    const events: compat.AnyWorkflowEventData[] = await makeAgents(llm).runStream("Hi").toArray();
    const result = events.find((ev) => compat.agentToolCallResultEvent.include(ev));
    expect(result?.data.toolOutput.result).toBe("Agent Nobody not found. Select a valid agent to hand off to. Valid agents: WeatherAgent");
    expect(result?.data.returnDirect).toBe(false);
    // Upstream ends the turn here, with "Agent Nobody not found..." as the answer.
    expect(events.at(-1)?.data.result).toBe("I will answer myself.");
  });

  test("configuration errors are ConfigurationErrors", () => {
    const b = compat.agent({ name: "B", llm: new ScriptedLLM([]) });
    expect(() => compat.multiAgent({ agents: [b, b], rootAgent: b })).toThrow(ConfigurationError);
  });

  test("the turn's timeout fires across agents (upstream's ignores timeout)", async () => {
    const hang = tool({ name: "hang", description: "never returns", parameters: z.object({}), execute: () => new Promise<string>(() => {}) });
    const llm = new ScriptedLLM([
      { toolCalls: [{ name: "handOff", input: { toAgent: "Slow", reason: "slow work" } }] },
      { toolCalls: [{ name: "hang", input: {} }] },
    ]);
    const slow = compat.agent({ name: "Slow", llm, tools: [hang] });
    const desk = compat.agent({ name: "Desk", llm, canHandoffTo: ["Slow"] });
    await expect(compat.multiAgent({ agents: [desk, slow], rootAgent: desk, timeout: 0.2 }).run("Go")).rejects.toBeInstanceOf(WorkflowTimeoutError);
  });
});
