/**
 * What the WAL's checkpoints do to a stream of saves through the store's SQLite thread:
 * `node --import tsx bench/sqlite-stalls.ts [ROWS]`. Writes ROWS (default 40,000) of the server's
 * rows (bench/sqlite-row.ts), 16 a transaction, one transaction after another, and prints the
 * wall time, the median, p99 and longest transaction, the transactions over 20 ms and their
 * total, and the size the WAL file reached, for:
 *
 * - the store's settings (WAL, `synchronous = NORMAL`; the thread's checkpoints, see
 *   src/sqlite-thread/sqlite-worker.js);
 * - the same with the writing connection's own automatic checkpoint back at SQLite's default,
 *   every 1,000 pages;
 * - the store's settings with `synchronous = OFF`, which no store should use (a power cut can
 *   corrupt the file): what the checkpoints' `fsync`s cost, as it has none.
 *
 * Run it in another checkout too to compare the thread's checkpoints with its.
 */
import { rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newRunId } from "../src/core/internal.ts";
import { SqliteThread } from "../src/sessions/sqlite-thread.ts";
import { printTable } from "./measure.ts";

const ROWS = Number(process.argv[2] ?? 40_000);
const PER_TRANSACTION = 16;
const STALL_MS = 20;
const file = join(tmpdir(), `stepflow-sqlite-stalls-${process.pid}.db`);
const INSERT =
  "INSERT INTO stepflow_sessions (id, version, snapshot, message_count, save_token, created_at, updated_at) VALUES (?, 1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING";
const SNAPSHOT = "x".repeat(1225);

interface Variant {
  readonly name: string;
  readonly synchronous: "NORMAL" | "OFF";
  /** The writing connection's automatic checkpoint, in pages, when not the thread's own. */
  readonly autocheckpoint?: number;
}

async function run(variant: Variant): Promise<(string | number)[]> {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
  const db = await SqliteThread.open({ url: `file:${file}`, timeout: 5000, concurrency: 1 }, "SQLite bench");
  for (const sql of [
    "PRAGMA journal_mode = WAL",
    `PRAGMA synchronous = ${variant.synchronous}`,
    ...(variant.autocheckpoint === undefined ? [] : [`PRAGMA wal_autocheckpoint = ${variant.autocheckpoint}`]),
    `CREATE TABLE stepflow_sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, snapshot TEXT NOT NULL, message_count INTEGER NOT NULL,
       save_token TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
    "CREATE INDEX stepflow_sessions_updated ON stepflow_sessions (updated_at DESC)",
  ])
    await db.execute(sql);
  const took: number[] = [];
  const began = performance.now();
  for (let i = 0; i < ROWS / PER_TRANSACTION; i++) {
    const start = performance.now();
    await Promise.all(
      Array.from({ length: PER_TRANSACTION }, () => {
        const now = Date.now();
        return db.execute({ sql: INSERT, args: [`handler:${newRunId(now)}`, SNAPSHOT, 0, globalThis.crypto.randomUUID(), now, now] });
      }),
    );
    took.push(performance.now() - start);
  }
  const wall = performance.now() - began;
  const walMB = statSync(`${file}-wal`).size / 2 ** 20;
  await db.close();
  const sorted = [...took].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
  const stalls = took.filter((ms) => ms > STALL_MS);
  return [
    variant.name,
    wall.toFixed(0),
    at(0.5).toFixed(2),
    at(0.99).toFixed(1),
    (sorted.at(-1) ?? NaN).toFixed(0),
    `${stalls.length}, ${stalls.reduce((sum, ms) => sum + ms, 0).toFixed(0)} ms`,
    walMB.toFixed(1),
  ];
}

const variants: Variant[] = [
  { name: "the store's settings", synchronous: "NORMAL" },
  { name: "the writer's own checkpoint every 1,000 pages", synchronous: "NORMAL", autocheckpoint: 1000 },
  { name: "synchronous = OFF (unsafe: no fsync)", synchronous: "OFF" },
];
const rows: (string | number)[][] = [];
for (const variant of variants) rows.push(await run(variant));
console.log(`${ROWS} rows of ${SNAPSHOT.length} characters, ${PER_TRANSACTION} a transaction`);
printTable(["variant", "wall ms", "median ms", "p99 ms", "longest ms", `over ${STALL_MS} ms (count, total)`, "WAL file MB"], rows);
