/**
 * The checkpoints of durable runs: after every step execution that finishes, the run's saved
 * context (`ctx.toJSON()`) replaces the previous one, in the database DBOS keeps its own
 * tables in. A worker that takes over a run restores the newest checkpoint, so the step
 * executions that finished before do not run again.
 */
import pg from "pg";
import type { Pool, PoolClient } from "pg";
import { maskCredentials } from "../core/internal.ts";
import type { ContextJSON, Json, SavedEvent } from "../core/internal.ts";
import { DbosDatabaseError } from "./errors.ts";
import { claimKeys } from "./fenced-journal.ts";
import { fenceArgs, fenceCte, leaseLost } from "./lease.ts";
import type { Fence } from "./lease.ts";
import { EVENTS_STREAM } from "./protocol.ts";
import { retrying } from "./retry.ts";
import { appendEvents, streamTableMismatch } from "./run-stream.ts";

const SCHEMA = `CREATE TABLE IF NOT EXISTS stepflow_dbos_checkpoints (
  run_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  answered INTEGER NOT NULL,
  context JSONB NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now());
ALTER TABLE stepflow_dbos_checkpoints ADD COLUMN IF NOT EXISTS outcome JSONB;
ALTER TABLE stepflow_dbos_checkpoints ADD COLUMN IF NOT EXISTS parked BOOLEAN NOT NULL DEFAULT false`;
const SCHEMA_LOCK = 748_213_926; // serialises CREATE … IF NOT EXISTS of processes starting together

/**
 * Runs `schema` (CREATE … IF NOT EXISTS) in a transaction of its own under an advisory lock: two
 * processes starting together on a new database would otherwise both create and one fail.
 * @example await createTable(client, "CREATE TABLE IF NOT EXISTS t (id TEXT PRIMARY KEY)");
 */
export async function createTable(client: PoolClient, schema: string): Promise<void> {
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
    await client.query(schema);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** One run's newest checkpoint: its number, how many answers it holds, and the saved context. @example `{ seq: 3, answered: 1, context }` */
export interface Checkpoint {
  readonly seq: number;
  /** How many of the run's answers (sent with `respond`) the context already holds. */
  readonly answered: number;
  readonly context: ContextJSON;
  /** Whether the part that wrote it ended there, waiting for an answer (its part is over: replayed, it ends waiting again). */
  readonly parked?: boolean;
}

/** `url` as messages show it: no password. @example describeDatabase("postgres://u:secret@h/db") // "postgres://u:***@h/db" */
export function describeDatabase(url: string): string {
  return maskCredentials(url);
}

/**
 * Connects to `url` and checks it answers, so that a worker fails at once, saying what is
 * missing, rather than when its first run starts.
 */
export async function openPool(url: string, connections = 4): Promise<Pool> {
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url)) {
    throw new DbosDatabaseError(
      `The DBOS runtime needs a PostgreSQL URL like postgres://user:password@localhost:5432/stepflow; got ${typeof url === "string" ? JSON.stringify(describeDatabase(url)) : typeof url}.`,
      typeof url === "string" ? describeDatabase(url) : "",
    );
  }
  const pool = new pg.Pool({ connectionString: url, max: connections, connectionTimeoutMillis: 10_000 });
  pool.on("error", () => {}); // an idle client's lost connection: the next query reports it
  // A checked-out client's lost connection: the query under way (or the next) reports it, never the process.
  pool.on("connect", (client) => client.on("error", () => {}));
  try {
    const client = await pool.connect();
    try {
      await createTable(client, SCHEMA);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw unreachable(url, error);
  }
  return pool;
}

const STARTUP_LOCK = 748_213_927;

/**
 * Runs `work` (DBOS creating or upgrading its tables) while no other worker or client of this
 * database does: DBOS's migrations fail when several processes start on a new database at once.
 */
export async function whileStartingAlone<T>(pool: Pool, work: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    // Tried, not waited for: a waiting lock query is a transaction, and DBOS's CREATE INDEX
    // CONCURRENTLY in the process holding the lock waits for every transaction to end.
    for (let wait = 20; !(await client.query("SELECT pg_try_advisory_lock($1) AS ok", [STARTUP_LOCK])).rows[0]?.ok; wait = Math.min(wait * 2, 500)) {
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    try {
      return await work();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [STARTUP_LOCK]);
    }
  } finally {
    client.release();
  }
}

