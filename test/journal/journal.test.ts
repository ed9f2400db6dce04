import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { once } from "../../src/journal/once.ts";
import { MemoryJournal } from "../../src/core/journal/memory-journal.ts";
import { PostgresJournal } from "../../src/journal/postgres-journal.ts";
import { SqliteJournal } from "../../src/journal/sqlite-journal.ts";
import type { Journal } from "../../src/core/journal/types.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import { SqliteSessionStore } from "../../src/sessions/sqlite-store.ts";
import { PostgresSessionStore } from "../../src/sessions/postgres-store.ts";
import { Context } from "../../src/core/context.ts";
import { RunStartedEvent } from "../../src/core/lifecycle.ts";
import { useJournal } from "../../src/core/journal/context-journal.ts";
import { gate } from "../support/gate.ts";
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

  it("finish records a key no begin claimed (work begun before anyone else could know its key), and a later begin finds it", async () => {
    const { journal, close } = await open();
    const key = `unclaimed-${Math.random()}`;
    await journal.finish(key, '{"id":"ch_1"}');
    expect(await journal.begin(key)).toEqual({ claimed: false, entry: { state: "finished", result: '{"id":"ch_1"}' } });
    // Over a "started" claimed by someone else meanwhile, too.
    const raced = `raced-${Math.random()}`;
    expect(await journal.begin(raced)).toEqual({ claimed: true });
    await journal.finish(raced, "2");
    expect(await journal.begin(raced)).toEqual({ claimed: false, entry: { state: "finished", result: "2" } });
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
});

/** A session store with a journal, and how to read the journal's rows of one run. */
interface StoreUnderTest {
  readonly store: SqliteSessionStore | PostgresSessionStore;
  readonly rows: (runId: string) => Promise<{ key: string; result: string | null }[]>;
  readonly close: () => Promise<void>;
}

const stores: [string, () => Promise<StoreUnderTest>][] = [
  [
    "SQLite",
    async () => {
      const path = join(mkdtempSync(join(tmpdir(), "stepflow-journal-")), "sessions.db");
      const store = await SqliteSessionStore.open(path);
      const reader = createClient({ url: `file:${path}` });
      return {
        store,
        rows: async (runId) => {
          const found = await reader.execute({ sql: "SELECT key, result FROM stepflow_journal WHERE key LIKE ?", args: [`once:${runId}:%`] });
          return found.rows.map((row) => ({ key: String(row.key), result: row.result === null ? null : String(row.result) }));
        },
        close: async () => (reader.close(), await store.close()),
      };
    },
  ],
];
if (process.env.DATABASE_URL) {
  stores.push([
    "PostgreSQL",
    async () => {
      const store = await PostgresSessionStore.open(process.env.DATABASE_URL as string);
      const reader = new pg.Pool({ connectionString: process.env.DATABASE_URL });
      return {
        store,
        rows: async (runId) => {
          const found = await reader.query<{ key: string; result: string | null }>("SELECT key, result FROM stepflow_journal WHERE key LIKE $1", [
            `once:${runId}:%`,
          ]);
          return found.rows;
        },
        close: async () => (await reader.end(), await store.close()),
      };
    },
  ]);
}

describe.each(stores)("the %s session store's journal", (_name, open) => {
  /** A `send_email` tool that can be held inside its call, and the recipients it sent to. */
  const sender = () => {
    const emails: string[] = [];
    const reached = gate();
    let held: Promise<void> = Promise.resolve();
    const send = tool({
      name: "send_email",
      description: "Send an email.",
      parameters: z.object({ to: z.string() }),
      execute: async ({ to }) => {
        emails.push(to);
        reached.open();
        await held;
        return "sent";
      },
    });
    return { emails, send, reached: reached.promise, hold: (until: Promise<void>) => (held = until) };
  };
  const emailBob = (
    send: ReturnType<typeof sender>["send"],
    script = [{ toolCalls: [{ id: "e1", name: "send_email", input: { to: "bob" } }] }, { text: "Sent." }],
  ) => new FunctionCallingAgent({ llm: new ScriptedLLM(script), tools: [send] });

  it("a session turn that nothing saved mid-run writes no journal rows, and runs its tool call once", async () => {
    const { store, rows, close } = await open();
    const { emails, send } = sender();
    const turn = new Sessions(emailBob(send), store).run(`alice-${Math.random()}`, { input: "Email bob" }, { lifecycleEvents: true });
    let runId = "";
    for await (const ev of turn.streamEvents()) if (ev instanceof RunStartedEvent) runId = ev.runId;
    const { response } = await turn;
    expect(response.content).toBe("Sent.");
    expect(emails).toEqual(["bob"]);
    expect(runId).not.toBe("");

    // The same journal does get rows for a run saved while its tool call ran: the count above is not blind.
    const tool = sender();
    const released = gate();
    tool.hold(released.promise);
    const ctx = new Context(emailBob(tool.send));
    useJournal(ctx, store.journal);
    const handler = emailBob(tool.send).run({ input: "Email bob" }, { ctx });
    await tool.reached;
    const saved = JSON.stringify(handler.ctx.toJSON());
    released.open();
    await handler;
    const savedRun = handler.ctx.runId as string;
    expect(await rows(runId)).toEqual([]);
    const recorded = await rows(savedRun);
    expect(recorded.find((row) => row.key.endsWith(":call e1"))?.result).toMatch(/"content":"sent"/);

    // A resume of that save, sharing the journal, finds the call's result there and does not send again.
    const agent = emailBob(tool.send, [{ text: "Sent." }]);
    const resumed = Context.fromJSON(agent, saved);
    useJournal(resumed, store.journal);
    const { sources } = await agent.run(undefined, { ctx: resumed });
    expect(tool.emails).toEqual(["bob"]);
    expect(sources[0]).toMatchObject({ toolName: "send_email", content: "sent" });
    await close();
  });
});
