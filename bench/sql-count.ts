/**
 * Counts the SQL statements this process sends to PostgreSQL on behalf of some work: every
 * query of every `pg` client (DBOS's and stepflow's pools share the one `pg` module) made in
 * the asynchronous context of `counted(...)`, by the table it touches; or, in `timed(...)`,
 * records when each was sent and answered. Background work started elsewhere (queue polls,
 * heartbeats) is not counted, being outside that context.
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

/** One statement of a {@link timed} piece of work: when it was sent and answered (ms from the work's start), its kind and its text. */
export interface TimedStatement {
  readonly sent: number;
  answered: number | undefined;
  readonly kind: string;
  readonly text: string;
}

/** What the statements of the work under way are recorded in. */
interface Recorder {
  readonly counts?: SqlCounts;
  readonly timeline?: { readonly start: number; readonly statements: TimedStatement[] };
}

const storage = new AsyncLocalStorage<Recorder>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const recorder = storage.getStore();
    if (!recorder) return query.apply(this, args);
    const first = args[0];
    const text = typeof first === "string" ? first : ((first as { text?: string } | undefined)?.text ?? "");
    const kind = KINDS.find(([, pattern]) => pattern.test(text))?.[0] ?? "other";
    const { counts, timeline } = recorder;
    counts?.set(kind, (counts.get(kind) ?? 0) + 1);
    if (!timeline) return query.apply(this, args);
    const statement: TimedStatement = { sent: performance.now() - timeline.start, answered: undefined, kind, text: text.replace(/\s+/g, " ").trim() };
    timeline.statements.push(statement);
    const answered = () => void (statement.answered = performance.now() - timeline.start);
    // pg-pool's `pool.query` passes a callback; a client's own `query` returns a promise.
    const callback = args.findIndex((arg) => typeof arg === "function");
    if (callback >= 0) {
      const original = args[callback] as (...results: unknown[]) => unknown;
      args[callback] = (...results: unknown[]) => (answered(), original(...results));
      return query.apply(this, args);
    }
    const result = query.apply(this, args);
    if (result instanceof Promise) result.then(answered, answered);
    return result;
  };
}

/** Runs `work` and counts the statements it sends. */
export async function counted<T>(counts: SqlCounts, work: () => Promise<T>): Promise<T> {
  install();
  return storage.run({ counts }, work);
}

/** Runs `work` and records when each statement it sends was sent and answered. */
export async function timed(work: () => Promise<unknown>): Promise<{ ms: number; statements: TimedStatement[] }> {
  install();
  const timeline = { start: performance.now(), statements: [] as TimedStatement[] };
  await storage.run({ timeline }, work);
  return { ms: performance.now() - timeline.start, statements: timeline.statements };
}

/** How long some statement of `statements` was under way (sent and not answered yet), ms. */
export function inFlight(statements: readonly TimedStatement[], end: number): number {
  let busy = 0;
  let until = 0;
  for (const { sent, answered = end } of [...statements].sort((a, b) => a.sent - b.sent)) {
    busy += Math.max(0, answered - Math.max(sent, until));
    until = Math.max(until, answered);
  }
  return busy;
}

/** Total of `counts`. */
export function total(counts: SqlCounts): number {
  let sum = 0;
  for (const n of counts.values()) sum += n;
  return sum;
}
