import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../../events/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { runToolCall, toolCallProblem } from "../../src/tools/tool-calls.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

// Adapters such as @llamaindex/anthropic stream each call's arguments as a JSON string
// (LlamaIndex's PartialToolCall): the agent must run such calls as if they were objects.
const add = tool({
  name: "add",
  description: "Add two numbers.",
  parameters: z.object({ x: z.number(), y: z.number() }),
  execute: ({ x, y }) => x + y,
});

describe("tool-call arguments sent as a JSON string", () => {
  it("are parsed: the tool runs and the sources and memory hold the object", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ id: "c1", name: "add", input: '{"x":2123,"y":2321}' }] }, { text: "4444" }]);
    const { response, sources } = await new FunctionCallingAgent({ llm, tools: [add] }).run({ input: "2123 + 2321?" });
    expect(response.content).toBe("4444");
    expect(sources).toMatchObject([{ toolName: "add", input: { x: 2123, y: 2321 }, content: "4444", isError: false }]);
    const call = (llm.requests[1]?.messages[1]?.options as { toolCall: { input: unknown }[] }).toolCall[0];
    expect(call?.input).toEqual({ x: 2123, y: 2321 });
  });

  it("are run by runToolCall and pass toolCallProblem, for callers that run calls themselves", async () => {
    const call = { id: "c1", name: "add", input: '{"x":1,"y":2}' } as unknown as Parameters<typeof runToolCall>[0];
    expect(toolCallProblem(call, [add])).toBeUndefined();
    expect(await runToolCall(call, [add])).toMatchObject({ input: { x: 1, y: 2 }, content: "3", isError: false });
  });

  it("that are not a JSON object go back to the model as the error it can correct", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ id: "c1", name: "add", input: '{"x":2123,' }] }, { text: "Sorry." }]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [add] }).run({ input: "2123 + 2321?" });
    expect(sources[0]?.isError).toBe(true);
    // After "they are not JSON" comes V8's own reason, whose wording changes with Node's version.
    expect(sources[0]?.content).toMatch(
      /^Invalid arguments for tool add: they are not JSON \(.+\), got "\{\\"x\\":2123,"\. The tool was not run; call it again with arguments that match its schema\.$/,
    );
    expect(llm.requests[1]?.messages.at(-1)?.content).toBe(sources[0]?.content);
  });

  it("that are JSON with text after it, in a code fence, or pages long are refused saying where and why, quoting a bounded part", async () => {
    const ran: unknown[] = [];
    const sum = tool({
      name: "add",
      description: "Add.",
      parameters: z.object({ x: z.number(), y: z.number() }),
      execute: (args) => (ran.push(args), args.x + args.y),
    });
    const refusal = async (input: string) =>
      (await runToolCall({ id: "c", name: "add", input } as unknown as Parameters<typeof runToolCall>[0], [sum])).content;
    expect(await refusal('{"x":1,"y":2} I added them.')).toMatch(
      /^Invalid arguments for tool add: they are not JSON \(.*after JSON at position 14.*\), got "\{.*The tool was not run/,
    );
    expect(await refusal('```json\n{"x":1,"y":2}\n```')).toMatch(
      /^Invalid arguments for tool add: they are not JSON \(.*\); send the JSON object alone, without a code fence, got "```json/,
    );
    expect(await refusal("[1, 2]")).toMatch(/^Invalid arguments for tool add: expected a JSON object, got "\[1, 2\]"\. /);
    const pages = await refusal(`{"x": ${"1".repeat(100_000)}`);
    expect(pages).toContain("(100006 characters)");
    expect(pages.length).toBeLessThan(600);
    expect(ran).toEqual([]);
  });

  it('that are "" call a tool without parameters with none, and tell a tool with some what it lacks', async () => {
    const now = tool({ name: "now", description: "The time.", parameters: z.object({}), execute: () => "12:00" });
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { id: "c1", name: "now", input: "" },
          { id: "c2", name: "add", input: " " },
        ],
      },
      { text: "It is 12:00." },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [now, add] }).run({ input: "Time?" });
    expect(sources.map((s) => [s.input, s.content])).toEqual([
      [{}, "12:00"],
      [{}, expect.stringMatching(/^Invalid arguments for tool add: x: .*; y: .*The tool was not run/)],
    ]);
    const calls = (llm.requests[1]?.messages[1]?.options as { toolCall: { input: unknown }[] }).toolCall;
    expect(calls.map((call) => call.input)).toEqual([{}, {}]);
  });

  it("are put to a human by needsApproval, which reads them as an object, and run once approved", async () => {
    const fired: number[] = [];
    const fire = tool({
      name: "fire_employee",
      description: "Remove an employee.",
      parameters: z.object({ id: z.number() }),
      execute: ({ id }) => (fired.push(id), `Employee ${id} removed.`),
    });
    const llm = new ScriptedLLM([{ toolCalls: [{ id: "c1", name: "fire_employee", input: '{"id":7}' }] }, { text: "Done." }]);
    const agent = new FunctionCallingAgent({ llm, tools: [fire], needsApproval: (call) => (call.input as { id?: unknown }).id === 7 });
    const handler = agent.run({ input: "Fire employee 7" });
    const asked: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        asked.push(ev.prefix);
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
      }
    }
    await handler;
    expect(asked).toEqual(['Run fire_employee with {"id":7}? (yes/no)']);
    expect(fired).toEqual([7]);
  });
});
