import type { ChatMessage } from "@llamaindex/core/llms";
import type { Memory } from "@llamaindex/core/memory";
import { tool } from "@llamaindex/core/tools";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { FunctionOutputEvent, StreamEvent, ToolApprovalEvent, ToolApprovalRequestEvent, ToolCallEvent } from "../../events/index.ts";
import { Context, StopEvent, WorkflowTimeoutError } from "../../src/index.ts";
import { recentHistory, wellFormedHistory } from "../../src/llm/chat-history.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import type { ScriptedReply } from "../../src/llm/scripted-llm.ts";
import { annotateTool, tool as stepflowTool } from "../../src/tools/tool.ts";
import { AgentMaxIterationsError, FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { add, divide, multiply } from "../../workflows/tools/calculator.ts";
import { gate } from "../support/gate.ts";
import { emailBob } from "../support/email-agent.ts";

const calculatorScript = () =>
  new ScriptedLLM([
    { toolCalls: [{ id: "call_add", name: "add", input: { x: 2123, y: 2321 } }] },
    { toolCalls: [{ id: "call_mul", name: "multiply", input: { x: 4444, y: 312 } }] },
    { text: ["(2123 + 2321) * 312", " = ", "1386528."] },
  ]);

/** The tool messages of a request, as `id → content`. */
const toolResults = (messages: ChatMessage[]) =>
  messages.flatMap((m) => {
    const result = (m.options as { toolResult?: { id: string } } | undefined)?.toolResult;
    return result ? [[result.id, m.content]] : [];
  });

describe("FunctionCallingAgent: the notebook's scenarios", () => {
  it('answers "Hello!" without tools', async () => {
    const llm = new ScriptedLLM([{ text: "Hello! How can I help you today?" }]);
    const agent = new FunctionCallingAgent({ llm, tools: [add, multiply] });
    const { response, sources } = await agent.run({ input: "Hello!" });
    expect(response).toEqual({ role: "assistant", content: "Hello! How can I help you today?" });
    expect(sources).toEqual([]);
    expect(llm.requests[0]?.messages).toEqual([{ role: "user", content: "Hello!" }]);
    expect(llm.requests[0]?.tools).toEqual(["add", "multiply"]);
  });

  it("computes (2123 + 2321) * 312 with add then multiply", async () => {
    const llm = calculatorScript();
    const agent = new FunctionCallingAgent({ llm, tools: [add, multiply] });
    const { response, sources } = await agent.run({ input: "What is (2123 + 2321) * 312?" });
    expect(response.content).toBe("(2123 + 2321) * 312 = 1386528.");
    expect(sources.map((s) => [s.toolName, s.input, s.output, s.isError])).toEqual([
      ["add", { x: 2123, y: 2321 }, 4444, false],
      ["multiply", { x: 4444, y: 312 }, 1386528, false],
    ]);
    const third = llm.requests[2]?.messages ?? [];
    expect(third.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(third[1]?.options).toEqual({ toolCall: [{ id: "call_add", name: "add", input: { x: 2123, y: 2321 } }] });
    expect(toolResults(third)).toEqual([
      ["call_add", "4444"],
      ["call_mul", "1386528"],
    ]);
  });

  it("keeps the chat history across runs that share a context", async () => {
    const llm = new ScriptedLLM((request) => {
      const told = request.messages.some((m) => m.role === "user" && String(m.content).includes("My name is Logan"));
      const last = String(request.messages.at(-1)?.content);
      if (last.startsWith("What is my name")) return { text: told ? "Your name is Logan." : "I don't know your name." };
      return { text: "Nice to meet you, Logan!" };
    });
    const agent = new FunctionCallingAgent({ llm });
    const ctx = new Context(agent);
    await agent.run({ input: "Hello! My name is Logan." }, { ctx });
    const remembered = await agent.run({ input: "What is my name?" }, { ctx });
    expect(remembered.response.content).toBe("Your name is Logan.");
    expect(llm.requests[1]?.messages.map((m) => m.content)).toEqual(["Hello! My name is Logan.", "Nice to meet you, Logan!", "What is my name?"]);

    const fresh = await agent.run({ input: "What is my name?" });
    expect(fresh.response.content).toBe("I don't know your name.");
  });

  it("streams deltas that concatenate to the final content, then tool progress, then the StopEvent last", async () => {
    const agent = new FunctionCallingAgent({ llm: calculatorScript(), tools: [add, multiply] });
    const handler = agent.run({ input: "What is (2123 + 2321) * 312?" });
    const seen: string[] = [];
    let streamed = "";
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof StreamEvent) streamed += ev.delta;
      if (ev instanceof ToolCallEvent) seen.push(`call ${ev.toolCalls.map((c) => c.name).join(",")}`);
      if (ev instanceof FunctionOutputEvent) seen.push(`output ${ev.output.toolName}=${ev.output.content}`);
      if (ev instanceof StopEvent) seen.push("stop");
    }
    const { response } = await handler;
    expect(streamed).toBe(response.content);
    expect(seen).toEqual(["call add", "output add=4444", "call multiply", "output multiply=1386528", "stop"]);
  });
});

