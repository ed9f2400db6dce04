/**
 * A `Sessions` keeps each session's window decoded between turns: the next turn reads only the
 * messages stored since, yet never serves what the store no longer holds (another `Sessions`
 * wrote, or deleted the session and started it again), and the model is sent exactly what a
 * turn loading from the store sends. Every store: in-memory, SQLite, PostgreSQL with DATABASE_URL.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@llamaindex/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import type { MessageWindow, SessionMemory } from "../../src/sessions/session-memory.ts";
import { SessionConflictError, SessionStoreError } from "../../src/sessions/types.ts";
import type { SessionStore } from "../../src/sessions/types.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { countingReads } from "../support/counting-store.ts";

const stores: [string, () => string][] = [
  ["memory", () => "memory:"],
  ["SQLite", () => `sqlite:${join(mkdtempSync(join(tmpdir(), "stepflow-cache-")), "sessions.db")}`],
];
if (process.env.DATABASE_URL) stores.push(["PostgreSQL", () => process.env.DATABASE_URL as string]);

const opened: SessionStore[] = [];
async function open(url: string): Promise<SessionStore> {
  const store = await openSessionStore(url);
  opened.push(store);
  return store;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});
const unique = (name: string) => `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

/** An agent that adds with a tool call, then answers with the sum and the first question it can see. */
function addingAgent(contextWindow?: number) {
  const llm = new ScriptedLLM(
    (request) => {
      const last = request.messages.at(-1);
      const first = request.messages.find((m) => m.role === "user" && !m.options);
      return last?.options
        ? { text: `The sum is ${String(last.content)}; the oldest question I see: ${String(first?.content)}` }
        : { toolCalls: [{ name: "add", input: { x: 20_000, y: 26 } }] };
    },
    contextWindow === undefined ? {} : { contextWindow },
  );
  return { llm, agent: new FunctionCallingAgent({ llm, tools: calculatorTools }) };
}

/** The agent's SessionMemory, recording the size of every window a turn restores. */
function recordingWindows(memory: SessionMemory): { memory: SessionMemory; sizes: number[] } {
  const sizes: number[] = [];
  return {
    sizes,
    memory: {
      ...memory,
      restore: (snapshot, window: MessageWindow) => {
        sizes.push(window.messages.length);
        return memory.restore(snapshot, window);
      },
    },
  };
}

