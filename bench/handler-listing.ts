/**
 * What listing a server's runs costs when its SQLite store also holds many other sessions (a
 * day of stored `Idempotency-Key`s, chat sessions): the `SessionStore.list({ prefix })` the
 * server asks with, against a checkout whose stores ignore `prefix` (they list every session).
 *
 *   node --import tsx bench/handler-listing.ts [ROOT] [KEYS]
 *
 * ROOT: the checkout to measure (default: this one); KEYS: other sessions in the store (20,000).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { SessionStore, SessionSummary } from "../src/sessions/types.ts";

const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."));
const others = Number(process.argv[3] ?? 20_000);
const RUNS = 20;
const ROUNDS = 15;

const { openSessionStore } = (await import(join(root, "src/sessions/open-store.ts"))) as { openSessionStore: (url: string) => Promise<SessionStore> };
const dir = mkdtempSync(join(tmpdir(), "stepflow-listing-"));
const store = await openSessionStore(`sqlite:${join(dir, "server.db")}`);
for (let i = 0; i < others; i += 500) {
  const batch = Array.from({ length: Math.min(500, others - i) }, (_, j) => `idempotency:${(i + j).toString(16).padStart(64, "0")}`);
  await Promise.all(batch.map((id) => store.save(id, { expectedVersion: 0, snapshot: '{"format":"stepflow.idempotency/1"}', append: [] })));
}
for (let i = 0; i < RUNS; i++) await store.save(`handler:run-${i}`, { expectedVersion: 0, snapshot: "{}", append: [] });

const times: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const started = performance.now();
  const listed: SessionSummary[] = await store.list({ limit: 1_000_000, prefix: "handler:" });
  times.push(performance.now() - started);
  const runs = listed.filter((s) => s.id.startsWith("handler:")).length;
  if (runs !== RUNS) throw new Error(`listed ${runs} runs, expected ${RUNS}`);
}
times.sort((a, b) => a - b);
console.log(`${root}: ${RUNS} runs among ${others} other sessions, SQLite: median ${(times[ROUNDS >> 1] as number).toFixed(1)} ms to list the runs`);
await store.close();
rmSync(dir, { recursive: true, force: true });
