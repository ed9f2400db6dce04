/**
 * Sessions benchmark: one turn (load + run + save) on a session of 10, 1,000 and 10,000 turns
 * (two stored messages each), on SQLite (the default store) and PostgreSQL (when DATABASE_URL
 * is set), for a model with a 128,000-token window and one with 8,192; the stored messages a
 * turn reads (those that fit the model's window), and the bytes each turn writes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScriptedLLM } from "../src/llm/scripted-llm.ts";
import { openSessionStore } from "../src/sessions/open-store.ts";
import { Sessions } from "../src/sessions/sessions.ts";
import type { SessionStore } from "../src/sessions/types.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";
import { printTable } from "./measure.ts";
import { storedMessage } from "./session-workload.ts";

const SIZES = [10, 1000, 10_000]; // turns
const WINDOWS = [128_000, 8192]; // the model's context window, in tokens
const bytes = (text: string) => Buffer.byteLength(text);

/** Grows session `id` to `size` messages in one save, from the snapshot of a real first turn. */
async function seed(store: SessionStore, sessions: Sessions<{ input: string }, unknown>, id: string, size: number): Promise<void> {
  await sessions.run(id, { input: "Hello!" });
  const first = await store.load(id);
  if (!first) throw new Error("seeding failed");
  await store.save(id, {
    expectedVersion: first.version,
    snapshot: first.snapshot,
    append: Array.from({ length: 2 * size - first.messages.length }, (_, i) => storedMessage(i + first.messages.length)),
  });
}

export async function benchSessions(turns = 30): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "stepflow-bench-"));
  const targets: [string, string][] = [["SQLite", `sqlite:${join(dir, "sessions.db")}`]];
  if (process.env.DATABASE_URL) targets.push(["PostgreSQL", process.env.DATABASE_URL]);
  else console.log("(PostgreSQL skipped: DATABASE_URL is not set; bash .ci/postgres.sh starts one)\n");
  const rows: string[][] = [];
  try {
    for (const [name, url] of targets) {
      const opened = await openSessionStore(url);
      let read = 0;
      // Counts the stored messages each turn reads.
      const store: SessionStore = {
        description: opened.description,
        journal: opened.journal,
        load: async (id, options) => {
          const record = await opened.load(id, options);
          read += record?.messages.length ?? 0;
          return record;
        },
        readMessages: async (id, range) => {
          const messages = await opened.readMessages(id, range);
          read += messages.length;
          return messages;
        },
        save: (id, save) => opened.save(id, save),
        list: (options) => opened.list(options),
        delete: (id) => opened.delete(id),
        close: () => opened.close(),
      };
      try {
        for (const contextWindow of WINDOWS) {
          // An LLM that answers at once, so a turn's time is the session's load and save.
          const agent = new FunctionCallingAgent({ llm: new ScriptedLLM(() => ({ text: "Noted." }), { record: false, contextWindow }) });
          const sessions = new Sessions(agent, store);
          for (const size of SIZES) {
            const id = `bench-${size}-${process.pid}`;
            await seed(store, sessions, id, size);
            for (let i = 0; i < 3; i++) await sessions.run(id, { input: "warm up" });
            const before = await store.load(id);
            read = 0;
            const started = performance.now();
            for (let i = 0; i < turns; i++) await sessions.run(id, { input: `Turn ${i}` });
            const ms = (performance.now() - started) / turns;
            const readPerTurn = read / turns;
            const after = await store.load(id);
            if (!before || !after) throw new Error("session vanished");
            const appended = after.messages.slice(before.messages.length);
            const written = (bytes(after.snapshot) * turns + appended.reduce((n, m) => n + bytes(m.json), 0)) / turns;
            rows.push([
              name,
              contextWindow.toLocaleString("en"),
              size.toLocaleString("en"),
              ms.toFixed(2),
              Math.round(readPerTurn).toLocaleString("en"),
              Math.round(written).toLocaleString("en"),
            ]);
            await store.delete(id);
          }
        }
      } finally {
        await store.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(
    ["store", "model window (tokens)", "turns in the session", "ms per turn (load + run + save)", "stored messages read per turn", "bytes written per turn"],
    rows,
  );
}
