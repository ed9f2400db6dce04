/**
 * What saving one finished run costs SQLite, row by row:
 * `node --import tsx bench/sqlite-row.ts [ROWS] [ROUNDS]`. The row is the server's: an `INSERT …
 * ON CONFLICT DO NOTHING` of a 1,225-character snapshot into the session store's own table (its
 * `id` key and `updated_at` index), time-ordered ids, 16 rows a transaction (what 32 clients'
 * run-and-waits share over HTTP), in a fresh WAL file with `synchronous = NORMAL`. Prints CPU µs
 * per row, the median of ROUNDS (default 3) fresh files of ROWS (default 20,000) rows each:
 *
 * - through the store's SQLite thread (`SqliteThread`, as the server sends it): that thread's
 *   CPU and the calling thread's;
 * - libsql (the driver under `@libsql/client`) called directly on this thread, in the file and
 *   in `:memory:` (what is left is the binding and SQLite's B-trees), and without the
 *   `updated_at` index;
 * - with `BENCH_BETTER_SQLITE3=<path of an installed better-sqlite3>`, the same on it, to set
 *   libsql's binding against another (stepflow does not depend on it).
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { SqliteThread } from "../src/sessions/sqlite-thread.ts";
import { printTable } from "./measure.ts";
import { INSERT_RUN, ROWS_PER_TRANSACTION, SESSIONS_SCHEMA, benchFile, runRowArgs } from "./sqlite-bench-row.ts";

const ROWS = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const { file, remove: removeFile } = benchFile("sqlite-row");

/** CPU µs each thread of this process has used, by thread id (Linux). */
function threadCpu(): Map<string, number> {
  const used = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    used.set(tid, (Number(fields[11]) + Number(fields[12])) * 10_000); // clock ticks of 10 ms
  }
  return used;
}

/** Through the store's SQLite thread: [its CPU, this thread's] µs per row. */
async function viaThread(): Promise<[number, number]> {
  removeFile();
  const before = new Set(threadCpu().keys());
  const db = await SqliteThread.open({ url: `file:${file}` }, "SQLite bench");
  const worker = [...threadCpu().keys()].filter((tid) => !before.has(tid));
  for (const sql of ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", ...SESSIONS_SCHEMA]) await db.execute(sql);
  const start = threadCpu();
  for (let i = 0; i < ROWS; i += ROWS_PER_TRANSACTION)
    await Promise.all(Array.from({ length: ROWS_PER_TRANSACTION }, () => db.execute({ sql: INSERT_RUN, args: runRowArgs() })));
  const end = threadCpu();
  await db.close();
  const spent = (tids: string[]) => tids.reduce((sum, tid) => sum + (end.get(tid) ?? 0) - (start.get(tid) ?? 0), 0) / ROWS;
  return [spent(worker), spent([String(process.pid)])];
}

interface Statement {
  run(...args: unknown[]): unknown;
}
interface Database {
  exec(sql: string): unknown;
  prepare(sql: string): Statement;
  close(): unknown;
}

/** On a driver with better-sqlite3's API, on this thread: CPU µs per row. */
function direct(open: (path: string) => Database, where: "file" | "memory", index = true): number {
  removeFile();
  const db = open(where === "file" ? file : ":memory:");
  if (where === "file") db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  const [table, updatedIndex] = SESSIONS_SCHEMA;
  db.exec(table as string);
  if (index) db.exec(updatedIndex as string);
  const insert = db.prepare(INSERT_RUN);
  const [begin, commit] = [db.prepare("BEGIN IMMEDIATE"), db.prepare("COMMIT")];
  const before = process.cpuUsage();
  for (let i = 0; i < ROWS; i += ROWS_PER_TRANSACTION) {
    begin.run();
    for (let j = 0; j < ROWS_PER_TRANSACTION; j++) insert.run(...runRowArgs());
    commit.run();
  }
  const used = process.cpuUsage(before);
  db.close();
  return (used.user + used.system) / ROWS;
}

const require = createRequire(import.meta.url);
type Driver = new (path: string) => Database;
const libsql = createRequire(require.resolve("@libsql/client"))("libsql") as Driver;
const betterPath = process.env.BENCH_BETTER_SQLITE3;
const better = betterPath ? (require(betterPath) as Driver) : undefined;

const rows: [string, () => Promise<number[]> | number[]][] = [
  ["the store's SQLite thread (its CPU, the caller's)", viaThread],
  ["libsql on this thread, file", () => [direct((p) => new libsql(p), "file")]],
  ["libsql, file, no updated_at index", () => [direct((p) => new libsql(p), "file", false)]],
  ["libsql, :memory:", () => [direct((p) => new libsql(p), "memory")]],
];
if (better)
  rows.push(
    ["better-sqlite3 on this thread, file", () => [direct((p) => new better(p), "file")]],
    ["better-sqlite3, :memory:", () => [direct((p) => new better(p), "memory")]],
  );

const results: number[][][] = rows.map(() => []);
for (let round = 0; round < ROUNDS; round++) for (const [i, [, run]] of rows.entries()) results[i]?.push(await run());
removeFile();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
console.log(`${ROWS} rows of 1,225 characters, ${ROWS_PER_TRANSACTION} a transaction, median of ${ROUNDS} rounds`);
printTable(
  ["where", "CPU µs per row"],
  rows.map(([name], i) => [name, (results[i]?.[0] ?? []).map((_, part) => median((results[i] ?? []).map((r) => r[part] ?? NaN)).toFixed(1)).join(", ")]),
);
