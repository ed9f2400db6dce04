/**
 * stepflow/compat/workflow's `FunctionAgent`, `AgentWorkflow`, `agentHandler` and
 * `responseFormat` beyond what upstream's own tests check (test/compat/upstream/workflow): the
 * structured output through a real `exec()` (validated, the error fed back once), the `handOff`
 * tool listed on the agents, agents handling a workflow's step, and a memory kept across turns.
 */
import { createMemory } from "@llamaindex/core/memory";
import { afterEach, describe, expect, test, vi } from "vitest";
import { z } from "zod";
import {
  AgentWorkflow,
  FunctionAgent,
  StructuredOutputError,
  agent,
  agentHandler,
  createWorkflow,
  multiAgent,
  workflowEvent,
  zodEvent,
} from "../../src/compat/workflow/index.ts";
import { ConfigurationError, WorkflowRuntimeError } from "../../src/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";

const weatherSchema = z.object({ city: z.string(), celsius: z.number() });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("responseFormat", () => {
  test("the final answer becomes an object of the schema, asked for with the LLM's structured-output tool", async () => {
    const llm = new ScriptedLLM([{ text: "It is 21 °C in Paris." }, { toolCalls: [{ name: "format_output", input: { city: "Paris", celsius: 21 } }] }]);
    const result = await agent({ llm }).run("Weather in Paris?", { responseFormat: weatherSchema });
    expect(result.data.result).toBe("It is 21 °C in Paris.");
    const object: { city: string; celsius: number } | undefined = result.data.object;
    expect(object).toEqual({ city: "Paris", celsius: 21 });
    expect(llm.requests[1]?.tools).toEqual(["format_output"]);
    expect(llm.requests[1]?.messages.at(-1)?.content).toContain("It is 21 °C in Paris.");
  });

  test("an object the schema rejects is sent back to the model once, with zod's words", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined); // LlamaIndex's exec() logs the rejected input
    const llm = new ScriptedLLM([
      { text: "It is 21 °C in Paris." },
      { toolCalls: [{ name: "format_output", input: { city: "Paris", celsius: "21" } }] },
      { toolCalls: [{ name: "format_output", input: { city: "Paris", celsius: 21 } }] },
    ]);
    const result = await agent({ llm }).run("Weather in Paris?", { responseFormat: weatherSchema });
    expect(result.data.object).toEqual({ city: "Paris", celsius: 21 });
    expect(String(llm.requests[2]?.messages.at(-1)?.content)).toMatch(/does not match the schema[\s\S]*celsius/);
  });

  test("rejected twice: a StructuredOutputError saying what was wrong", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const wrong = { toolCalls: [{ name: "format_output", input: { city: 5, celsius: 21 } }] };
    const llm = new ScriptedLLM([{ text: "It is 21 °C in Paris." }, wrong, wrong]);
    const error = await agent({ llm })
      .run("Weather in Paris?", { responseFormat: weatherSchema })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect((error as StructuredOutputError).issues).toMatch(/city/);
  });
});

describe("hand-offs", () => {
  const llm = new ScriptedLLM([]);

  test("getAgents() lists handOff among the tools of each agent with canHandoffTo, and only theirs", () => {
    const add = tool({ name: "add", description: "x + y", parameters: z.object({ x: z.number(), y: z.number() }), execute: ({ x, y }) => x + y });
    const adder = agent({ name: "Adder", description: "Adds", tools: [add], llm });
    const desk = agent({ name: "Desk", description: "Routes", llm, canHandoffTo: [adder] });
    const agents = multiAgent({ agents: [desk, adder], rootAgent: desk });
    const tools = Object.fromEntries(agents.getAgents().map((a) => [a.name, a.tools.map((t) => t.metadata.name)]));
    expect(tools).toEqual({ Desk: ["handOff"], Adder: ["add"] });
    expect(agents.getAgents()[0]?.tools[0]?.metadata.description).toContain('{"Adder":"Adds"}');
  });

  test("the listed handOff, called outside a turn, says it works only in one", async () => {
    const a = new FunctionAgent({ name: "A", llm, canHandoffTo: ["B"] });
    const b = new FunctionAgent({ name: "B", llm });
    new AgentWorkflow({ agents: [a, b], rootAgent: a });
    const handOff = a.tools.find((t) => t.metadata.name === "handOff");
    await expect(Promise.resolve().then(() => handOff?.call({ toAgent: "B", reason: "r" }))).rejects.toThrow(/while its agent workflow runs a turn/);
  });

  test("an LLM without tool calls is refused when the agent is made", () => {
    const noTools = Object.assign(new ScriptedLLM([]), { supportToolCall: false });
    expect(() => new FunctionAgent({ llm: noTools })).toThrow(ConfigurationError);
  });
});

