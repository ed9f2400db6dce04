/**
 * RunHistory keeps, message by message, what the agent sends the model: it must give exactly
 * what `wellFormedHistory(recentHistory(…))` gives when applied after each addition, on random
 * conversations (questions, answers, tool calls with results missing or out of place, long
 * texts) and token limits from tiny to roomy.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import { describe, expect, it } from "vitest";
import { recentHistory, toolCallsOf, toolResultIdOf, wellFormedHistory } from "../../src/llm/chat-history.ts";
import { RunHistory, runHistory } from "../../workflows/agent-history.ts";
import { createMemory } from "@llamaindex/core/memory";

/** A small deterministic random generator (mulberry32), so that a failure can be replayed by its seed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function conversation(next: () => number) {
  let calls = 0;
  const pending: string[] = [];
  const text = () => "word ".repeat(Math.floor(next() ** 3 * 120)) + String(Math.floor(next() * 1000));
  return (): ChatMessage => {
    const r = next();
    if (r < 0.25) return { role: "user", content: `Question ${text()}` };
    if (r < 0.45) return { role: "assistant", content: text() };
    if (r < 0.6) {
      const ids = Array.from({ length: 1 + Math.floor(next() * 2) }, () => `call_${++calls}`);
      pending.push(...ids);
      // Half of the calls keep Claude's thinking, which counts: its text, and its signature or redacted data.
      const thinking =
        next() < 0.5
          ? {
              anthropic: {
                content: [
                  { type: "thinking", thinking: text(), signature: "S".repeat(Math.floor(next() ** 2 * 600)) },
                  { type: "redacted_thinking", data: "R".repeat(Math.floor(next() * 80)) },
                ],
              },
            }
          : {};
      return {
        role: "assistant",
        content: next() < 0.3 ? "Let me check." : "",
        options: { toolCall: ids.map((id) => ({ id, name: "add", input: { x: 1, y: 2 } })), ...thinking } as never,
      };
    }
    // A result: usually of the newest pending call, sometimes of an unknown one.
    const id = pending.length > 0 && next() < 0.9 ? (pending.shift() as string) : `call_unknown_${Math.floor(next() * 5)}`;
    return { role: "user", content: text(), options: { toolResult: { id, result: "3", isError: false } } };
  };
}

/** Every tool call sent is followed right away by all its results, and every result sent follows its call. */
function expectCallsWithTheirResults(sent: readonly ChatMessage[], where: string): void {
  for (let i = 0; i < sent.length; i++) {
    const ids = toolCallsOf(sent[i] as ChatMessage).map((call) => call.id);
    if (ids.length === 0) {
      expect(toolResultIdOf(sent[i] as ChatMessage), `${where}: a result without its call at ${i}`).toBeUndefined();
      continue;
    }
    const results = sent.slice(i + 1, i + 1 + ids.length).map(toolResultIdOf);
    expect(results.sort(), `${where}: the results of the call at ${i}`).toEqual([...ids].sort());
    i += ids.length;
  }
}

describe("RunHistory", () => {
  it("gives what recentHistory and wellFormedHistory give, after every addition, on 300 random conversations", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const message = conversation(next);
      const limit = [5, 20, 60, 200, 1000, 5000][seed % 6] as number;
      const memory = Array.from({ length: Math.floor(next() * 80) }, message);
      let expected = recentHistory(memory, limit);
      const history = new RunHistory(memory, limit);
      history.trim();
      for (let step = 0; step < 25; step++) {
        const where = `seed ${seed}, step ${step}, limit ${limit}`;
        expect(history.messages(), where).toEqual(expected);
        const sent = history.wellFormed();
        expect(sent, where).toEqual(wellFormedHistory(expected));
        expectCallsWithTheirResults(sent, where);
        expect(history.last, where).toBe(expected.at(-1));
        expect(history.length, where).toBe(expected.length);
        const added = Array.from({ length: 1 + Math.floor(next() * 3) }, message);
        expected.push(...added);
        history.push(...added);
        expected = recentHistory(expected, limit);
        history.trim();
      }
    }
  });
});

describe("RunHistory with the thinking Claude's replies keep", () => {
  it("trims a reply whose text fits but whose signed thinking does not, as recentHistory does", () => {
    const question: ChatMessage = { role: "user", content: "What is (2123 + 2321) * 312?" };
    const signed = {
      role: "assistant",
      content: "Hello!",
      options: {
        anthropic: {
          content: [
            { type: "thinking", thinking: "", signature: "S".repeat(4000) },
            { type: "text", text: "Hello!" },
          ],
        },
      },
    } as ChatMessage;
    const history = new RunHistory([{ role: "user", content: "Hi" }, signed, question], 1000);
    history.trim();
    expect(history.messages()).toEqual([question]);
  });
});

describe("runHistory", () => {
  it("starts each run on a memory from what the previous run counted, and gives what a fresh count gives", async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = random(seed);
      const message = conversation(next);
      const limit = [20, 200, 1000][seed % 3] as number;
      const memory = createMemory([]);
      for (let i = 0; i < 64 + Math.floor(next() * 60); i++) await memory.add(message()); // 64: runHistory remembers no shorter history
      for (let run = 0; run < 6; run++) {
        const history = await runHistory(memory, limit);
        const expected = recentHistory(await memory.get(), limit);
        const where = `seed ${seed}, run ${run}`;
        expect(history.messages(), where).toEqual(expected);
        const sent = history.wellFormed();
        expect(sent, where).toEqual(wellFormedHistory(expected));
        expectCallsWithTheirResults(sent, where);
        expect(history.size, where).toBe((await memory.get()).length);
        // The run adds its messages to memory and to its history, as the agent does.
        for (let i = 0; i < 1 + Math.floor(next() * 4); i++) {
          const added = message();
          await memory.add(added);
          history.push(added);
          history.trim();
        }
      }
    }
  });
});