describe("FunctionCallingAgent: tool execution", () => {
  it("tells the model a tool does not exist and goes on", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ id: "c1", name: "launch_rocket", input: {} }] }, { text: "I can't do that." }]);
    const { response, sources } = await new FunctionCallingAgent({ llm, tools: [add, multiply] }).run({ input: "Launch it" });
    expect(response.content).toBe("I can't do that.");
    expect(sources[0]).toMatchObject({ isError: true, content: "Tool launch_rocket does not exist. Available tools: add, multiply." });
    expect(toolResults(llm.requests[1]?.messages ?? [])).toEqual([["c1", "Tool launch_rocket does not exist. Available tools: add, multiply."]]);
  });

  it("reports a throwing tool's error to the model", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ id: "c1", name: "divide", input: { x: 1, y: 0 } }] }, { text: "Division by zero." }]);
    await new FunctionCallingAgent({ llm, tools: [divide] }).run({ input: "1/0" });
    const [result] = toolResults(llm.requests[1]?.messages ?? []);
    expect(result).toEqual(["c1", "Encountered error in tool call: Cannot divide by zero: y must not be 0."]);
  });

  it("reports an async tool's rejection to the model, beside a tool that answered at once, in call order", async () => {
    const lookup = tool({
      name: "lookup",
      description: "Looks a user up (the service is down).",
      parameters: z.object({ id: z.number() }),
      execute: async () => {
        throw new Error("HR service unavailable (503)");
      },
    });
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { id: "c1", name: "lookup", input: { id: 7 } },
          { id: "c2", name: "add", input: { x: 1, y: 2 } },
        ],
      },
      { text: "The lookup failed; 1 + 2 = 3." },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [lookup, add] }).run({ input: "Look up 7 and add 1 + 2" });
    expect(sources.map((s) => [s.toolName, s.isError, s.content])).toEqual([
      ["lookup", true, "Encountered error in tool call: HR service unavailable (503)"],
      ["add", false, "3"],
    ]);
    expect(toolResults(llm.requests[1]?.messages ?? [])).toEqual([
      ["c1", "Encountered error in tool call: HR service unavailable (503)"],
      ["c2", "3"],
    ]);
  });

  it("does not run a tool whose arguments fail its zod schema, and tells the model which fields", async () => {
    let runs = 0;
    const counted = tool({
      name: "multiply",
      description: "Multiply two numbers.",
      parameters: z.object({ x: z.number(), y: z.number() }),
      execute: ({ x, y }) => {
        runs++;
        return x * y;
      },
    });
    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "c1", name: "multiply", input: { x: "4444", z: 1 } }] },
      { toolCalls: [{ id: "c2", name: "multiply", input: { x: 4444, y: 312 } }] },
      { text: "1386528" },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [counted] }).run({ input: "4444 * 312" });
    expect(runs).toBe(1);
    expect(sources[0]?.content).toBe(
      `Invalid arguments for tool multiply: x: must be a number, written without quotes (such as 4444), got "4444"; y: is required: send a number; "z" is not an argument of multiply, which takes x, y. The tool was not run; call it again with arguments that match its schema.`,
    );
    expect(sources[1]?.output).toBe(1386528);
  });

  it("runs the calls of one turn concurrently and keeps their results in call order", async () => {
    const bothStarted = gate();
    const slowMayFinish = gate();
    let started = 0;
    const waiter = (name: string, finish: () => Promise<void>) =>
      tool({
        name,
        description: `Waits, then answers ${name}.`,
        parameters: z.object({}),
        execute: async () => {
          if (++started === 2) bothStarted.open();
          await bothStarted.promise; // deadlocks (→ run timeout) if the calls ran one after the other
          await finish();
          return `${name} done`;
        },
      });
    const slow = waiter("slow", () => slowMayFinish.promise);
    const fast = waiter("fast", async () => {});
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { id: "a", name: "slow", input: {} },
          { id: "b", name: "fast", input: {} },
        ],
      },
      { text: "both done" },
    ]);
    const handler = new FunctionCallingAgent({ llm, tools: [slow, fast], timeout: 5 }).run({ input: "go" });
    const finished: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (!(ev instanceof FunctionOutputEvent)) continue;
      finished.push(ev.output.toolName);
      if (ev.output.toolName === "fast") slowMayFinish.open(); // slow finishes only after fast was reported
    }
    await handler;
    expect(finished).toEqual(["fast", "slow"]);
    expect(toolResults(llm.requests[1]?.messages ?? [])).toEqual([
      ["a", "slow done"],
      ["b", "fast done"],
    ]);
  });

  it("gives up on a tool call after toolTimeout and tells the model", async () => {
    const never = tool({ name: "hang", description: "Never answers.", parameters: z.object({}), execute: () => new Promise<string>(() => {}) });
    const llm = new ScriptedLLM([{ toolCalls: [{ id: "c1", name: "hang", input: {} }] }, { text: "The tool hung." }]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [never], toolTimeout: 0.05 }).run({ input: "hang" });
    expect(sources[0]?.content).toBe("Encountered error in tool call: hang did not finish within 0.05 seconds.");
  });

  it("fails with AgentMaxIterationsError when the model never stops calling tools", async () => {
    const llm = new ScriptedLLM(() => ({ toolCalls: [{ name: "add", input: { x: 1, y: 1 } }] }));
    const run = new FunctionCallingAgent({ llm, tools: [add], maxIterations: 3 }).run({ input: "loop" });
    await expect(run).rejects.toThrow(AgentMaxIterationsError);
    await expect(run).rejects.toThrow("FunctionCallingAgent stopped after 3 LLM calls without a final answer (maxIterations: 3).");
    expect(llm.requests).toHaveLength(3);
  });

  it("counts maxIterations per run: a second run on the same context gets the full allowance", async () => {
    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "c1", name: "add", input: { x: 1, y: 1 } }] },
      { toolCalls: [{ id: "c2", name: "add", input: { x: 2, y: 2 } }] },
      { text: "2 and 4" },
      { toolCalls: [{ id: "c3", name: "add", input: { x: 3, y: 3 } }] },
      { toolCalls: [{ id: "c4", name: "add", input: { x: 4, y: 4 } }] },
      { text: "6 and 8" },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools: [add], maxIterations: 3 });
    const ctx = new Context(agent);
    expect((await agent.run({ input: "1+1, 2+2" }, { ctx })).response.content).toBe("2 and 4");
    const second = await agent.run({ input: "3+3, 4+4" }, { ctx });
    expect(second.response.content).toBe("6 and 8");
    expect(second.sources.map((s) => s.content)).toEqual(["6", "8"]);
  });

  it("starts no timer for a tool that answers at once (the per-tool timeout costs only async tools)", async () => {
    const timers = vi.spyOn(globalThis, "setTimeout");
    try {
      const { response } = await new FunctionCallingAgent({ llm: calculatorScript(), tools: [add, multiply], timeout: null }).run({
        input: "What is (2123 + 2321) * 312?",
      });
      expect(response.content).toBe("(2123 + 2321) * 312 = 1386528.");
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
  });

  it("times out a run whose tool hangs, naming the step", async () => {
    const never = tool({ name: "hang", description: "Never answers.", parameters: z.object({}), execute: () => new Promise<string>(() => {}) });
    const llm = new ScriptedLLM([{ toolCalls: [{ id: "c1", name: "hang", input: {} }] }]);
    const run = new FunctionCallingAgent({ llm, tools: [never], timeout: 0.1 }).run({ input: "hang" });
    await expect(run).rejects.toThrow(WorkflowTimeoutError);
    await expect(run).rejects.toThrow("Active steps: handleToolCalls");
  });

  it("prints a readable trace with verbose", async () => {
    const lines: string[] = [];
    await new FunctionCallingAgent({ llm: calculatorScript(), tools: [add, multiply], verbose: true, log: (line) => lines.push(line) }).run({
      input: "What is (2123 + 2321) * 312?",
    });
    expect(lines).toContain('Invoking: `multiply` with `{"x":4444,"y":312}`');
    expect(lines).toContain("Got output: 1386528");
    expect(lines.indexOf("Running step handleToolCalls")).toBeLessThan(lines.indexOf('Invoking: `add` with `{"x":2123,"y":2321}`'));
  });
});

