import { spawn } from "node:child_process";
import { createClient } from "@libsql/client";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@llamaindex/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { StreamEvent } from "../../events/index.ts";
import { ContextSerdeError, WorkflowCancelledByUser, WorkflowTimeoutError } from "../../src/index.ts";
import { OfflineDemoLLM } from "../../src/llm/offline-model.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import { CorruptSessionError, SessionConflictError } from "../../src/sessions/types.ts";
import type { SessionStore } from "../../src/sessions/types.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { gate } from "../support/gate.ts";

const opened: SessionStore[] = [];
const sqliteUrl = () => `sqlite:${join(mkdtempSync(join(tmpdir(), "stepflow-sessions-")), "sessions.db")}`;
async function open(url: string): Promise<SessionStore> {
  const store = await openSessionStore(url);
  opened.push(store);
  return store;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

const offlineAgent = () => new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools });

describe("Sessions", () => {
  it("refuses a turn on a session whose tool call row was deleted, and writes nothing", async () => {
    const url = sqliteUrl();
    const sessions = new Sessions(offlineAgent(), await open(url));
    await sessions.run("alice", { input: "What is 2 + 3?" }); // user, assistant call, tool result, assistant: 4 rows
    const db = createClient({ url: `file:${url.slice("sqlite:".length)}` });
    await db.execute("DELETE FROM stepflow_session_messages WHERE session_id = 'alice' AND seq = 2"); // the tool call
    db.close();
    const before = (await sessions.list())[0];
    const turn = sessions.run("alice", { input: "And 4 + 4?" });
    await expect(turn).rejects.toThrow(CorruptSessionError);
    await expect(turn).rejects.toThrow(
      'Session "alice" is corrupt: message #2 is missing (3 of 4 messages are stored). The stored session was not changed; restore it from a backup, or delete it.',
    );
    expect((await sessions.list())[0]).toEqual(before);
  });

  it("continues a conversation from the store with a new agent and a new store connection", async () => {
    const url = sqliteUrl();
    await new Sessions(offlineAgent(), await open(url)).run("alice", { input: "Hello! My name is Logan." });
    const later = new Sessions(offlineAgent(), await open(url));
    const turn = later.run("alice", { input: "What is my name?" });
    let streamed = "";
    for await (const ev of turn.streamEvents()) if (ev instanceof StreamEvent) streamed += ev.delta;
    const { response } = await turn;
    expect(response.content).toBe("Your name is Logan.");
    expect(streamed).toBe("Your name is Logan.");
    const messages = await later.messages("alice");
    expect(messages.map((m) => `${m.message.role}: ${String(m.message.content)}`)).toEqual([
      "user: Hello! My name is Logan.",
      "assistant: Nice to meet you, Logan!",
      "user: What is my name?",
      "assistant: Your name is Logan.",
    ]);
    expect(messages.every((m) => m.createdAt instanceof Date)).toBe(true);
  });

  it("appends each turn's messages and keeps the snapshot the same size as the history grows", async () => {
    const store = await open("memory:");
    const sessions = new Sessions(offlineAgent(), store);
    const sizes: number[] = [];
    for (let turn = 1; turn <= 12; turn++) {
      await sessions.run("bob", { input: `What is ${turn} + ${turn}?` });
      const record = await store.load("bob");
      expect(record?.messages).toHaveLength(turn * 4); // user, assistant call, tool result, answer
      sizes.push(record?.snapshot.length ?? 0);
    }
    expect(Math.max(...sizes.slice(1)) - Math.min(...sizes.slice(1))).toBeLessThan(400); // sources of one turn; no history
  });

  it("leaves the stored session exactly as it was when a turn times out or is cancelled", async () => {
    const store = await open(sqliteUrl());
    const hang = tool({
      name: "multiply",
      description: "Hangs.",
      parameters: z.object({ x: z.number(), y: z.number() }),
      execute: () => new Promise<number>(() => {}),
    });
    const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: [hang], timeout: 0.2 });
    const sessions = new Sessions(agent, store);
    await sessions.run("carol", { input: "My name is Carol." });
    const before = await store.load("carol");

    await expect(sessions.run("carol", { input: "What is 6 * 7?" })).rejects.toThrow(WorkflowTimeoutError);
    expect(await store.load("carol")).toEqual(before);

    const cancelled = sessions.run("carol", { input: "What is 6 * 7?" });
    for await (const _ev of cancelled.streamEvents()) cancelled.cancel();
    await expect(cancelled).rejects.toThrow(WorkflowCancelledByUser);
    expect(await store.load("carol")).toEqual(before);

    const next = await new Sessions(offlineAgent(), store).run("carol", { input: "What is my name?" });
    expect(next.response.content).toBe("Your name is Carol.");
  });

  it("reports a corrupt snapshot or message as ContextSerdeError and does not modify the store", async () => {
    const store = await open("memory:");
    const sessions = new Sessions(offlineAgent(), store);
    await sessions.run("dave", { input: "Hello!" });
    const good = await store.load("dave");
    await store.save("dave", { expectedVersion: good?.version ?? 0, snapshot: "{oops", append: [] });
    const corrupt = await store.load("dave");
    await expect(sessions.run("dave", { input: "Hi again" })).rejects.toThrow(ContextSerdeError);
    await expect(sessions.run("dave", { input: "Hi again" })).rejects.toThrow(
      /^Session "dave" \(version 2\) has a corrupt context snapshot: .*The stored session was not changed\.$/,
    );
    expect(await store.load("dave")).toEqual(corrupt);

    await store.save("erin", { expectedVersion: 0, snapshot: good?.snapshot ?? "", append: ["not json"] });
    await expect(sessions.run("erin", { input: "Hi" })).rejects.toThrow(
      'Session "erin" has a corrupt message #1: it is not a saved chat message. The stored session was not changed.',
    );
    for (const [i, message] of [
      { role: "wizard", content: "x" },
      { role: "user" },
      { role: "user", content: 5 },
      { role: "user", content: [1, 2] },
    ].entries()) {
      const id = `frank${i}`;
      await store.save(id, {
        expectedVersion: 0,
        snapshot: good?.snapshot ?? "",
        append: [JSON.stringify({ role: "user", content: "fine" }), JSON.stringify(message)],
      });
      const before = await store.load(id);
      await expect(sessions.run(id, { input: "Hi" })).rejects.toThrow(
        `Session "${id}" has a corrupt message #2: it is not a saved chat message. The stored session was not changed.`,
      );
      expect(await store.load(id)).toEqual(before);
    }
  });

  it("names the session and version of a snapshot that parses but does not restore", async () => {
    const store = await open("memory:");
    const sessions = new Sessions(offlineAgent(), store);
    await sessions.run("gina", { input: "Hello!" });
    const good = await store.load("gina");
    const snapshot = JSON.parse(good?.snapshot ?? "");
    const messages = good?.messages.map((m) => m.json) ?? [];
    const cases: [object, string][] = [
      [{ ...snapshot, version: undefined }, 'Cannot restore the context: "version" is missing; this is not a saved stepflow context.'],
      [
        { ...snapshot, version: 99 },
        "Cannot restore the context: it was saved in format version 99 by a newer stepflow; this one reads up to version 3. Upgrade stepflow.",
      ],
      [
        { ...snapshot, workflow: "Other" },
        "Cannot restore the context: it was saved from workflow Other, not FunctionCallingAgent. Restore it with the workflow it was saved from, or start with a new Context.",
      ],
      [
        { ...snapshot, store: { ...snapshot.store, x: { $codec: "Nope", value: 1 } } },
        'Cannot restore the context: store.x was saved with codec "Nope", which this workflow does not have. Give the workflow that codec: new MyWorkflow({ codecs: { "Nope": … } }).',
      ],
      [
        { ...snapshot, store: { ...snapshot.store, memory: { $codec: "llamaindex.Memory", value: 5 } } },
        'Cannot restore the context: its store "memory" is not a saved LlamaIndex Memory (codec "llamaindex.Memory").',
      ],
      [{ ...snapshot, store: {} }, 'Cannot restore the context: the session has messages but its context snapshot has no memory ("memory") to put them in.'],
    ];
    for (const [i, [corrupt, problem]] of cases.entries()) {
      const id = `gina-${i}`;
      await store.save(id, { expectedVersion: 0, snapshot: JSON.stringify(corrupt), append: messages });
      const before = await store.load(id);
      const turn = sessions.run(id, { input: "Hi again" });
      await expect(turn).rejects.toThrow(ContextSerdeError);
      await expect(turn).rejects.toThrow(`Session "${id}" (version 1): ${problem} The stored session was not changed.`);
      expect(await store.load(id)).toEqual(before);
    }
  });
});

