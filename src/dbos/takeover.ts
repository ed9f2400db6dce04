/**
 * Takeover of a dead worker's runs by a live one. DBOS recovers a dead executor's runs only
 * when asked (its own restart, or Conductor); in a deployment whose dead worker ids never come
 * back (pods, autoscaling), a live worker must ask. So every worker beats in a table; a worker
 * that sees another's last beat older than `takeoverAfter` seconds claims that worker's row
 * (a row lock: two live workers never both take the same worker over) and has DBOS put its
 * unfinished runs back on their queue, where any worker takes each of them once.
 */
import type { Pool, PoolClient } from "pg";
import { createTable } from "./checkpoints.ts";
import { DbosDatabaseError, DbosRuntimeError } from "./errors.ts";

const SCHEMA = `CREATE TABLE IF NOT EXISTS stepflow_dbos_workers (
  worker_id TEXT PRIMARY KEY,
  version TEXT NOT NULL,
  heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  beat_every_ms INTEGER NOT NULL,
  taken_over_by TEXT,
  taken_over_at TIMESTAMPTZ)`;

/** A dead worker taken over: its id, and the runs of it that were put back on the queue. @example `{ workerId: "w1", runs: ["3f2…"] }` */
export interface Takeover {
  readonly workerId: string;
  readonly runs: readonly string[];
}

/** What a takeover needs from DBOS: put the unfinished runs of `workerId` (of this worker's version) back on their queue. */
export type RecoverRuns = (workerId: string) => Promise<string[]>;

/** The heartbeats of one worker, and its takeovers of others. */
export class Heartbeats {
  readonly #pool: Pool;
  readonly #database: string;
  readonly #workerId: string;
  readonly #version: string;
  /** Seconds without a beat after which a worker is taken over; undefined: never automatically. */
  readonly #takeoverAfter: number | undefined;
  readonly #beatEvery: number;
  readonly #recover: RecoverRuns;
  readonly #onTakeover: (takeover: Takeover) => void;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> = Promise.resolve();

  constructor(options: {
    readonly pool: Pool;
    readonly database: string;
    readonly workerId: string;
    readonly version: string;
    readonly takeoverAfter: number | undefined;
    readonly recover: RecoverRuns;
    readonly onTakeover: (takeover: Takeover) => void;
  }) {
    this.#pool = options.pool;
    this.#database = options.database;
    this.#workerId = options.workerId;
    this.#version = options.version;
    this.#takeoverAfter = options.takeoverAfter;
    // Five beats in the time a worker is given: a beat or two lost to a busy machine is not a death.
    this.#beatEvery = ((options.takeoverAfter ?? 30) * 1000) / 5;
    this.#recover = options.recover;
    this.#onTakeover = options.onTakeover;
  }

