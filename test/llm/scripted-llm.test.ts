import type { ChatResponseChunk, ToolCall } from "@llamaindex/core/llms";
import { describe, expect, it } from "vitest";
import { ScriptExhaustedError, ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { add } from "../../workflows/tools/calculator.ts";

async function collect(stream: AsyncIterable<ChatResponseChunk<object>>) {
  const chunks: ChatResponseChunk<object>[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe("ScriptedLLM", () => {
  it("streams like a generator: a stream read to its end, or left by a break, gives nothing more", async () => {
    const llm = new ScriptedLLM([{ text: ["a", "b", "c"] }, { text: ["x", "y"], toolCalls: [{ name: "add", input: { x: 1, y: 2 } }] }]);
    const stream = await llm.chat({ messages: [{ role: "user", content: "go" }], stream: true });
    const seen: string[] = [];
    for await (const chunk of stream) {
      seen.push(chunk.delta);
      if (chunk.delta === "b") break;
    }
    expect(seen).toEqual(["a", "b"]);
    expect(await collect(stream)).toEqual([]);
    const whole = await llm.chat({ messages: [{ role: "user", content: "go" }], stream: true });
    expect((await collect(whole)).map((c) => c.delta)).toEqual(["x", "y", ""]);
    expect(await collect(whole)).toEqual([]);
  });

  it("streams text deltas, then the tool calls on a last chunk, numbering calls without ids", async () => {
    const llm = new ScriptedLLM([
      {
        text: ["Let me ", "add."],
        toolCalls: [
          { name: "add", input: { x: 1, y: 2 } },
          { id: "mine", name: "add", input: { x: 3, y: 4 } },
        ],
      },
    ]);
    const chunks = await collect(await llm.chat({ messages: [{ role: "user", content: "1+2, 3+4?" }], tools: [add], stream: true }));
    expect(chunks.map((c) => c.delta)).toEqual(["Let me ", "add.", ""]);
    expect((chunks.at(-1)?.options as { toolCall: ToolCall[] }).toolCall).toEqual([
      { id: "call_1", name: "add", input: { x: 1, y: 2 } },
      { id: "mine", name: "add", input: { x: 3, y: 4 } },
    ]);
    expect(llm.requests).toEqual([{ messages: [{ role: "user", content: "1+2, 3+4?" }], tools: ["add"] }]);
  });

  it("answers without streaming too", async () => {
    const llm = new ScriptedLLM([{ text: "Hi." }]);
    expect(await llm.chat({ messages: [{ role: "user", content: "Hello" }] })).toEqual({ raw: null, message: { role: "assistant", content: "Hi." } });
  });

  it("records a copy of the messages, not the caller's array", async () => {
    const llm = new ScriptedLLM([{ text: "ok" }]);
    const messages = [{ role: "user" as const, content: "first" }];
    await llm.chat({ messages });
    messages.push({ role: "user", content: "later" });
    expect(llm.requests[0]?.messages).toHaveLength(1);
  });

  it("says which request ran out of script", async () => {
    const llm = new ScriptedLLM([{ text: "only one" }]);
    await llm.chat({ messages: [] });
    const ran = llm.chat({ messages: [] });
    await expect(ran).rejects.toBeInstanceOf(ScriptExhaustedError);
    await expect(ran).rejects.toMatchObject({ request: 2, replies: 1 });
    await expect(ran).rejects.toThrow("ScriptedLLM has no reply left for request #2 (it was given 1 replies). Add a reply to the script.");
  });
});
