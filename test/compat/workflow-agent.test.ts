/**
 * `agent()` of stepflow/compat/workflow: upstream's event names, in upstream's order, from a
 * run of stepflow's FunctionCallingAgent; an unknown tool and a timeout end as they should.
 */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { WorkflowTimeoutError } from "../../src/index.ts";
import { tool } from "../../src/tools/tool.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import {
  agent,
  agentInputEvent,
  agentOutputEvent,
  agentSetupEvent,
  agentStepEvent,
  agentStreamEvent,
  agentToolCallEvent,
  agentToolCallResultEvent,
  eventSource,
  startAgentEvent,
  stopAgentEvent,
  toolCallsEvent,
  type AnyWorkflowEventData,
} from "../../src/compat/workflow/index.ts";

const operands = z.object({ x: z.number(), y: z.number() });
const add = tool({ name: "add", description: "x + y", parameters: operands, execute: ({ x, y }) => x + y });
const multiply = tool({ name: "multiply", description: "x * y", parameters: operands, execute: ({ x, y }) => x * y });

describe("agent()", () => {
  test("streams upstream's events: input, setup, step, output with tool calls, each call and result, deltas, output, stop", async () => {
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { name: "add", input: { x: 2, y: 3 } },
          { name: "multiply", input: { x: 4, y: 5 } },
        ],
      },
      { text: ["5 and ", "20."] },
    ]);
    const math = agent({ llm, tools: [add, multiply], systemPrompt: "You do arithmetic." });
    const events: AnyWorkflowEventData[] = await math.runStream("2 + 3 and 4 * 5?").toArray();
    const names = events.map((e) => eventSource(e));
    expect(names.slice(0, 6)).toEqual([startAgentEvent, agentInputEvent, agentSetupEvent, agentStepEvent, agentOutputEvent, toolCallsEvent]);
    expect(names.filter((n) => n === agentToolCallEvent)).toHaveLength(2);
    const results = events.filter((e) => agentToolCallResultEvent.include(e)).map((e) => [e.data.toolName, e.data.toolOutput.result]);
    expect(results.sort()).toEqual([
      ["add", "5"],
      ["multiply", "20"],
    ]);
    expect(events.filter((e) => agentStreamEvent.include(e)).map((e) => e.data.delta)).toEqual(["5 and ", "20."]);
    expect(names.slice(-2)).toEqual([agentOutputEvent, stopAgentEvent]);
    expect(events.at(-1)?.data.result).toBe("5 and 20.");
    expect(llm.requests[0]?.messages[0]).toMatchObject({ role: "system", content: "You do arithmetic." });
  });

  test("run() resolves to the stop event; chat history reaches the model", async () => {
    const llm = new ScriptedLLM([{ text: "Your name is Ada." }]);
    const result = await agent({ llm }).run("What is my name?", {
      chatHistory: [
        { role: "user", content: "I am Ada." },
        { role: "assistant", content: "Hello Ada." },
      ],
    });
    expect(stopAgentEvent.include(result) && result.data.result).toBe("Your name is Ada.");
    // Without a systemPrompt, upstream's default one comes first.
    expect(llm.requests[0]?.messages.map((m) => m.content)).toEqual([
      "You are a helpful assistant. Use the provided tools to answer questions.",
      "I am Ada.",
      "Hello Ada.",
      "What is my name?",
    ]);
  });

  test("a call of an unknown tool is reported to the model; the run goes on (upstream's crashes the process)", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "launch_rockets", input: {} }] }, { text: "I cannot do that." }]);
    const events: AnyWorkflowEventData[] = await agent({ llm, tools: [add] })
      .runStream("Launch!")
      .toArray();
    const result = events.find((e) => agentToolCallResultEvent.include(e));
    expect(result?.data.toolOutput.isError).toBe(true);
    expect(events.at(-1)?.data.result).toBe("I cannot do that.");
  });

  test("timeout fires: a tool that never returns fails the run with WorkflowTimeoutError (upstream's agent ignores timeout)", async () => {
    const hang = tool({ name: "hang", description: "never returns", parameters: z.object({}), execute: () => new Promise<string>(() => {}) });
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "hang", input: {} }] }, { text: "done" }]);
    await expect(agent({ llm, tools: [hang], timeout: 0.05 }).run("Go")).rejects.toBeInstanceOf(WorkflowTimeoutError);
  });
});