/**
 * A process that, once a line arrives on its stdin, runs ROUNDS rounds of turns on four sessions
 * of its own at once (so its store uses the database concurrently), then prints the errors as JSON.
 * `node --import tsx --input-type=module -e turnsChild ROOT STORE_URL NAME ROUNDS`.
 */
const turnsChild = `
const [root, url, name, rounds] = process.argv.slice(1);
const { openSessionStore } = await import(root + "/src/sessions/open-store.ts");
const { Sessions } = await import(root + "/src/sessions/sessions.ts");
const { OfflineDemoLLM } = await import(root + "/src/llm/offline-model.ts");
const { FunctionCallingAgent } = await import(root + "/workflows/function-calling-agent.ts");
const { calculatorTools } = await import(root + "/workflows/tools/calculator.ts");
const store = await openSessionStore(url);
const sessions = new Sessions(new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: null }), store);
process.stdout.write("READY\\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
const errors = [];
for (let round = 0; round < Number(rounds); round++) {
  await Promise.all([0, 1, 2, 3].map((i) => sessions.run(name + "-" + i, { input: "What is " + round + " + " + i + "?" }).then(undefined, (e) => errors.push(e.name + ": " + e.message))));
}
await store.close();
process.stdout.write(JSON.stringify(errors) + "\\n");
`;