describe.each(stores)("the window cache: %s", (_name, url) => {
  it("a turn on a session this Sessions served reads only its newest message, and the rows another Sessions stored since", async () => {
    const store = await open(url());
    const id = unique("two");
    const reads = countingReads(store);
    const a = addingAgent();
    const sessionsA = new Sessions(a.agent, reads.store);
    const sessionsB = new Sessions(addingAgent().agent, store);

    await sessionsA.run(id, { input: "Question one" });
    await sessionsA.run(id, { input: "Question two" });
    let before = reads.read();
    await sessionsA.run(id, { input: "Question three" });
    expect(reads.read() - before).toBe(1); // nobody else wrote: the newest message confirms the cached window

    await sessionsB.run(id, { input: "Question from B" });
    before = reads.read();
    await sessionsA.run(id, { input: "Question four" });
    expect(reads.read() - before).toBe(1 + 1 + 4); // the newest, then the cached newest again and B's four
    const sent = (a.llm.requests.at(-2)?.messages ?? []).map((m) => m.content);
    expect(sent.filter((c) => typeof c === "string" && c.startsWith("Question"))).toEqual([
      "Question one",
      "Question two",
      "Question three",
      "Question from B",
      "Question four",
    ]);
    const stored = await store.load(id);
    expect(stored?.messageCount).toBe(20);
    expect(new Set(stored?.messages.map((m) => JSON.parse(m.json).id)).size).toBe(20); // nothing stored twice
    await store.delete(id);
  });

  it("does not serve a session that another Sessions deleted and started again, even at the same version and length", async () => {
    const store = await open(url());
    const id = unique("again");
    const a = addingAgent();
    const sessionsA = new Sessions(a.agent, store);
    const sessionsB = new Sessions(addingAgent().agent, store);
    await sessionsA.run(id, { input: "I am Alice" });
    await sessionsA.run(id, { input: "Still Alice" });
    expect(await sessionsB.delete(id)).toBe(true);
    await sessionsB.run(id, { input: "I am Bob" });
    await sessionsB.run(id, { input: "Still Bob" });
    expect(await store.load(id, { newest: 0 })).toMatchObject({ version: 2, messageCount: 8 }); // what A cached: version 2, 8 messages

    await sessionsA.run(id, { input: "Who am I?" });
    const questions = (a.llm.requests.at(-1)?.messages ?? []).filter((m) => m.role === "user" && !m.options).map((m) => m.content);
    expect(questions).toEqual(["I am Bob", "Still Bob", "Who am I?"]);
    await store.delete(id);
  });

  it("the turn that lost a race drops its window, and run again continues after the winner's messages", async () => {
    const store = await open(url());
    const id = unique("race");
    let racing = false;
    let inTool = 0;
    let release: () => void = () => {};
    const bothInTool = new Promise<void>((resolve) => (release = resolve));
    const wait = tool({
      name: "wait",
      description: "Waits until both turns are running.",
      parameters: z.object({}),
      execute: async () => {
        if (!racing) return "ok";
        if (++inTool === 2) release();
        await bothInTool;
        return "ok";
      },
    });
    const llm = () =>
      new ScriptedLLM((request) =>
        request.messages.at(-1)?.options ? { text: `done: ${String(request.messages.at(-3)?.content)}` } : { toolCalls: [{ name: "wait", input: {} }] },
      );
    const [llmA, llmB] = [llm(), llm()];
    const sessionsA = new Sessions(new FunctionCallingAgent({ llm: llmA, tools: [wait] }), store);
    const sessionsB = new Sessions(new FunctionCallingAgent({ llm: llmB, tools: [wait] }), store);
    // Both keep a window of the session: each ran a turn on it after it existed.
    await sessionsA.run(id, { input: "zero" });
    await sessionsB.run(id, { input: "one" });
    await sessionsA.run(id, { input: "two" });
    await sessionsB.run(id, { input: "three" });
    racing = true;
    const results = await Promise.allSettled([sessionsA.run(id, { input: "from A" }), sessionsB.run(id, { input: "from B" })]);
    const lost = results.findIndex((r) => r.status === "rejected");
    expect(lost).toBeGreaterThanOrEqual(0);
    expect((results[lost] as PromiseRejectedResult).reason).toBeInstanceOf(SessionConflictError);
    const [loser, loserLlm, winner] = lost === 0 ? [sessionsA, llmA, "from B"] : [sessionsB, llmB, "from A"];
    racing = false;
    await loser.run(id, { input: "retried" });
    const sent = (loserLlm.requests.at(-1)?.messages ?? []).filter((m) => m.role === "user" && !m.options).map((m) => m.content);
    expect(sent).toEqual(["zero", "one", "two", "three", winner, "retried"]);
    const contents = (await store.load(id))?.messages.map((m) => JSON.parse(m.json).content);
    expect(contents?.filter((c) => c === "from A" || c === "from B")).toEqual([winner]);
    await store.delete(id);
  });

  it(
    "continues a 10,000-turn session turn after turn, sending the model what a Sessions without a cache sends, in a window that stays bounded",
    { timeout: 120_000 },
    async () => {
      const store = await open(url());
      const [cachedId, coldId] = [unique("long-cached"), unique("long-cold")];
      const rows = Array.from({ length: 10_000 }, (_, n) => [
        JSON.stringify({ id: `q${n}`, role: "user", content: `Question ${n}: what is ${n} + 1? Please show your working.` }),
        JSON.stringify({ id: `a${n}`, role: "assistant", content: `${n} + 1 = ${n + 1}, which I worked out by counting on from ${n}.` }),
      ]).flat();
      for (const id of [cachedId, coldId]) {
        await new Sessions(addingAgent(4096).agent, store).run(id, { input: "Hello" });
        const first = await store.load(id, { newest: 0 });
        await store.save(id, { expectedVersion: 1, snapshot: first?.snapshot ?? "", append: rows });
      }
      const cached = addingAgent(4096);
      const windows = recordingWindows(cached.agent.sessionMemory);
      const warm = new Sessions(cached.agent, store, { memory: windows.memory });
      const cold = addingAgent(4096);
      const turns = 100;
      for (let turn = 0; turn < turns; turn++) {
        const input = { input: `Turn ${turn}: what is 20000 + 26?` };
        await warm.run(cachedId, input);
        await new Sessions(cold.agent, store, { windowCache: { sessions: 0 } }).run(coldId, input);
      }
      expect(cached.llm.requests).toHaveLength(2 * turns);
      expect(cached.llm.requests.map((r) => r.messages)).toEqual(cold.llm.requests.map((r) => r.messages));
      const last = cached.llm.requests.at(-1)?.messages ?? [];
      expect(last.at(-1)?.content).toBe("20026");
      expect(String(last.find((m) => m.role === "user" && !m.options)?.content)).toMatch(/^(Question 99\d\d|Turn )/); // the newest of the history
      // Grown by 4 messages a turn (400 in all), the window is cut back to what a turn needs once it doubles.
      const first = windows.sizes[0] ?? 0;
      expect(first).toBeLessThan(200);
      expect(Math.max(...windows.sizes)).toBeLessThanOrEqual(4 * first + 4);
      expect(windows.sizes.some((size, i) => i > 0 && size < (windows.sizes[i - 1] ?? 0))).toBe(true);
      const stored = await store.load(cachedId, { newest: 0 });
      expect(stored).toMatchObject({ version: 2 + turns, messageCount: 4 + 20_000 + 4 * turns });
      await store.delete(cachedId);
      await store.delete(coldId);
    },
  );
});