  /** Makes the table (once per database), beats now, then beats and looks for dead workers every fifth of `takeoverAfter`. */
  async start(): Promise<void> {
    await this.#withClient((client) => createTable(client, SCHEMA));
    await this.#beat();
    this.#timer = setInterval(() => {
      // One tick at a time: a slow database delays the next one rather than piling them up.
      this.#tick = this.#tick.then(() => this.#beatAndSweep());
    }, this.#beatEvery);
    this.#timer.unref();
  }

  /** Stops beating (and looking for dead workers); resolves once a look under way has ended. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#tick;
  }

  /**
   * Says this worker is gone (it stopped, leaving runs unfinished): a live worker takes them
   * over at its next look, rather than after `takeoverAfter`.
   */
  async handOver(): Promise<void> {
    await this.#query("UPDATE stepflow_dbos_workers SET heartbeat_at = 'epoch' WHERE worker_id = $1 AND taken_over_by IS NULL", [this.#workerId]);
  }

  async #beatAndSweep(): Promise<void> {
    try {
      await this.#beat();
      if (this.#takeoverAfter !== undefined) for (const takeover of await this.#sweep(this.#takeoverAfter)) this.#onTakeover(takeover);
    } catch {
      // The database is away: DBOS reports that to the runs; the next tick tries again.
    }
  }

  async #beat(): Promise<void> {
    await this.#query(
      `INSERT INTO stepflow_dbos_workers (worker_id, version, beat_every_ms) VALUES ($1, $2, $3)
       ON CONFLICT (worker_id) DO UPDATE SET version = EXCLUDED.version, beat_every_ms = EXCLUDED.beat_every_ms, heartbeat_at = now(), taken_over_by = NULL, taken_over_at = NULL`,
      [this.#workerId, this.#version, Math.round(this.#beatEvery)],
    );
  }

  /** Takes over every worker of this version whose last beat is older than `seconds`, each by one live worker only. */
  async #sweep(seconds: number): Promise<Takeover[]> {
    return this.#withClient(async (client) => {
      const taken: Takeover[] = [];
      await client.query("BEGIN");
      try {
        // SKIP LOCKED: a row another live worker is taking over right now is its business.
        const dead = await client.query(
          `SELECT worker_id FROM stepflow_dbos_workers
           WHERE worker_id <> $1 AND version = $2 AND taken_over_by IS NULL AND heartbeat_at < now() - make_interval(secs => $3)
           ORDER BY worker_id FOR UPDATE SKIP LOCKED`,
          [this.#workerId, this.#version, seconds],
        );
        for (const { worker_id: workerId } of dead.rows as { worker_id: string }[]) taken.push(await this.#takeOver(client, workerId));
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
      return taken;
    });
  }

  /**
   * Takes `workerId` over, whatever `takeoverAfter` says, once it has missed two of its beats:
   * if it beat lately, waits until it has, and refuses if it beats meanwhile (it is alive, and
   * its runs would run twice).
   */
  async takeOver(workerId: string): Promise<Takeover> {
    if (workerId === this.#workerId) throw new DbosRuntimeError(`Worker "${workerId}" is this worker: a worker recovers its own runs when it starts.`);
    let seen: string | undefined;
    for (;;) {
      const step = await this.#withClient(async (client): Promise<{ takeover: Takeover } | { wait: number; beat: string }> => {
        await client.query("BEGIN");
        try {
          // A worker that never beat (one of an older stepflow, or a mistyped id) counts as silent for ever.
          await client.query(
            `INSERT INTO stepflow_dbos_workers (worker_id, version, heartbeat_at, beat_every_ms) VALUES ($1, $2, 'epoch', 0) ON CONFLICT (worker_id) DO NOTHING`,
            [workerId, this.#version],
          );
          const found = await client.query(
            `SELECT heartbeat_at::text AS beat, EXTRACT(EPOCH FROM now() - heartbeat_at)::float8 * 1000 AS silent, beat_every_ms
             FROM stepflow_dbos_workers WHERE worker_id = $1 FOR UPDATE`,
            [workerId],
          );
          const row = found.rows[0] as { beat: string; silent: number; beat_every_ms: number };
          const wait = 2 * row.beat_every_ms - row.silent;
          if (seen !== undefined && row.beat !== seen) {
            throw new DbosRuntimeError(
              `Worker "${workerId}" is alive (it beat while waiting to recover its runs, which would then run twice): stop it first, then recover its runs.`,
            );
          }
          if (wait > 0) {
            await client.query("ROLLBACK");
            return { wait, beat: row.beat };
          }
          const takeover = await this.#takeOver(client, workerId);
          await client.query("COMMIT");
          return { takeover };
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw error;
        }
      });
      if ("takeover" in step) return step.takeover;
      seen = step.beat;
      await new Promise((resolve) => setTimeout(resolve, step.wait));
    }
  }

  /** With the worker's row locked: its runs back on the queue, then the row marked, in the transaction that holds the lock. */
  async #takeOver(client: PoolClient, workerId: string): Promise<Takeover> {
    // DBOS moves each run from PENDING on `workerId` to ENQUEUED in one UPDATE: a run is taken once even if this transaction then fails.
    const runs = await this.#recover(workerId);
    await client.query("UPDATE stepflow_dbos_workers SET taken_over_by = $2, taken_over_at = now() WHERE worker_id = $1", [workerId, this.#workerId]);
    return { workerId, runs };
  }

  async #withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw this.#error(error);
    }
    try {
      return await work(client);
    } catch (error) {
      throw error instanceof DbosRuntimeError ? error : this.#error(error);
    } finally {
      client.release();
    }
  }

  async #query(sql: string, args: unknown[]): Promise<void> {
    try {
      await this.#pool.query(sql, args);
    } catch (error) {
      throw this.#error(error);
    }
  }

  #error(error: unknown): DbosDatabaseError {
    return new DbosDatabaseError(`Cannot use the worker heartbeats in ${this.#database}: ${(error as Error).message}`, this.#database, { cause: error });
  }
}