describe("two processes running turns at once on one SQLite file", () => {
  it("saves every turn: a store waits for the other process's write on each of its connections", { timeout: 60_000 }, async () => {
    const url = sqliteUrl();
    const store = await open(url); // creates the tables before the children race
    const rounds = 10;
    const children = ["p", "q"].map((name) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", turnsChild, join(import.meta.dirname, "..", ".."), url, name, String(rounds)],
        { stdio: ["pipe", "pipe", "inherit"] },
      );
      let out = "";
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => (out += String(d)).includes("READY\n") && resolve());
        child.on("exit", (code) => reject(new Error(`child exited early with ${code}`)));
      });
      const exited = new Promise<string>((resolve) => child.on("close", () => resolve(out))); // "close": after its stdout ended
      return { name, child, ready, exited };
    });
    await Promise.all(children.map((c) => c.ready));
    for (const { child } of children) child.stdin.end("go\n"); // both start at once
    for (const { name, exited } of children) {
      expect(JSON.parse((await exited).split("\n")[1] ?? "")).toEqual([]);
      for (const i of [0, 1, 2, 3]) {
        const record = await store.load(`${name}-${i}`);
        expect([record?.version, record?.messages.length]).toEqual([rounds, rounds * 4]);
      }
    }
  });
});

/** Two turns on one session, both loaded before either saves. */
async function raceTwoTurns(storeA: SessionStore, storeB: SessionStore) {
  const bothInTool = gate();
  let racing = false;
  let inTool = 0;
  const wait = tool({
    name: "wait",
    description: "Waits until both turns are running.",
    parameters: z.object({}),
    execute: async () => {
      if (!racing) return "ok";
      if (++inTool === 2) bothInTool.open();
      await bothInTool.promise;
      return "ok";
    },
  });
  const script = () =>
    new ScriptedLLM((request) =>
      request.messages.at(-1)?.options
        ? { text: `done: ${String(request.messages.findLast((m) => m.role === "user" && !m.options)?.content)}` }
        : { toolCalls: [{ name: "wait", input: {} }] },
    );
  const a = new Sessions(new FunctionCallingAgent({ llm: script(), tools: [wait] }), storeA);
  const b = new Sessions(new FunctionCallingAgent({ llm: script(), tools: [wait] }), storeB);
  await a.run("shared", { input: "first turn" });
  racing = true;
  return Promise.allSettled([a.run("shared", { input: "from A" }), b.run("shared", { input: "from B" })]);
}

const databases: [string, () => string][] = [
  ["memory (one store)", () => "memory:"],
  ["SQLite (two connections to one file)", sqliteUrl],
];
if (process.env.DATABASE_URL) databases.push(["PostgreSQL", () => process.env.DATABASE_URL as string]);

describe.each(databases)("two concurrent turns on one session: %s", (_name, url) => {
  it("one saves, the other gets SessionConflictError, and no message is lost or duplicated", async () => {
    const where = url();
    const storeA = await open(where);
    await storeA.delete("shared");
    const results = await raceTwoTurns(storeA, where === "memory:" ? storeA : await open(where));
    const failed = results.filter((r) => r.status === "rejected");
    expect(failed).toHaveLength(1);
    expect((failed[0] as PromiseRejectedResult).reason).toBeInstanceOf(SessionConflictError);
    expect((failed[0] as PromiseRejectedResult).reason).toMatchObject({ sessionId: "shared", expected: 1, found: 2 });
    const winner = results.findIndex((r) => r.status === "fulfilled") === 0 ? "from A" : "from B";
    const record = await storeA.load("shared");
    const contents = (record?.messages ?? []).map((m) => JSON.parse(m.json).content);
    expect(contents.filter((c) => c === winner)).toHaveLength(1);
    expect(contents).not.toContain(winner === "from A" ? "from B" : "from A");
    expect(contents).toEqual(["first turn", "", "ok", "done: first turn", winner, "", "ok", `done: ${winner}`]);
    await storeA.delete("shared");
  });
});

describe("a process killed in the middle of a turn", () => {
  it("leaves the session at the previous turn, and the next turn works", { timeout: 60_000 }, async () => {
    const url = sqliteUrl();
    await new Sessions(offlineAgent(), await open(url)).run("frank", { input: "My name is Frank." });
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "..", "support", "session-child.ts"), url, "frank", "What is 6 * 7?"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => String(d).includes("TOOL_STARTED") && resolve());
      child.on("exit", (code) => reject(new Error(`child exited early with ${code}`)));
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    child.kill("SIGKILL");
    await exited;

    const store = await open(url);
    expect((await store.load("frank"))?.messages).toHaveLength(2);
    const sessions = new Sessions(offlineAgent(), store);
    expect((await sessions.run("frank", { input: "What is my name?" })).response.content).toBe("Your name is Frank.");
    expect((await sessions.run("frank", { input: "What is 6 * 7?" })).response.content).toBe("6 * 7 = 42");
  });
});