/** The error for a database that cannot be used: which one, why, and what to do. */
export function unreachable(url: string, error: unknown): DbosDatabaseError {
  const where = describeDatabase(url);
  const { code, message } = error as { code?: string; message?: string };
  const hint =
    code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "ETIMEDOUT"
      ? "Start PostgreSQL there, or pass the URL of one that runs (--database, or DATABASE_URL)."
      : code === "3D000"
        ? "Create that database (createdb), or name one that exists."
        : code === "28P01" || code === "28000"
          ? "Check the user and password in the URL."
          : "Check that the URL is right and that PostgreSQL accepts connections from this machine.";
  return new DbosDatabaseError(`Cannot use PostgreSQL at ${where} for durable runs: ${message ?? String(error)}${code ? ` (${code})` : ""}. ${hint}`, where, {
    cause: error,
  });
}

/** How a run ended, kept with its checkpoint once the run has ended. @example `{ kind: "finished", result: { response: "Done." } }` */
export type RecordedOutcome =
  { readonly kind: "finished"; readonly result: Json } | { readonly kind: "failed"; readonly error: { readonly name: string; readonly message: string } };

/**
 * A run's failure as recorded: the class name and message of what was thrown (any thrown value).
 * @example failedWith(new TypeError("bad")) // { kind: "failed", error: { name: "TypeError", message: "bad" } }
 */
export function failedWith(error: unknown): Extract<RecordedOutcome, { kind: "failed" }> {
  const { name, message } = error instanceof Error ? error : { name: "Error", message: String(error) };
  return { kind: "failed", error: { name, message } };
}

/** Keys of the journal of side effects to claim with a checkpoint, and for whom (see `claimant` in `lease.ts`). @example `{ keys: ["once:run-1:exec-2:charge"], claimant: "w1@3/run-1:9f…" }` */
export interface JournalClaims {
  readonly keys: readonly string[];
  readonly claimant: string;
}

/** What a part finds of its run: the newest checkpoint, and the run's outcome if its end is recorded. @example `{ checkpoint: undefined, outcome: { kind: "finished", result: 4 } }` */
export interface Found {
  readonly checkpoint: Checkpoint | undefined;
  readonly outcome: RecordedOutcome | undefined;
}

/**
 * The checkpoints of runs in one database. Every write is fenced (see `lease.ts`) and retried
 * through an outage (see `retry.ts`).
 */
export class Checkpoints {
  constructor(
    private readonly pool: Pool,
    private readonly database: string,
    private readonly tolerance: number,
  ) {}

