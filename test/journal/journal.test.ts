import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { once } from "../../src/journal/once.ts";
import { MemoryJournal } from "../../src/core/journal/memory-journal.ts";
import { PostgresJournal } from "../../src/journal/postgres-journal.ts";
import { SqliteJournal } from "../../src/journal/sqlite-journal.ts";
import type { Journal } from "../../src/core/journal/types.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";
import { currentToolCall } from "../../src/tools/current-tool-call.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import { SqliteSessionStore } from "../../src/sessions/sqlite-store.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

const journals: [string, () => Promise<{ journal: Journal; close: () => Promise<void> }>][] = [
  ["memory", async () => ({ journal: new MemoryJournal(), close: async () => {} })],
  [
    "SQLite",
    async () => {
      const journal = await SqliteJournal.open(join(mkdtempSync(join(tmpdir(), "stepflow-journal-")), "journal.db"));
      return { journal, close: async () => journal.close() };
    },
  ],
];
if (process.env.DATABASE_URL) {
  journals.push([
    "PostgreSQL",
    async () => {
      const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
      return { journal: new PostgresJournal(pool, "PostgreSQL"), close: () => pool.end() };
    },
  ]);
}

describe.each(journals)("%s journal", (_name, open) => {
  it("lets exactly one of many concurrent callers claim a key, and hands the others what was recorded", async () => {
    const { journal, close } = await open();
    const key = `k-${Math.random()}`;
    const claims = await Promise.all(Array.from({ length: 20 }, () => journal.begin(key)));
    expect(claims.filter((c) => c.claimed)).toHaveLength(1);
    expect(claims.filter((c) => !c.claimed)).toEqual(Array(19).fill({ claimed: false, entry: { state: "started" } }));
    await journal.finish(key, '{"ok":true}');
    expect(await journal.begin(key)).toEqual({ claimed: false, entry: { state: "finished", result: '{"ok":true}' } });
    // A released claim (the work never started) can be claimed again; a finished one cannot be released.
    const other = `r-${Math.random()}`;
    await journal.begin(other);
    await journal.release(other);
    expect(await journal.begin(other)).toEqual({ claimed: true });
    await journal.release(key);
    expect((await journal.begin(key)).claimed).toBe(false);
    await close();
  });

  it("once() runs the work the first time only, and reports a started-but-unfinished key as unknown", async () => {
    const { journal, close } = await open();
    let runs = 0;
    const key = `once-${Math.random()}`;
    expect(await once(journal, key, () => ++runs)).toEqual({ status: "ran", value: 1 });
    expect(await once(journal, key, () => ++runs)).toEqual({ status: "recorded", value: 1 });
    const crashed = `crash-${Math.random()}`;
    await journal.begin(crashed); // a process that stopped mid-way
    expect(await once(journal, crashed, () => ++runs)).toEqual({ status: "unknown" });
    expect(runs).toBe(1);
    await close();
  });
});

describe("journal keys and stores", () => {
  it("refuses an empty key, saying what a key is", async () => {
    expect(() => new MemoryJournal().begin("")).toThrow("A journal key must be 1 to 500 characters; got 0 characters.");
  });

  it("Sessions records a turn's tool calls in its store's journal", async () => {
    const store = await SqliteSessionStore.open(join(mkdtempSync(join(tmpdir(), "stepflow-journal-")), "sessions.db"));
    const keys: (string | undefined)[] = [];
    const send = tool({
      name: "send_email",
      description: "Send an email.",
      parameters: z.object({ to: z.string() }),
      execute: () => (keys.push(currentToolCall()?.idempotencyKey), "sent"),
    });
    const agent = new FunctionCallingAgent({
      llm: new ScriptedLLM([{ toolCalls: [{ id: "e1", name: "send_email", input: { to: "bob" } }] }, { text: "Sent." }]),
      tools: [send],
    });
    const finish = vi.spyOn(store.journal, "finish");
    await new Sessions(agent, store).run("alice", { input: "Email bob" });
    expect(keys).toHaveLength(1);
    // The call's record, under the key the engine gave it: a second claim finds its result.
    const calls = finish.mock.calls.filter(([, result]) => (JSON.parse(result) as { toolName?: string }).toolName === "send_email");
    expect(calls).toHaveLength(1);
    const recorded = await store.journal.begin((calls[0] as [string, string])[0]);
    expect(recorded.claimed).toBe(false);
    expect(!recorded.claimed && recorded.entry.state === "finished" && JSON.parse(recorded.entry.result)).toMatchObject({
      toolName: "send_email",
      content: "sent",
    });
    await store.close();
  });
});
