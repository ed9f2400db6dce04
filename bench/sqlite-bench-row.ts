/**
 * The row bench/sqlite-row.ts and bench/sqlite-stalls.ts write: a finished run as the server
 * saves it (a 1,225-character snapshot, a time-ordered id) into the session store's own table,
 * with its `id` key and `updated_at` index, in a file of the benchmark's own.
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newRunId } from "../src/core/internal.ts";

/**
 * The session store's table and its index, as `CREATE` statements.
 * @example for (const sql of SESSIONS_SCHEMA) db.exec(sql);
 */
export const SESSIONS_SCHEMA: readonly string[] = [
  `CREATE TABLE stepflow_sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, snapshot TEXT NOT NULL,
     message_count INTEGER NOT NULL, save_token TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
  "CREATE INDEX stepflow_sessions_updated ON stepflow_sessions (updated_at DESC)",
];

/**
 * The store's statement for a run's first save.
 * @example db.prepare(INSERT_RUN).run(...runRowArgs());
 */
export const INSERT_RUN =
  "INSERT INTO stepflow_sessions (id, version, snapshot, message_count, save_token, created_at, updated_at) VALUES (?, 1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING";

/** Transactions of this many rows: what 32 clients' run-and-waits share over HTTP. */
export const ROWS_PER_TRANSACTION = 16;

const SNAPSHOT = "x".repeat(1225);

/**
 * The arguments of {@link INSERT_RUN} for a new run, made now.
 * @example await db.execute({ sql: INSERT_RUN, args: runRowArgs() });
 */
export function runRowArgs(): [string, string, number, string, number, number] {
  const now = Date.now();
  return [`handler:${newRunId(now)}`, SNAPSHOT, 0, globalThis.crypto.randomUUID(), now, now];
}

/**
 * A database path of the benchmark's own in the temporary folder, and a function that removes
 * the file with its log and shared-memory files (before each fresh start, and at the end).
 * @example const { file, remove } = benchFile("sqlite-row"); remove();
 */
export function benchFile(name: string): { file: string; remove: () => void } {
  const file = join(tmpdir(), `stepflow-${name}-${process.pid}.db`);
  return { file, remove: () => ["", "-wal", "-shm"].forEach((suffix) => rmSync(file + suffix, { force: true })) };
}
