/**
 * The checkpoints of durable runs: after every step execution that finishes, the run's saved
 * context (`ctx.toJSON()`) replaces the previous one, in the database DBOS keeps its own
 * tables in. A worker that takes over a run restores the newest checkpoint, so the step
 * executions that finished before do not run again.
 */
import pg from "pg";
import type { Pool, PoolClient } from "pg";
import { maskCredentials } from "../core/internal.ts";
import type { ContextJSON } from "../core/internal.ts";
import { DbosDatabaseError } from "./errors.ts";

const SCHEMA = `CREATE TABLE IF NOT EXISTS stepflow_dbos_checkpoints (
  run_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  answered INTEGER NOT NULL,
  context JSONB NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
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

/** The checkpoints of runs in one database. */
export class Checkpoints {
  constructor(
    private readonly pool: Pool,
    private readonly database: string,
  ) {}

  /** The newest checkpoint of `runId`, or `undefined` if the run has none yet. */
  async load(runId: string): Promise<Checkpoint | undefined> {
    const found = await this.#query("SELECT seq, answered, context FROM stepflow_dbos_checkpoints WHERE run_id = $1", [runId]);
    const row = found.rows[0] as { seq: number; answered: number; context: ContextJSON } | undefined;
    return row && { seq: row.seq, answered: row.answered, context: row.context };
  }

  /** Keeps `checkpoint` unless a newer one (a larger `seq`) is there already. */
  async save(runId: string, checkpoint: Checkpoint): Promise<void> {
    await this.#query(
      `INSERT INTO stepflow_dbos_checkpoints (run_id, seq, answered, context) VALUES ($1, $2, $3, $4)
       ON CONFLICT (run_id) DO UPDATE SET seq = EXCLUDED.seq, answered = EXCLUDED.answered, context = EXCLUDED.context, updated_at = now()
       WHERE stepflow_dbos_checkpoints.seq < EXCLUDED.seq`,
      [runId, checkpoint.seq, checkpoint.answered, JSON.stringify(checkpoint.context)],
    );
  }

  /** Forgets the checkpoint of a run that ended: its outcome is DBOS's record from then on. */
  async remove(runId: string): Promise<void> {
    await this.#query("DELETE FROM stepflow_dbos_checkpoints WHERE run_id = $1", [runId]);
  }

  async #query(sql: string, args: unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.pool.query(sql, args);
    } catch (error) {
      throw new DbosDatabaseError(`Cannot use the checkpoints of durable runs in ${this.database}: ${(error as Error).message}`, this.database, {
        cause: error,
      });
    }
  }
}
