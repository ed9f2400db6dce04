/**
 * What the WAL's checkpoints do to a stream of saves through the store's SQLite thread:
 * `node --import tsx bench/sqlite-stalls.ts [ROWS]`. Writes ROWS (default 40,000) of the server's
 * rows (bench/sqlite-bench-row.ts), 16 a transaction, one transaction after another, and prints the
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
import { statSync } from "node:fs";
import { SqliteThread } from "../src/sessions/sqlite-thread.ts";
import { printTable } from "./measure.ts";
import { INSERT_RUN, ROWS_PER_TRANSACTION, SESSIONS_SCHEMA, benchFile, runRowArgs } from "./sqlite-bench-row.ts";

const ROWS = Number(process.argv[2] ?? 40_000);
const STALL_MS = 20;
const { file, remove } = benchFile("sqlite-stalls");

interface Variant {
  readonly name: string;
  readonly synchronous: "NORMAL" | "OFF";
  /** The writing connection's automatic checkpoint, in pages, when not the thread's own. */
  readonly autocheckpoint?: number;
}

async function run(variant: Variant): Promise<(string | number)[]> {
  remove();
  const db = await SqliteThread.open({ url: `file:${file}`, timeout: 5000, concurrency: 1 }, "SQLite bench");
  for (const sql of [
    "PRAGMA journal_mode = WAL",
    `PRAGMA synchronous = ${variant.synchronous}`,
    ...(variant.autocheckpoint === undefined ? [] : [`PRAGMA wal_autocheckpoint = ${variant.autocheckpoint}`]),
    ...SESSIONS_SCHEMA,
  ])
    await db.execute(sql);
  const took: number[] = [];
  const began = performance.now();
  for (let i = 0; i < ROWS / ROWS_PER_TRANSACTION; i++) {
    const start = performance.now();
    await Promise.all(Array.from({ length: ROWS_PER_TRANSACTION }, () => db.execute({ sql: INSERT_RUN, args: runRowArgs() })));
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
remove();
console.log(`${ROWS} rows of 1,225 characters, ${ROWS_PER_TRANSACTION} a transaction`);
printTable(["variant", "wall ms", "median ms", "p99 ms", "longest ms", `over ${STALL_MS} ms (count, total)`, "WAL file MB"], rows);