describe("FunctionCallingAgent: saved contexts", () => {
  it("a run restored while the model thinks asks it again, even when the user's input was an assistant message", async () => {
    const asked = gate();
    const llm = new ScriptedLLM([]);
    llm.chat = (async () => (asked.open(), new Promise(() => {}))) as unknown as typeof llm.chat;
    const first = new FunctionCallingAgent({ llm, tools: [] });
    const handler = first.run({ input: { role: "assistant", content: "OLD text given as input" } });
    await asked.promise;
    const saved = JSON.stringify(handler.ctx.toJSON());
    handler.cancel();
    await handler.catch(() => undefined);
    const model = new ScriptedLLM([{ text: "the model's answer" }]);
    const second = new FunctionCallingAgent({ llm: model, tools: [] });
    const { response } = await second.run(undefined, { ctx: Context.fromJSON(second, saved) });
    expect(response.content).toBe("the model's answer");
    expect(model.requests).toHaveLength(1);
  });

  it("a context saved as the tool calls stream (the reply already in memory) resumes without asking the model again", async () => {
    const first = new FunctionCallingAgent({ llm: new ScriptedLLM([{ toolCalls: [{ id: "call_add", name: "add", input: { x: 2, y: 2 } }] }]), tools: [add] });
    const handler = first.run({ input: "2 + 2?" });
    let saved = "";
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolCallEvent) {
        saved = JSON.stringify(handler.ctx.toJSON());
        break;
      }
    }
    handler.cancel();
    await handler.catch(() => undefined);
    expect(Object.keys(JSON.parse(saved).run.inFlight)).toEqual(["handleLlmInput"]);

    const llm = new ScriptedLLM([{ text: "4" }]);
    const second = new FunctionCallingAgent({ llm, tools: [add] });
    const ctx = Context.fromJSON(second, saved);
    const { response } = await second.run(undefined, { ctx });
    expect(response.content).toBe("4");
    expect(llm.requests).toHaveLength(1);
    const memory = await ctx.store.get<Memory>("memory");
    expect((await memory.get()).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("round-trips memory, sources and an in-flight tool call; a new agent finishes the run without repeating earlier calls", async () => {
    const toolStarted = gate();
    const blockedMultiply = tool({
      name: "multiply",
      description: "Multiply (blocks: the run is saved meanwhile).",
      parameters: z.object({ x: z.number(), y: z.number() }),
      execute: async () => {
        toolStarted.open();
        return new Promise<number>(() => {});
      },
    });
    const first = new FunctionCallingAgent({ llm: calculatorScript(), tools: [add, blockedMultiply] });
    const handler = first.run({ input: "What is (2123 + 2321) * 312?" });
    await toolStarted.promise;
    const saved = JSON.stringify(handler.ctx.toJSON());
    handler.cancel();
    await handler.catch(() => undefined);

    const json = JSON.parse(saved);
    expect(json.store.memory.$codec).toBe("llamaindex.Memory");
    expect(json.store.memory.value.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(json.store.sources.map((s: { toolName: string }) => s.toolName)).toEqual(["add"]);
    expect(json.run.inFlight.handleToolCalls[0].type).toBe("agent.ToolCallEvent");

    const llm = new ScriptedLLM([{ text: "(2123 + 2321) * 312 = 1386528." }]);
    const second = new FunctionCallingAgent({ llm, tools: [add, multiply] });
    const { response, sources } = await second.run(undefined, { ctx: Context.fromJSON(second, saved) });
    expect(response.content).toBe("(2123 + 2321) * 312 = 1386528.");
    expect(sources.map((s) => [s.toolName, s.output])).toEqual([
      ["add", 4444],
      ["multiply", 1386528],
    ]);
    expect(llm.requests).toHaveLength(1); // only the call after multiply: the first two LLM calls are not repeated
    expect(toolResults(llm.requests[0]?.messages ?? [])).toEqual([
      ["call_add", "4444"],
      ["call_mul", "1386528"],
    ]);
  });
});

describe("FunctionCallingAgent: the history it sends", () => {
  it("puts the system prompt first on every call without storing it", async () => {
    const llm = calculatorScript();
    await new FunctionCallingAgent({ llm, tools: [add, multiply], systemPrompt: "You are a calculator." }).run({ input: "What is (2123 + 2321) * 312?" });
    for (const request of llm.requests) expect(request.messages[0]).toEqual({ role: "system", content: "You are a calculator." });
    expect(llm.requests[2]?.messages.filter((m) => m.role === "system")).toHaveLength(1);
  });

  it("never starts with an orphan tool result when memory is trimmed to a small context window", async () => {
    const llm = calculatorScript();
    // ~40 tokens: Memory.getLLM keeps only the newest messages, which can begin with a tool result.
    Object.defineProperty(llm, "metadata", { value: { ...llm.metadata, contextWindow: 60 } });
    const agent = new FunctionCallingAgent({ llm, tools: [add, multiply] });
    await agent.run({ input: "What is (2123 + 2321) * 312? Please show each step of the computation in detail." });
    for (const request of llm.requests) {
      const first = request.messages[0];
      expect((first?.options as { toolResult?: unknown } | undefined)?.toolResult).toBeUndefined();
    }
  });

  it("sends on every call the newest messages of all of memory that fit the window, across runs", async () => {
    const replies = [
      { toolCalls: [{ id: "call_add", name: "add", input: { x: 2123, y: 2321 } }] },
      { toolCalls: [{ id: "call_mul", name: "multiply", input: { x: 4444, y: 312 } }] },
      { text: "The result is 1386528, which I computed with add and then multiply." },
    ];
    const llm = new ScriptedLLM((_request, index) => replies[index % 3] as (typeof replies)[number]);
    const contextWindow = 160;
    Object.defineProperty(llm, "metadata", { value: { ...llm.metadata, contextWindow } });
    const agent = new FunctionCallingAgent({ llm, tools: [add, multiply] });
    const ctx = new Context(agent);
    for (const input of ["What is (2123 + 2321) * 312?", "And again, please: (2123 + 2321) * 312?", "Once more, with every step shown."]) {
      await agent.run({ input }, { ctx });
    }
    // What Memory.getLLM-style trimming of the whole memory gives before each LLM call: the
    // memory up to that call's reply, trimmed to the window, without orphan tool results.
    const memory = await ctx.store.get<Memory>("memory");
    const all = await memory.get();
    const limit = Math.ceil(Math.ceil(contextWindow * 0.75) * 0.7);
    const replyAt = all.flatMap((message, index) => (message.role === "assistant" ? [index] : []));
    expect(replyAt).toHaveLength(9);
    expect(llm.requests).toHaveLength(9);
    replyAt.forEach((end, call) => {
      expect(llm.requests[call]?.messages).toEqual(wellFormedHistory(recentHistory(all.slice(0, end), limit)));
    });
    expect(llm.requests[8]?.messages.length).toBeLessThan(all.length - 1); // the window did trim
  });

  it("does not send a tool call without its results after a run failed mid-turn", async () => {
    let hang = true;
    const flaky = tool({
      name: "flaky",
      description: "Hangs the first time.",
      parameters: z.object({}),
      execute: () => (hang ? new Promise<string>(() => {}) : "ok"),
    });
    const llm = new ScriptedLLM([{ toolCalls: [{ id: "c1", name: "flaky", input: {} }] }, { text: "Second turn answer." }]);
    const agent = new FunctionCallingAgent({ llm, tools: [flaky], timeout: 0.1 });
    const ctx = new Context(agent);
    await expect(agent.run({ input: "first" }, { ctx })).rejects.toThrow(WorkflowTimeoutError);
    hang = false;
    await agent.run({ input: "second" }, { ctx });
    expect(llm.requests[1]?.messages).toEqual([
      { role: "user", content: "first" },
      { role: "user", content: "second" },
    ]);
  });
});

describe("FunctionCallingAgent: what reaches the model and memory", () => {
  it("enforces a stepflow tool()'s zod refinements: the model reads why, and the tool does not run", async () => {
    const sent: number[] = [];
    const transfer = stepflowTool({
      name: "transfer",
      description: "Send money.",
      parameters: z.object({ to: z.string(), amount: z.number().refine((n) => n > 0, "must be positive") }),
      execute: ({ amount }) => (sent.push(amount), `sent ${amount}`),
    });
    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "t1", name: "transfer", input: { to: "bob", amount: -500 } }] },
      { text: "I cannot send a negative amount." },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [transfer] }).run({ input: "Send bob -500" });
    expect(sent).toEqual([]);
    expect(sources[0]).toMatchObject({
      isError: true,
      content: "Invalid arguments for tool transfer: amount: must be positive. The tool was not run; call it again with arguments that match its schema.",
    });
  });

  it("keeps the zod check through bind(), and reports a check that throws as a tool error", async () => {
    const sent: string[] = [];
    const transfer = stepflowTool({
      name: "transfer",
      description: "Send money.",
      parameters: z.object({ amount: z.number().refine((n) => n > 0, "must be positive") }),
      execute: ({ amount }: { amount: number }, account?: { id: string }) => (sent.push(`${amount} from ${account?.id}`), "sent"),
    });
    const lookup = stepflowTool({
      name: "lookup",
      description: "Look up a name.",
      parameters: z.object({
        name: z.string().refine(() => {
          throw new Error("lookup service down");
        }),
      }),
      execute: () => "found",
    });
    const bound = transfer.bind({ id: "acct-1" });
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { id: "t", name: "transfer", input: { amount: -500 } },
          { id: "l", name: "lookup", input: { name: "bob" } },
        ],
      },
      { text: "done" },
    ]);
    await new FunctionCallingAgent({ llm, tools: [bound, lookup] }).run({ input: "go" });
    expect(sent).toEqual([]);
    expect(toolResults(llm.requests[1]?.messages ?? [])).toEqual([
      ["t", "Invalid arguments for tool transfer: amount: must be positive. The tool was not run; call it again with arguments that match its schema."],
      ["l", "Encountered error in tool call: lookup service down"],
    ]);
  });

  it("gives the model readable text for any result, and keeps sources saveable", async () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const results: Record<string, unknown> = {
      nothing: undefined,
      infinite: 1e200 * 1e200,
      big: 2n ** 70n,
      cycle,
      date: { at: new Date(0) },
      collections: { byName: new Map([["ada", 1]]), byPoint: new Map([[{ x: 1 }, "a"]]), tags: new Set(["x", "y"]), problem: new RangeError("too far") },
    };
    const tools = Object.keys(results).map((name) =>
      stepflowTool({ name, description: name, parameters: z.object({}), execute: () => results[name] as never }),
    );
    const thrower = stepflowTool({
      name: "thrower",
      description: "throws",
      parameters: z.object({}),
      execute: () => {
        throw { code: 42 };
      },
    });
    const llm = new ScriptedLLM([{ toolCalls: [...Object.keys(results), "thrower"].map((name) => ({ id: name, name, input: {} })) }, { text: "done" }]);
    const agent = new FunctionCallingAgent({ llm, tools: [...tools, thrower] });
    const ctx = new Context(agent);
    await agent.run({ input: "go" }, { ctx });
    expect(toolResults(llm.requests[1]?.messages ?? [])).toEqual([
      ["nothing", "null"],
      ["infinite", "Infinity"],
      ["big", "1180591620717411303424"],
      ["cycle", "Encountered error in tool call: cycle returned a value that cannot be sent to the model as JSON (Converting circular structure to JSON)."],
      ["date", '{"at":"1970-01-01T00:00:00.000Z"}'],
      ["collections", '{"byName":{"ada":1},"byPoint":[[{"x":1},"a"]],"tags":["x","y"],"problem":{"name":"RangeError","message":"too far"}}'],
      ["thrower", 'Encountered error in tool call: {"code":42}'],
    ]);
    const saved = JSON.parse(JSON.stringify(ctx.toJSON()));
    expect(saved.store.sources.map((s: { output: unknown }) => s.output).slice(0, 3)).toEqual([null, "Infinity", "1180591620717411303424"]);
  });

  it("leaves no cut-off reply in memory when the run is cancelled mid-stream", async () => {
    const more = gate();
    const llm = new ScriptedLLM([{ text: "unused" }]);
    // A stream that, like the OpenAI SDK's on abort, simply ends after the cancel.
    llm.chat = (async () =>
      (async function* () {
        yield { delta: "Once upon ", raw: null };
        await more.promise;
      })()) as unknown as typeof llm.chat;
    const agent = new FunctionCallingAgent({ llm, tools: [] });
    const ctx = new Context(agent);
    const handler = agent.run({ input: "tell me a story" }, { ctx });
    for await (const ev of handler.streamEvents()) if (ev instanceof StreamEvent) break;
    handler.cancel();
    more.open();
    await expect(handler).rejects.toThrow("The run was cancelled.");
    const memory = await ctx.store.get<Memory>("memory");
    expect((await memory.get()).map((m) => [m.role, m.content])).toEqual([["user", "tell me a story"]]);
  });

  it("sends the question even when it alone is over the history budget", async () => {
    const llm = new ScriptedLLM([{ text: "That is long." }], { contextWindow: 200 });
    const agent = new FunctionCallingAgent({ llm, tools: [], systemPrompt: "Be brief." });
    const question = `Summarise: ${"lorem ipsum ".repeat(100)}`;
    const ctx = new Context(agent);
    await agent.run({ input: "Hi" }, { ctx });
    await expect(agent.run({ input: question }, { ctx })).rejects.toThrow(); // the script has one reply: the request is what matters
    expect(llm.requests[1]?.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: question },
    ]);
  });

  it("refuses a toolTimeout that is not a finite number of seconds > 0, and input that is not a message", async () => {
    const llm = new ScriptedLLM([]);
    expect(() => new FunctionCallingAgent({ llm, toolTimeout: Infinity })).toThrow(
      "toolTimeout is in seconds and must be a finite number > 0 (the default is 60), got Infinity.",
    );
    await expect(new FunctionCallingAgent({ llm }).run({ input: { content: "hi" } as never })).rejects.toThrow(
      'FunctionCallingAgent.run takes { input: "your message" } or { input: { role: "user", content } } (a LlamaIndex ChatMessage); got input {"content":"hi"}.',
    );
  });
});