describe("agents handling a workflow's step", () => {
  const ticketEvent = workflowEvent<{ text: string }>();
  const triagedEvent = zodEvent(z.object({ team: z.enum(["billing", "tech"]) }), { debugLabel: "triaged" });

  test("fromWorkflowStep: a send_<debugLabel> tool per event, with the event's JSON Schema; calling it sends the event", async () => {
    const context = createWorkflow().createContext();
    const stepAgent = FunctionAgent.fromWorkflowStep({ workflowContext: context, results: [triagedEvent], instructions: "Triage.", llm: new ScriptedLLM([]) });
    const send = stepAgent.tools.find((t) => t.metadata.name === "send_triaged");
    expect(send?.metadata.description).toContain('"enum":["billing","tech"]');
    expect(stepAgent.systemPrompt).toContain("Triage.");
    const sent = context.stream.untilEvent(triagedEvent);
    expect(await send?.call({ eventData: { team: "tech" } })).toBe("Successfully sent a send_triaged event!");
    expect((await sent).data).toEqual({ team: "tech" });
  });

  test("agentHandler: the agent reads the event's data and sends the result event into the workflow", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "send_triaged", input: { eventData: { team: "billing" } } }] }, { text: "Sent to billing." }]);
    const workflow = createWorkflow();
    workflow.handle([ticketEvent], agentHandler({ instructions: "Send the ticket to the right team.", results: [triagedEvent], llm }));
    const { stream, sendEvent } = workflow.createContext();
    sendEvent(ticketEvent.with({ text: "I was charged twice." }));
    expect((await stream.untilEvent(triagedEvent)).data).toEqual({ team: "billing" });
    expect(llm.requests[0]?.messages.at(-1)?.content).toBe('Handle with this input data: {"text":"I was charged twice."}');
  });

  test("agentHandler: an agent that sends no result event fails the run, saying which tools it should have called", async () => {
    const workflow = createWorkflow();
    workflow.handle([ticketEvent], agentHandler({ instructions: "Triage.", results: [triagedEvent], llm: new ScriptedLLM([{ text: "Done." }]) }));
    const { stream, sendEvent } = workflow.createContext();
    sendEvent(ticketEvent.with({ text: "Hi" }));
    const error = await stream.untilEvent(triagedEvent).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowRuntimeError);
    expect(String(error)).toContain("send_triaged");
  });
});

test("a memory given to the workflow keeps the conversation across turns", async () => {
  const memory = createMemory();
  const llm = new ScriptedLLM([{ text: "Hello Ada." }, { text: "You are Ada." }]);
  const assistant = AgentWorkflow.fromTools({ llm, memory, systemPrompt: "Be brief." });
  await assistant.run("I am Ada.");
  const second = await assistant.run("Who am I?");
  expect(llm.requests[1]?.messages.map((m) => m.content)).toEqual(["Be brief.", "I am Ada.", "Hello Ada.", "Who am I?"]);
  expect(second.data.state?.memory).toBe(memory);
  expect((await memory.get()).map((m) => m.content)).toEqual(["I am Ada.", "Hello Ada.", "Who am I?", "You are Ada."]);
});
