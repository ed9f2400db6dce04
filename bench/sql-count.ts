/**
 * Counts the SQL statements this process sends to PostgreSQL on behalf of some work: every
 * query of every `pg` client (DBOS's and stepflow's pools share the one `pg` module) made in
 * the asynchronous context of `counted(...)`, by the table it touches. Background work started
 * elsewhere (queue polls, heartbeats) is not counted, being outside that context.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";

/** The kinds statements are counted by, the first pattern that matches a statement's text. */
const KINDS: readonly (readonly [string, RegExp])[] = [
  ["stepflow_dbos_checkpoints", /stepflow_dbos_checkpoints/],
  ["stepflow_journal", /stepflow_journal/],
  // Before the workers' table and DBOS's status table, which a fenced write of events names in its fence.
  ["dbos.streams", /\bstreams\b/],
  ["stepflow_dbos_workers", /stepflow_dbos_workers/],
  ["stepflow_dbos_session_turns", /stepflow_dbos_session_turns|stepflow_sessions/],
  ["dbos.workflow_status", /workflow_status/],
  ["dbos.operation_outputs", /operation_outputs/],
  ["dbos.notifications", /notifications/],
  ["dbos.workflow_events", /workflow_events/],
  ["BEGIN/COMMIT/ROLLBACK", /^\s*(BEGIN|COMMIT|ROLLBACK|START TRANSACTION)/i],
];

/** Statements counted so far, by kind. */
export type SqlCounts = Map<string, number>;

const storage = new AsyncLocalStorage<SqlCounts>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const counts = storage.getStore();
    if (counts) {
      const first = args[0];
      const text = typeof first === "string" ? first : ((first as { text?: string } | undefined)?.text ?? "");
      const kind = KINDS.find(([, pattern]) => pattern.test(text))?.[0] ?? "other";
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    return query.apply(this, args);
  };
}

/** Runs `work` and counts the statements it sends. */
export async function counted<T>(counts: SqlCounts, work: () => Promise<T>): Promise<T> {
  install();
  return storage.run(counts, work);
}

/** Total of `counts`. */
export function total(counts: SqlCounts): number {
  let sum = 0;
  for (const n of counts.values()) sum += n;
  return sum;
}