describe("FunctionCallingAgent: resuming a turn saved mid-way", () => {
  it("does not run again the tool calls that had finished, and records each result once", async () => {
    const emails: string[] = [];
    const lookupStarted = gate();
    const sendEmail = stepflowTool({
      name: "send_email",
      description: "Send an email.",
      parameters: z.object({ to: z.string() }),
      execute: ({ to }) => (emails.push(to), "sent"),
    });
    const blockedLookup = stepflowTool({
      name: "lookup",
      description: "Look up (blocks).",
      parameters: z.object({ q: z.string() }),
      execute: async () => (lookupStarted.open(), new Promise<string>(() => {})),
    });
    const calls: ScriptedReply = {
      toolCalls: [
        { id: "e1", name: "send_email", input: { to: "bob" } },
        { id: "l1", name: "lookup", input: { q: "bob" } },
      ],
    };
    const first = new FunctionCallingAgent({ llm: new ScriptedLLM([calls]), tools: [sendEmail, blockedLookup] });
    const handler = first.run({ input: "Email bob and look him up" });
    await lookupStarted.promise;
    const saved = JSON.stringify(handler.ctx.toJSON());
    handler.cancel();
    await handler.catch(() => undefined);
    expect(emails).toEqual(["bob"]);

    // A lookup only reads: cut short, it is made again (an unannotated tool would not be: tool-repeat-policy.test.ts).
    const lookup = annotateTool(
      stepflowTool({ name: "lookup", description: "Look up.", parameters: z.object({ q: z.string() }), execute: ({ q }) => `${q} is in HR` }),
      { readOnlyHint: true },
    );
    const llm = new ScriptedLLM([{ text: "Emailed bob; he is in HR." }]);
    const second = new FunctionCallingAgent({ llm, tools: [sendEmail, lookup] });
    const { sources } = await second.run(undefined, { ctx: Context.fromJSON(second, saved) });
    expect(emails).toEqual(["bob"]); // not sent twice
    expect(sources.map((s) => [s.toolName, s.content])).toEqual([
      ["send_email", "sent"],
      ["lookup", "bob is in HR"],
    ]);
    expect(toolResults(llm.requests[0]?.messages ?? [])).toEqual([
      ["e1", "sent"],
      ["l1", "bob is in HR"],
    ]);
  });
});

