import { createMemory } from "@llamaindex/core/memory";
import { describe, expect, it } from "vitest";
import { appendAt } from "../../workflows/agent-memory.ts";
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
    expect(appendAt(conversation, 0, results)).toBeUndefined();
    expect((await conversation.memory.get()).map((m) => m.content)).toEqual(["4444", "1386528"]);
    expect(conversation.history.map((m) => m.content)).toEqual(["4444", "1386528"]);
  });
});
