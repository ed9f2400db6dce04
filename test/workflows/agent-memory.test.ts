import { createMemory } from "@llamaindex/core/memory";
import type { Memory } from "@llamaindex/core/memory";
import { describe, expect, it } from "vitest";
import { Context } from "../../src/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { MEMORY_KEY, appendAt } from "../../workflows/agent-memory.ts";
import type { Conversation } from "../../workflows/agent-memory.ts";

describe("appendAt: a step's messages reach memory once", () => {
  it("appends at the recorded size, and not again once memory is past it", async () => {
    const conversation: Conversation = { memory: createMemory([]), size: 0, history: [] };
    const results = [
      { role: "user" as const, content: "4444" },
      { role: "user" as const, content: "1386528" },
    ];
    const written = appendAt(conversation, 0, results);
    // Both are in memory before any await: a context saved now has both or neither.
    expect(conversation.size).toBe(2);
    expect((await conversation.memory.get()).map((m) => m.content)).toEqual(["4444", "1386528"]);
    await written;
    // The same step resumed from a save made after the write: it recorded size 0, memory has 2.
    expect(appendAt(conversation, 0, results)).toBe(false);
    expect((await conversation.memory.get()).map((m) => m.content)).toEqual(["4444", "1386528"]);
    expect(conversation.history.map((m) => m.content)).toEqual(["4444", "1386528"]);
  });
});

describe("the agent's memory", () => {
  it("gives each message a UUID and a date, as LlamaIndex's Memory does, before and after a save", async () => {
    const llm = new ScriptedLLM([{ text: "Hi Ada." }, { text: "Ada." }]);
    const agent = new FunctionCallingAgent({ llm });
    const ctx = new Context(agent);
    await agent.run({ input: "I am Ada." }, { ctx });
    const restored = Context.fromJSON(agent, JSON.parse(JSON.stringify(ctx.toJSON())));
    await agent.run({ input: "Who am I?" }, { ctx: restored });
    const messages = JSON.parse((await restored.store.get<Memory>(MEMORY_KEY)).snapshot()).messages as { id: string; createdAt: string; content: string }[];
    expect(messages.map((m) => m.content)).toEqual(["I am Ada.", "Hi Ada.", "Who am I?", "Ada."]);
    for (const message of messages) {
      expect(message.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(new Date(message.createdAt).getTime()).not.toBeNaN();
    }
    expect(new Set(messages.map((m) => m.id)).size).toBe(4);
  });

  it("takes a run's messages after the app cleared it, as it does before", async () => {
    const llm = new ScriptedLLM([{ text: "Hi Ada." }, { text: "I do not know." }]);
    const agent = new FunctionCallingAgent({ llm });
    const ctx = new Context(agent);
    await agent.run({ input: "I am Ada." }, { ctx });
    const memory = await ctx.store.get<Memory>(MEMORY_KEY);
    await memory.clear();
    await agent.run({ input: "Who am I?" }, { ctx });
    expect((await memory.get()).map((m) => m.content)).toEqual(["Who am I?", "I do not know."]);
    expect(llm.requests[1]?.messages.map((m) => m.content)).toEqual(["Who am I?"]);
  });

  it("restored from a saved context, has the agent's LLM, as a new one does", async () => {
    const llm = new ScriptedLLM([{ text: "Hi." }]);
    const agent = new FunctionCallingAgent({ llm });
    const ctx = new Context(agent);
    await agent.run({ input: "Hello" }, { ctx });
    const restored = Context.fromJSON(agent, JSON.parse(JSON.stringify(ctx.toJSON())));
    const llmOf = async (c: Context) => (await c.store.get<Memory>(MEMORY_KEY)) as unknown as { llm: unknown };
    expect((await llmOf(ctx)).llm).toBe(llm);
    expect((await llmOf(restored)).llm).toBe(llm);
  });
});