describe("FunctionCallingAgent: saved at any moment", () => {
  const microtasks = async (n: number) => {
    for (let i = 0; i < n; i++) await Promise.resolve();
  };
  /** Memory's messages as short lines, to count duplicates. */
  const lines = (messages: ChatMessage[]) =>
    messages.map((m) => `${m.role}:${String(m.content)}:${JSON.stringify((m.options as { toolResult?: { id: string } } | undefined)?.toolResult?.id ?? "")}`);

  // Each case saves a run after 0, 1, 2, … microtasks from one point, so whatever the engine's
  // scheduling, every moment of the window is tried; restoring must neither repeat nor lose anything.
  it("a save at any microtask of a turn resumes without a second user message, a second tool run or a lost result", async () => {
    for (let wait = 0; wait <= 60; wait++) {
      const { emails, sendEmail, handler } = emailBob();
      await microtasks(wait);
      const saved = handler.ctx.toJSON();
      handler.cancel();
      await handler.catch(() => undefined);
      // The model as before: it calls the tool, and answers once it has the result.
      const model = new ScriptedLLM((request) =>
        request.messages.at(-1)?.role === "user" && request.messages.at(-1)?.options
          ? { text: "Sent." }
          : { toolCalls: [{ id: "e1", name: "send_email", input: { to: "bob" } }] },
      );
      const second = new FunctionCallingAgent({ llm: model, tools: [sendEmail] });
      const ctx = Context.fromJSON(second, JSON.stringify(saved));
      if (!saved.running) continue; // saved before the run began or after it ended: nothing to resume
      await second.run(undefined, { ctx });
      const memory = lines(await (await ctx.store.get<Memory>("memory")).get());
      expect({ wait, emails, memory }).toEqual({
        wait,
        emails: ["bob"],
        memory: ['user:Email bob:""', 'assistant::""', 'user:sent:"e1"', 'assistant:Sent.:""'],
      });
    }
  });

  it("a cancel at any microtask of a turn starts no tool afterwards", async () => {
    for (let wait = 0; wait <= 40; wait++) {
      const { emails, handler } = emailBob();
      await microtasks(wait);
      const before = emails.length;
      handler.cancel();
      await handler.catch(() => undefined);
      await microtasks(20);
      expect({ wait, emails: emails.length }).toEqual({ wait, emails: before });
    }
  });
});

