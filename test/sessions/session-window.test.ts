/**
 * A turn loads only the newest messages it needs; the full history stays readable page by
 * page; sessions saved by 0.1.0 continue; a workflow without a SessionMemory keeps its whole
 * context. Every store: in-memory, SQLite, and PostgreSQL when DATABASE_URL is set.
 */
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import { OfflineDemoLLM } from "../../src/llm/offline-model.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import { SessionStoreError } from "../../src/sessions/types.ts";
import type { SessionStore } from "../../src/sessions/types.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { countingReads } from "../support/counting-store.ts";

const stores: [string, () => string][] = [
  ["memory", () => "memory:"],
  ["SQLite", () => `sqlite:${join(mkdtempSync(join(tmpdir(), "stepflow-window-")), "sessions.db")}`],
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
// Ids unique per run, so that a shared PostgreSQL database needs no cleaning between runs.
const unique = (name: string) => `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

/** The `n`-th stored turn of a long session: question, tool call, tool result, answer (as LlamaIndex Memory stores them). */
function storedTurn(n: number): string[] {
  const call = { id: `stored_${n}`, name: "add", input: { x: n, y: 1 } };
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
  return [
    { id: `q${n}`, createdAt: at, role: "user", content: `Question ${n}: what is ${n} + 1?` },
    { id: `c${n}`, createdAt: at, role: "assistant", content: "", options: { toolCall: [call] } },
    { id: `r${n}`, createdAt: at, role: "user", content: String(n + 1), options: { toolResult: { id: call.id, result: String(n + 1), isError: false } } },
    { id: `a${n}`, createdAt: at, role: "assistant", content: `${n} + 1 = ${n + 1}.` },
  ].map((m) => JSON.stringify(m));
}

/** An agent on a scripted model that adds with a tool call, then answers; it records what it was sent. */
function addingAgent(contextWindow?: number) {
  const llm = new ScriptedLLM(
    (request) => {
      const last = request.messages.at(-1);
      return last?.options ? { text: `The sum is ${String(last.content)}.` } : { toolCalls: [{ name: "add", input: { x: 20_000, y: 26 } }] };
    },
    contextWindow === undefined ? {} : { contextWindow },
  );
  return { llm, agent: new FunctionCallingAgent({ llm, tools: calculatorTools }) };
}

describe.each(stores)("a 10,000-turn session: %s", (_name, url) => {
  it.each([
    ["a 4,096-token model", 4096],
    ["a 128,000-token model", undefined],
  ])(
    "continues with %s: the model sees the same history as from the whole session, and the turn reads only its window",
    { timeout: 60_000 },
    async (_label, contextWindow) => {
      const store = await open(url());
      const [windowed, whole] = [unique("long"), unique("long-whole")];
      // A real first turn gives the snapshot; the 10,000 turns are written as rows, in one save.
      const rows = Array.from({ length: 10_000 }, (_, n) => storedTurn(n)).flat();
      for (const id of [windowed, whole]) {
        await new Sessions(addingAgent(contextWindow).agent, store).run(id, { input: "Hello" });
        const first = await store.load(id);
        await store.save(id, { expectedVersion: 1, snapshot: first?.snapshot ?? "", append: rows });
      }
      const total = 40_004; // the first turn's 4 messages, then 10,000 × 4

      const a = addingAgent(contextWindow);
      const reads = countingReads(store);
      const { response } = await new Sessions(a.agent, reads.store).run(windowed, { input: "What is 20000 + 26?" });
      expect(response.content).toBe("The sum is 20026.");

      // The same turn on a copy of the session, with every stored message loaded: what a turn sent before.
      const b = addingAgent(contextWindow);
      const everything = { ...b.agent.sessionMemory, initialWindow: Number.MAX_SAFE_INTEGER };
      await new Sessions(b.agent, store, { memory: everything }).run(whole, { input: "What is 20000 + 26?" });

      expect(a.llm.requests).toHaveLength(2);
      expect(a.llm.requests.map((r) => r.messages)).toEqual(b.llm.requests.map((r) => r.messages));
      const sent = a.llm.requests[0]?.messages ?? [];
      expect(sent.length).toBeGreaterThan(40); // a window, not just the question
      expect(sent.length).toBeLessThan(total);
      expect(sent[0]?.options).toBeUndefined(); // well formed: no tool result without its call
      expect(sent.at(-1)).toEqual({ role: "user", content: "What is 20000 + 26?" });
      expect(reads.read()).toBeLessThanOrEqual(sent.length * 2 + 64);

      // The turn appended its 4 messages after the 40,004, and the next turn continues from them.
      const after = await store.load(windowed, { newest: 5 });
      expect(after).toMatchObject({ version: 3, messageCount: total + 4 });
      expect(after?.messages.map((m) => [m.seq, JSON.parse(m.json).content])).toEqual([
        [total, "9999 + 1 = 10000."],
        [total + 1, "What is 20000 + 26?"],
        [total + 2, ""],
        [total + 3, "20026"],
        [total + 4, "The sum is 20026."],
      ]);
      const c = addingAgent(contextWindow);
      await new Sessions(c.agent, store).run(windowed, { input: "And again?" });
      expect(c.llm.requests[0]?.messages.slice(-5)).toEqual([
        { role: "user", content: "What is 20000 + 26?" },
        { role: "assistant", content: "", options: { toolCall: [{ id: "call_1", name: "add", input: { x: 20_000, y: 26 } }] } },
        { role: "user", content: "20026", options: { toolResult: { id: "call_1", result: "20026", isError: false } } },
        { role: "assistant", content: "The sum is 20026." },
        { role: "user", content: "And again?" },
      ]);
      await store.delete(windowed);
      await store.delete(whole);
    },
  );
});

describe.each(stores)("paged history: %s", (_name, url) => {
  it("reads a session page by page, oldest first, and as an async iterator", async () => {
    const store = await open(url());
    const sessions = new Sessions(new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools }), store);
    const id = unique("pages");
    await sessions.run(id, { input: "My name is Page." });
    await sessions.run(id, { input: "What is 2 + 3?" }); // 6 messages in all
    const pages = await Promise.all([1, 2, 3].map((page) => sessions.messagePage(id, { page, pageSize: 4 })));
    expect(pages.map((p) => [p.page, p.pageSize, p.pageCount, p.total])).toEqual([
      [1, 4, 2, 6],
      [2, 4, 2, 6],
      [3, 4, 2, 6],
    ]);
    expect(pages.map((p) => p.messages.map((m) => m.seq))).toEqual([[1, 2, 3, 4], [5, 6], []]);
    expect(pages[0]?.messages[0]?.message).toEqual({ role: "user", content: "My name is Page." });
    expect(pages[1]?.messages.map((m) => m.message.content)).toEqual(["5", "2 + 3 = 5"]);
    expect(pages[0]?.messages[0]?.createdAt).toBeInstanceOf(Date);

    const all = await sessions.messages(id);
    const iterated = [];
    for await (const message of sessions.history(id, { pageSize: 4 })) iterated.push(message);
    expect(iterated).toEqual(all);
    expect(iterated.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await sessions.messagePage(id, { page: 1 })).messages).toHaveLength(6); // pageSize 50 by default

    expect(await sessions.messagePage(unique("nobody"), { page: 1 })).toEqual({ messages: [], page: 1, pageSize: 50, pageCount: 0, total: 0, version: 0 });
    const empty = [];
    for await (const message of sessions.history(unique("nobody"))) empty.push(message);
    expect(empty).toEqual([]);
    await expect(sessions.messagePage(id, { page: 0 })).rejects.toThrow(
      new SessionStoreError("page must be a whole number ≥ 1 (page 1 is the oldest messages); got 0."),
    );
    await expect(sessions.messagePage(id, { page: 1, pageSize: 0 })).rejects.toThrow(
      new SessionStoreError("pageSize must be a whole number ≥ 1 (default 50); got 0."),
    );
    await store.delete(id);
  });
});

/** Wraps stores so that each one's first load answers only once the first loads of both have. */
function loadsTogether(): (store: SessionStore) => SessionStore {
  let arrived = 0;
  let release: () => void = () => {};
  const together = new Promise<void>((resolve) => (release = resolve));
  return (store) =>
    new Proxy(store, {
      get(target, key) {
        if (key === "load") {
          return async (...args: Parameters<SessionStore["load"]>) => {
            const record = await target.load(...args);
            if (++arrived === 2) release();
            await together;
            return record;
          };
        }
        const value: unknown = Reflect.get(target, key);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
}

describe.each(stores)("two first turns of a new session at once: %s", (_name, url) => {
  it("one creates the session, the other gets SessionConflictError with the versions, and nothing is duplicated", async () => {
    const where = url();
    const storeA = await open(where);
    const storeB = where === "memory:" ? storeA : await open(where);
    const id = unique("first");
    const agent = () => new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools });
    // Both turns read the (absent) session before either saves, however the two stores' threads are scheduled.
    const both = loadsTogether();
    const results = await Promise.allSettled([
      new Sessions(agent(), both(storeA)).run(id, { input: "My name is Ann." }),
      new Sessions(agent(), both(storeB)).run(id, { input: "My name is Bob." }),
    ]);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.reason).toMatchObject({ name: "SessionConflictError", sessionId: id, expected: 0, found: 1 });
    const winner = results[0]?.status === "fulfilled" ? "Ann" : "Bob";
    expect((await new Sessions(agent(), storeA).messages(id)).map((m) => m.message.content)).toEqual([`My name is ${winner}.`, `Nice to meet you, ${winner}!`]);
    await storeA.delete(id);
  });
});

describe.each(["format-1", "format-2"])("a SQLite sessions file saved by stepflow 0.1.0 (test/fixtures/%s)", (format) => {
  it("reads page by page, and continues when the model's window holds only part of the history", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "stepflow-0.1.0-")), "sessions.db");
    copyFileSync(join(import.meta.dirname, "..", "fixtures", format, "sessions.db"), path);
    const store = await open(`sqlite:${path}`);
    const everything = await new Sessions(new FunctionCallingAgent({ llm: new OfflineDemoLLM() }), store).messages("logan");
    expect(everything.map((m) => m.message.content)).toContain("Hello! My name is Logan.");
    const sessions = new Sessions(addingAgent(160).agent, store); // 84 tokens of history: the last turn and the question
    const page = await sessions.messagePage("logan", { page: 2, pageSize: 3 });
    expect(page.messages).toEqual(everything.slice(3, 6));
    expect(page.total).toBe(everything.length);

    const a = addingAgent(160);
    expect((await new Sessions(a.agent, store).run("logan", { input: "What is 20000 + 26?" })).response.content).toBe("The sum is 20026.");
    const b = addingAgent(160);
    const copy = join(mkdtempSync(join(tmpdir(), "stepflow-0.1.0-")), "sessions.db");
    copyFileSync(join(import.meta.dirname, "..", "fixtures", format, "sessions.db"), copy);
    await new Sessions(b.agent, await open(`sqlite:${copy}`), { memory: { ...b.agent.sessionMemory, initialWindow: Number.MAX_SAFE_INTEGER } }).run("logan", {
      input: "What is 20000 + 26?",
    });
    expect(a.llm.requests.map((r) => r.messages)).toEqual(b.llm.requests.map((r) => r.messages));
    const record = await store.load("logan", { newest: 0 });
    expect(record?.messageCount).toBe(everything.length + 4);
    expect(JSON.parse(record?.snapshot ?? "").store.memory).toEqual({ $codec: "llamaindex.Memory", value: { messages: [], memoryCursor: 0 } });
  });
});

/** A workflow with no SessionMemory: its whole context is its state. */
class Counter extends Workflow<{ by: number }, number> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async count(ctx: Context, ev: StartEvent<{ by: number }>) {
    const n = (await ctx.store.get<number>("count", 0)) + ev.by;
    await ctx.store.set("count", n);
    return new StopEvent({ result: n });
  }
}

describe("a workflow that supplies no SessionMemory", () => {
  it("keeps its whole context as the snapshot, turn after turn", async () => {
    const store = await open("memory:");
    const sessions = new Sessions(new Counter(), store);
    expect(await sessions.run("c", { by: 2 })).toBe(2);
    expect(await sessions.run("c", { by: 3 })).toBe(5);
    expect(await store.load("c")).toMatchObject({ version: 2, messageCount: 0, messages: [] });
  });

  it("refuses a session that has stored messages, saying what to do", async () => {
    const store = await open("memory:");
    await new Sessions(new FunctionCallingAgent({ llm: new OfflineDemoLLM() }), store).run("chat", { input: "Hello!" });
    const turn = new Sessions(new Counter(), store).run("chat", { by: 1 });
    await expect(turn).rejects.toThrow(SessionStoreError);
    await expect(turn).rejects.toThrow(
      "This session has 2 stored messages, but the workflow does not say where they go in its context. Run it with the workflow that saved it (such as FunctionCallingAgent), or give Sessions a SessionMemory: new Sessions(workflow, store, { memory }).",
    );
    expect(() => new Sessions(new Counter(), store, { memory: { initialWindow: -1 } as never })).toThrow(
      'Not a SessionMemory: initialWindow must be a whole number ≥ 0, got -1; more must be a function; restore must be a function; save must be a function. See docs/sessions.md, "The workflow\'s side".',
    );
  });
});