  /**
   * The newest checkpoint of `runId` and its outcome, if recorded; throws `DbosLeaseLostError`
   * unless `fence` holds. `first`, the run before its first step: written in the same statement
   * when the run has no checkpoint yet (a new run), and then the checkpoint found.
   */
  async load(runId: string, fence: Fence, first?: Checkpoint): Promise<Found> {
    const found =
      first === undefined
        ? await this.#query(
            `WITH ${fenceCte(2)} SELECT (SELECT count(*) FROM fence)::int AS held, 0 AS inserted, c.seq, c.answered, c.context, c.outcome, c.parked
             FROM (SELECT 1) one LEFT JOIN stepflow_dbos_checkpoints c ON c.run_id = $1`,
            [runId, ...fenceArgs(fence)],
          )
        : await this.#query(
            `WITH ${fenceCte(2)},
               existing AS (SELECT seq, answered, context, outcome, parked FROM stepflow_dbos_checkpoints WHERE run_id = $1),
               inserted AS (INSERT INTO stepflow_dbos_checkpoints (run_id, seq, answered, context)
                 SELECT $1, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM fence) AND NOT EXISTS (SELECT 1 FROM existing)
                 ON CONFLICT (run_id) DO NOTHING RETURNING 1)
             SELECT (SELECT count(*) FROM fence)::int AS held, (SELECT count(*) FROM inserted)::int AS inserted,
               c.seq, c.answered, c.context, c.outcome, c.parked
             FROM (SELECT 1) one LEFT JOIN existing c ON true`,
            [runId, ...fenceArgs(fence), first.seq, first.answered, JSON.stringify(first.context)],
          );
    const row = found.rows[0] as {
      held: number;
      inserted: number;
      seq: number | null;
      answered: number;
      context: ContextJSON;
      outcome: RecordedOutcome | null;
      parked: boolean;
    };
    // A recorded end is the run's, whoever asks: a part delivered again returns it.
    if (row.outcome) return { checkpoint: undefined, outcome: row.outcome };
    if (row.held === 0) throw leaseLost(fence, `the start of run ${runId}`);
    if (row.seq !== null) return { checkpoint: { seq: row.seq, answered: row.answered, context: row.context, parked: row.parked }, outcome: undefined };
    if (first === undefined) return { checkpoint: undefined, outcome: undefined };
    if (row.inserted === 1) return { checkpoint: first, outcome: undefined };
    // Written by another execution between this statement's snapshot and its insert: that one is the run's.
    return this.load(runId, fence);
  }

  /**
   * Keeps `checkpoint` unless a newer one (a larger `seq`) is there already, or the run's end is,
   * and with it appends `events` (streamed before it) to the run's stream; throws
   * `DbosLeaseLostError` unless `fence` holds. With `claims`, claims those keys of the journal
   * of side effects (`FencedJournal`'s table) for `claims.claimant` in the same statement, each
   * that no one holds yet, and resolves with the keys it claimed: the claim of work that waits
   * for this checkpoint costs no round trip of its own.
   */
  async save(runId: string, checkpoint: Checkpoint, fence: Fence, events?: readonly SavedEvent[], claims?: JournalClaims): Promise<readonly string[]> {
    return this.#write(runId, checkpoint, null, fence, events, claims);
  }

  /** Records how the run ended (its context is of no more use), with the last `events` it streamed, in one write: from then on the run is never executed again. */
  async end(
    runId: string,
    last: { readonly seq: number; readonly answered: number },
    outcome: RecordedOutcome,
    fence: Fence,
    events?: readonly SavedEvent[],
  ): Promise<void> {
    await this.#write(runId, { ...last, context: null }, outcome, fence, events, undefined);
  }

  async #write(
    runId: string,
    checkpoint: Omit<Checkpoint, "context"> & { readonly context: ContextJSON | null },
    outcome: RecordedOutcome | null,
    fence: Fence,
    events: readonly SavedEvent[] | undefined,
    claims: JournalClaims | undefined,
  ): Promise<readonly string[]> {
    const parked = checkpoint.parked === true && outcome === null;
    const upsert = `INSERT INTO stepflow_dbos_checkpoints (run_id, seq, answered, context, outcome, parked)
       SELECT $1, $2, $3, $4, $5, ${parked ? "true" : "false"} WHERE EXISTS (SELECT 1 FROM fence)
       ON CONFLICT (run_id) DO UPDATE SET seq = EXCLUDED.seq, answered = EXCLUDED.answered, context = EXCLUDED.context, outcome = EXCLUDED.outcome,
         parked = EXCLUDED.parked, updated_at = now()
       WHERE stepflow_dbos_checkpoints.seq < EXCLUDED.seq AND stepflow_dbos_checkpoints.outcome IS NULL`;
    const args = [
      runId,
      checkpoint.seq,
      checkpoint.answered,
      JSON.stringify(checkpoint.context ?? {}),
      outcome === null ? null : JSON.stringify(outcome),
      ...fenceArgs(fence),
    ];
    const ctes = [`${fenceCte(6)}`, `saved AS (${upsert} RETURNING 1)`];
    // The events go in only with the checkpoint: a retry of a write that landed appends them no second time.
    if (events !== undefined && events.length > 0) {
      ctes.push(`appended AS (${appendEvents(args.length + 1, "EXISTS (SELECT 1 FROM saved)")})`);
      args.push(EVENTS_STREAM, JSON.stringify(events));
    }
    // A claim needs the fence only: a checkpoint not kept here (a newer one is there) was written before it all the same.
    if (claims !== undefined && claims.keys.length > 0) {
      ctes.push(`claimed AS (${claimKeys(`$${args.length + 1}`, `$${args.length + 2}`)} RETURNING key)`);
      args.push([...claims.keys], claims.claimant);
    }
    const claimed = claims !== undefined && claims.keys.length > 0 ? "ARRAY(SELECT key FROM claimed)" : "ARRAY[]::text[]";
    const written = await this.#query(`WITH ${ctes.join(", ")} SELECT (SELECT count(*) FROM saved)::int AS saved, ${claimed} AS claimed`, args);
    const row = written.rows[0] as { saved: number; claimed: string[] };
    if (row.saved === 1) return row.claimed;
    // Nothing written: a newer checkpoint was there (this write is a retry of one that landed), or the fence is gone.
    const held = await this.#query(`WITH ${fenceCte(1)} SELECT count(*)::int AS held FROM fence`, fenceArgs(fence));
    if ((held.rows[0] as { held: number }).held === 0) throw leaseLost(fence, `checkpoint ${checkpoint.seq} of run ${runId}`);
    return row.claimed;
  }

  async #query(sql: string, args: unknown[]): Promise<pg.QueryResult> {
    try {
      return await retrying(() => this.pool.query(sql, args), { database: this.database, what: "the checkpoints of durable runs", tolerance: this.tolerance });
    } catch (error) {
      if (error instanceof DbosDatabaseError) throw error;
      const mismatch = streamTableMismatch(error);
      if (mismatch) throw mismatch;
      throw new DbosDatabaseError(`Cannot use the checkpoints of durable runs in ${this.database}: ${(error as Error).message}`, this.database, {
        cause: error,
      });
    }
  }
}