describe("FunctionCallingAgent: tool calls a human must approve", () => {
  /** An HR API's tools: looking people up is free, firing them needs a human's yes. */
  const hr = () => {
    const fired: number[] = [];
    const lookups: string[] = [];
    const findEmployee = stepflowTool({
      name: "find_employee",
      description: "Find an employee by last name.",
      parameters: z.object({ lastName: z.string() }),
      execute: ({ lastName }) => {
        lookups.push(lastName);
        return { id: 7, name: `Michael ${lastName}` };
      },
    });
    const fireEmployee = stepflowTool({
      name: "fire_employee",
      description: "Remove an employee.",
      parameters: z.object({ id: z.number() }),
      execute: ({ id }) => {
        fired.push(id);
        return `Employee ${id} removed.`;
      },
    });
    return { fired, lookups, tools: [findEmployee, fireEmployee] };
  };
  const fireLawson = () =>
    new ScriptedLLM([
      {
        toolCalls: [
          { id: "call_find", name: "find_employee", input: { lastName: "Lawson" } },
          { id: "call_fire", name: "fire_employee", input: { id: 7 } },
        ],
      },
      { text: "Done." },
    ]);
  type Answer = Omit<ConstructorParameters<typeof ToolApprovalEvent>[0], "approvalId">;
  /** Runs to the end, answering each request with `answer(request)`; returns the requests' prefixes. */
  async function answering(handler: ReturnType<FunctionCallingAgent["run"]>, answer: (request: ToolApprovalRequestEvent) => Answer) {
    const asked: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        asked.push(ev.prefix);
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, ...answer(ev) }));
      }
    }
    return asked;
  }
  /** Runs until the first request, saves the context there and cancels the run. */
  async function saveAtFirstRequest(handler: ReturnType<FunctionCallingAgent["run"]>): Promise<{ saved: string; request: ToolApprovalRequestEvent }> {
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        const saved = JSON.stringify(handler.ctx.toJSON());
        handler.cancel();
        await handler.catch(() => undefined);
        return { saved, request: ev };
      }
    }
    throw new Error("the run asked for no approval");
  }

  it("asks before running a call that needs approval, runs the others meanwhile, and runs it once approved", async () => {
    const { fired, lookups, tools } = hr();
    const agent = new FunctionCallingAgent({ llm: fireLawson(), tools, needsApproval: ["fire_employee"] });
    const handler = agent.run({ input: "Fire Lawson" });
    const asked = await answering(handler, () => {
      expect({ fired, lookups }).toEqual({ fired: [], lookups: ["Lawson"] }); // the lookup ran; nothing fired yet
      return { approved: true };
    });
    const { sources } = await handler;
    expect(asked).toEqual(['Run fire_employee with {"id":7}? (yes/no)']);
    expect({ fired, lookups }).toEqual({ fired: [7], lookups: ["Lawson"] });
    expect(sources.map((s) => s.content)).toEqual(['{"id":7,"name":"Michael Lawson"}', "Employee 7 removed."]);
  });

  it("tells the model a call was not approved, with the reason, and does not run it", async () => {
    const { fired, tools } = hr();
    const llm = fireLawson();
    const agent = new FunctionCallingAgent({ llm, tools, needsApproval: (call) => call.name.startsWith("fire_") });
    const handler = agent.run({ input: "Fire Lawson" });
    await answering(handler, () => ({ approved: false, reason: "Ask HR first." }));
    const { sources } = await handler;
    expect(fired).toEqual([]);
    expect(toolResults(llm.requests[1]?.messages ?? [])).toEqual([
      ["call_find", '{"id":7,"name":"Michael Lawson"}'],
      ["call_fire", "The user did not approve this call to fire_employee, so it was not run. The reason given: Ask HR first."],
    ]);
    expect(sources[1]?.isError).toBe(true);
  });

  it("continues a run saved while it waited, in another process: the finished call is not repeated, and an answer sent first is not asked again", async () => {
    const first = hr();
    const { saved, request } = await saveAtFirstRequest(
      new FunctionCallingAgent({ llm: fireLawson(), tools: first.tools, needsApproval: ["fire_employee"] }).run({ input: "Fire Lawson" }),
    );
    expect(first).toMatchObject({ fired: [], lookups: ["Lawson"] });

    // Days later, another process: the same agent, the saved context, and the answer to the saved request.
    const later = hr();
    const llm = new ScriptedLLM([{ text: "Lawson has been removed." }]);
    const again = new FunctionCallingAgent({ llm, tools: later.tools, needsApproval: ["fire_employee"] });
    const resumed = again.run(undefined, { ctx: Context.fromJSON(again, saved) });
    resumed.ctx.sendEvent(new ToolApprovalEvent({ approvalId: request.approvalId, approved: true }));
    const askedAgain = await answering(resumed, () => ({ approved: false }));
    const { response, sources } = await resumed;
    expect(askedAgain).toEqual([]);
    expect(response.content).toBe("Lawson has been removed.");
    expect(later).toMatchObject({ fired: [7], lookups: [] }); // the lookup's saved result was reused
    expect(sources.map((s) => s.toolName)).toEqual(["find_employee", "fire_employee"]);
  });

  it("keeps an answer given before the save, and asks again only what is unanswered, even of an agent without needsApproval", async () => {
    const { fired, tools } = hr();
    const twoFirings = () =>
      new ScriptedLLM([
        {
          toolCalls: [
            { id: "a", name: "fire_employee", input: { id: 1 } },
            { id: "b", name: "fire_employee", input: { id: 2 } },
          ],
        },
        { text: "Done." },
      ]);
    const handler = new FunctionCallingAgent({ llm: twoFirings(), tools, needsApproval: ["fire_employee"] }).run({ input: "Fire 1 and 2" });
    let saved = "";
    const requests: ToolApprovalRequestEvent[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent && requests.push(ev) === 2) {
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: false })); // b: no
      }
      if (ev instanceof FunctionOutputEvent && ev.output.toolCallId === "b") {
        saved = JSON.stringify(handler.ctx.toJSON()); // a still waits
        handler.cancel();
      }
    }
    await handler.catch(() => undefined);
    // Restored into an agent that asks for nothing: a call already put to a human still waits for one.
    const plain = new FunctionCallingAgent({ llm: new ScriptedLLM([{ text: "Done." }]), tools });
    const resumed = plain.run(undefined, { ctx: Context.fromJSON(plain, saved) });
    const asked = await answering(resumed, () => ({ approved: true }));
    const { sources } = await resumed;
    expect(asked).toEqual(['Run fire_employee with {"id":1}? (yes/no)']);
    expect(fired).toEqual([1]);
    expect(sources.map((s) => s.isError)).toEqual([false, true]);
  });

  it("never lets a second or late answer approve another call, even one the model gives the same id", async () => {
    const { fired, tools } = hr();
    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "call_1", name: "fire_employee", input: { id: 1 } }] },
      { toolCalls: [{ id: "call_1", name: "fire_employee", input: { id: 99 } }] },
      { text: "Done." },
    ]);
    const handler = new FunctionCallingAgent({ llm, tools, needsApproval: ["fire_employee"] }).run({ input: "Fire 1" });
    let requests = 0;
    const asked = await answering(handler, (request) => {
      if (++requests === 1) handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: request.approvalId, approved: true })); // a double click
      return { approved: requests === 1 };
    });
    await handler;
    expect(asked).toEqual(['Run fire_employee with {"id":1}? (yes/no)', 'Run fire_employee with {"id":99}? (yes/no)']);
    expect(fired).toEqual([1]);
  });

  it("leaves nothing from a run cancelled mid-approval that could approve a later run's call", async () => {
    const { fired, tools } = hr();
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { id: "call_1", name: "fire_employee", input: { id: 1 } },
          { id: "call_2", name: "fire_employee", input: { id: 2 } },
        ],
      },
      { toolCalls: [{ id: "call_1", name: "fire_employee", input: { id: 99 } }] },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools, needsApproval: ["fire_employee"] });
    const ctx = new Context(agent);
    const first = agent.run({ input: "Fire 1 and 2" }, { ctx });
    for await (const ev of first.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent && ev.toolCall.id === "call_1")
        first.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
      if (ev instanceof FunctionOutputEvent) first.cancel(); // call_1 ran; call_2 still waits
    }
    await first.catch(() => undefined);
    // The next run on that context, saved as the model calls "call_1" again, and restored.
    const second = agent.run({ input: "Now fire 99" }, { ctx });
    let saved = "";
    for await (const ev of second.streamEvents()) {
      if (ev instanceof ToolCallEvent) {
        saved = JSON.stringify(second.ctx.toJSON());
        second.cancel();
      }
    }
    await second.catch(() => undefined);
    const again = new FunctionCallingAgent({ llm: new ScriptedLLM([{ text: "Not fired." }]), tools, needsApproval: ["fire_employee"] });
    const resumed = again.run(undefined, { ctx: Context.fromJSON(again, saved) });
    expect(await answering(resumed, () => ({ approved: false }))).toEqual(['Run fire_employee with {"id":99}? (yes/no)']);
    await resumed;
    expect(fired).toEqual([1]);
  });

  it("does not put a call that cannot run to a human: the model is told what is wrong", async () => {
    const { fired, tools } = hr();
    const llm = new ScriptedLLM([{ toolCalls: [{ id: "c1", name: "fire_employee", input: { id: "seven" } }] }, { text: "Sorry." }]);
    const handler = new FunctionCallingAgent({ llm, tools, needsApproval: ["fire_employee"] }).run({ input: "Fire 7" });
    expect(await answering(handler, () => ({ approved: true }))).toEqual([]);
    await handler;
    expect(fired).toEqual([]);
    expect(String(toolResults(llm.requests[1]?.messages ?? [])[0]?.[1])).toMatch(/^Invalid arguments for tool fire_employee: id: /);
  });

  it("says what a run that timed out was waiting for", async () => {
    const { tools } = hr();
    const handler = new FunctionCallingAgent({ llm: fireLawson(), tools, needsApproval: ["fire_employee"], timeout: 1 }).run({ input: "Fire Lawson" });
    let approvalId = "";
    for await (const ev of handler.streamEvents()) if (ev instanceof ToolApprovalRequestEvent) approvalId = ev.approvalId;
    await expect(handler).rejects.toThrow(
      `Workflow "FunctionCallingAgent" timed out after 1 seconds. Active steps: handleToolCalls. Waiting for: agent.ToolApprovalEvent with {"approvalId":"${approvalId}"} (send it with handler.ctx.sendEvent).`,
    );
  });

  it("refuses answers and options it cannot use, saying what it takes", async () => {
    const { tools } = hr();
    expect(() => new ToolApprovalEvent({ approvalId: "x", approved: "yes" as unknown as boolean })).toThrow(
      expect.objectContaining({ name: "ConfigurationError", option: "approved", received: "yes" }),
    );
    expect(() => new ToolApprovalEvent({ approvalId: "x", approved: "yes" as unknown as boolean })).toThrow(
      'ToolApprovalEvent takes { approvalId, approved, reason? }: the approvalId of the ToolApprovalRequestEvent answered, approved true or false, and an optional reason text; got {"approvalId":"x","approved":"yes"}.',
    );
    expect(() => new FunctionCallingAgent({ llm: fireLawson(), tools, needsApproval: ["fire_employe"] })).toThrow(
      'needsApproval names "fire_employe", not among the agent\'s tools (find_employee, fire_employee). Check the spelling, or add the tool.',
    );
    const asyncTest = new FunctionCallingAgent({ llm: fireLawson(), tools, needsApproval: (async () => true) as unknown as () => boolean });
    await expect(asyncTest.run({ input: "Fire Lawson" })).rejects.toThrow(
      "needsApproval returned a promise for the call to find_employee; it must return true or false at once, from the call's name and arguments.",
    );
    const throwing = new FunctionCallingAgent({
      llm: fireLawson(),
      tools,
      needsApproval: () => {
        throw new Error("no policy for find_employee");
      },
    });
    await expect(throwing.run({ input: "Fire Lawson" })).rejects.toThrow("needsApproval threw for the call to find_employee: no policy for find_employee");
  });
});