describe("the window cache's bounds", () => {
  it("keeps at most `sessions` windows, least recently used out first, and none larger than `bytes`", async () => {
    const store = await open("memory:");
    const reads = countingReads(store);
    const turn = async (sessions: Sessions<{ input: string }, unknown>, id: string) => {
      const before = reads.read();
      await sessions.run(id, { input: "What is 20000 + 26?" });
      return reads.read() - before;
    };
    const one = new Sessions(addingAgent().agent, reads.store, { windowCache: { sessions: 1 } });
    await turn(one, "x"); // a new session: cached from its second turn on, once the store has said when it was created
    expect(await turn(one, "x")).toBe(4);
    expect(await turn(one, "x")).toBe(1); // cached
    await turn(one, "y");
    expect(await turn(one, "y")).toBe(4);
    expect(await turn(one, "x")).toBe(12); // pushed out by y: loaded from the store
    expect(await turn(one, "x")).toBe(1);

    const small = new Sessions(addingAgent().agent, reads.store, { windowCache: { bytes: 100 } });
    await turn(small, "z");
    expect(await turn(small, "z")).toBe(4);
    expect(await turn(small, "z")).toBe(8); // its messages are more than 100 bytes: never cached
    const none = new Sessions(addingAgent().agent, reads.store, { windowCache: { sessions: 0 } });
    expect(await turn(none, "x")).toBe(20);
    expect(await turn(none, "x")).toBe(24);
  });

  it("refuses a bound that is not a whole number ≥ 0, saying what it should be", () => {
    const store = { description: "unused" } as SessionStore;
    const { agent } = addingAgent();
    expect(() => new Sessions(agent, store, { windowCache: { sessions: -1 } })).toThrow(SessionStoreError);
    expect(() => new Sessions(agent, store, { windowCache: { bytes: 1.5 } })).toThrow(
      "windowCache.bytes must be a whole number ≥ 0 (0 keeps no window; default 67108864); got 1.5.",
    );
  });

  it("hands a turn messages it cannot change in place, so the next turn gets them as stored", async () => {
    const store = await open("memory:");
    const { agent } = addingAgent();
    const seen: unknown[] = [];
    const memory: SessionMemory = {
      ...agent.sessionMemory,
      restore: (snapshot, window) => {
        seen.push(Object.isFrozen(window.messages[0]), Object.isFrozen((window.messages[1] as { options?: object } | undefined)?.options));
        return agent.sessionMemory.restore(snapshot, window);
      },
    };
    const sessions = new Sessions(agent, store, { memory });
    await sessions.run("frozen", { input: "What is 20000 + 26?" });
    await sessions.run("frozen", { input: "What is 20000 + 26?" });
    await sessions.run("frozen", { input: "What is 20000 + 26?" });
    expect(seen).toEqual([true, true, true, true]); // the first turn restored nothing: a new session
  });
});
