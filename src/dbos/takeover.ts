/**
 * Leases and takeovers. DBOS recovers a dead executor's runs only when asked (its own restart,
 * or Conductor); in a deployment whose dead worker ids never come back (pods, autoscaling), a
 * live worker must ask. So every worker holds a lease (its row in `stepflow_dbos_workers`, at
 * an epoch, see `lease.ts`) and renews it with a beat; a worker whose lease has not been renewed
 * for `takeoverAfter` seconds is taken over by one live worker (a row lock), which raises its
 * epoch — fencing whatever the silent worker still does — and puts its unfinished runs back on
 * their queues, in one transaction.
 *
 * A worker also holds, on a connection of its own, a session lock named after it, which PostgreSQL
 * lets go the moment that connection closes — a killed process's does at once. A worker whose
 * lock is free and that has missed two beats is dead, not slow: it is taken over then, without
 * waiting for `takeoverAfter`. A stalled process keeps its connections, and so its lock: it is
 * taken over by the clock alone. The lock only hastens a takeover; the fence keeps it safe.
 *
 * Every duration is measured by PostgreSQL's clock (`now()`), and a worker takes others over only
 * once it has itself beaten without a break for as long as it wants them to have been silent:
 * for `takeoverAfter`, by the clock alone; for two of their beats, when their lock is free. A
 * break is a beat that came late (the process stalled) or any sign that the database went away
 * (a query retried, the lock's connection lost): after an outage (a restart, a failover) every
 * worker's last beat is old and every lock free, but every sweeper's streak starts again too,
 * and the live workers, which were retrying all along, beat again before anyone may take them
 * over. So a worker that has just started, or has just seen the database come back, takes a
 * dead worker over after two of its beats rather than after `takeoverAfter`.
 */
import type { Pool, PoolClient } from "pg";
import { createTable } from "./checkpoints.ts";
import { DbosDatabaseError, DbosRuntimeError } from "./errors.ts";
import type { Lease } from "./lease.ts";
import { retrying } from "./retry.ts";

const SCHEMA = `CREATE TABLE IF NOT EXISTS stepflow_dbos_workers (
  worker_id TEXT PRIMARY KEY,
  version TEXT NOT NULL,
  heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  beat_every_ms INTEGER NOT NULL,
  taken_over_by TEXT,
  taken_over_at TIMESTAMPTZ);
ALTER TABLE stepflow_dbos_workers ADD COLUMN IF NOT EXISTS epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stepflow_dbos_workers ADD COLUMN IF NOT EXISTS up_since TIMESTAMPTZ NOT NULL DEFAULT now()`;

/** The class of the advisory locks workers hold while their process lives (`pg_try_advisory_lock(ALIVE_LOCK, hashtext(worker_id))`). */
const ALIVE_LOCK = 748_213_928;

/** A dead worker taken over: its id, and the runs of it that were put back on the queue. @example `{ workerId: "w1", runs: ["3f2…"] }` */
export interface Takeover {
  readonly workerId: string;
  readonly runs: readonly string[];
}

/** This worker learnt that its lease was taken: which epoch it lost, and to whom. @example `{ workerId: "w1", epoch: 2, takenOverBy: "w2" }` */
export interface LeaseLoss {
  readonly workerId: string;
  readonly epoch: number;
  /** The worker that took it over, if one did (otherwise a worker started under the same id). */
  readonly takenOverBy: string | undefined;
}

/** The queues a taken-over worker's runs go back to when DBOS had them on none (runs started with `worker.run`). @example `{ parts: "stepflow", runs: "stepflow.runs" }` */
export interface RecoveryQueues {
  /** The queue with the limits, for parts. */
  readonly parts: string;
  /** The unlimited queue runs wait on. */
  readonly runs: string;
}

/** The lease and heartbeats of one worker, and its takeovers of others. */
export class Heartbeats {
  readonly #pool: Pool;
  readonly #database: string;
  readonly #workerId: string;
  readonly #version: string;
  /** Seconds without a beat after which a worker is taken over; undefined: never automatically. */
  readonly #takeoverAfter: number | undefined;
  readonly #beatEvery: number;
  readonly #tolerance: number;
  readonly #queues: RecoveryQueues;
  readonly #onTakeover: (takeover: Takeover) => void;
  readonly #onLeaseLost: (loss: LeaseLoss) => void;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> = Promise.resolve();
  #lease: { readonly lease: Lease; readonly abort: AbortController } | undefined;
  /** The connection that holds this worker's alive lock, once it has it. */
  #alive: PoolClient | undefined;
  /** Waiting for a lease (after one was lost, until the next is acquired). */
  #waiting: (() => void)[] = [];
  /** This worker saw the database go away since its last beat: its streak starts again at its next beat. */
  #interrupted = false;
  /** Takes others over: not before its own queues are registered (its runs' limits hold for what it takes). */
  #takingOver = false;

  constructor(options: {
    /** A pool of the heartbeats' own: a worker busy with runs still beats. */
    readonly pool: Pool;
    readonly database: string;
    readonly workerId: string;
    readonly version: string;
    readonly takeoverAfter: number | undefined;
    readonly tolerance: number;
    readonly queues: RecoveryQueues;
    readonly onTakeover: (takeover: Takeover) => void;
    readonly onLeaseLost: (loss: LeaseLoss) => void;
  }) {
    this.#pool = options.pool;
    this.#database = options.database;
    this.#workerId = options.workerId;
    this.#version = options.version;
    this.#takeoverAfter = options.takeoverAfter;
    // Five beats in the time a worker is given: a beat or two lost to a busy machine is not a death.
    this.#beatEvery = ((options.takeoverAfter ?? 30) * 1000) / 5;
    this.#tolerance = options.tolerance;
    this.#queues = options.queues;
    this.#onTakeover = options.onTakeover;
    this.#onLeaseLost = options.onLeaseLost;
  }

  /** Makes the table (once per database), takes this worker's lease at a new epoch, then beats and looks for dead workers every fifth of `takeoverAfter`. */
  async start(): Promise<void> {
    await this.#retrying(() => this.#withClient((client) => createTable(client, SCHEMA)));
    await this.#retrying(() => this.#acquire());
    await this.#holdAliveLock();
    this.#timer = setInterval(() => {
      // One tick at a time: a slow database delays the next one rather than piling them up.
      this.#tick = this.#tick.then(() => this.#beatAndSweep());
    }, this.#beatEvery);
    this.#timer.unref();
  }

  /** The lease this worker holds now; waits while it holds none (it lost one and has not got the next yet). */
  async lease(): Promise<Lease> {
    while (!this.#lease || this.#lease.lease.signal.aborted) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    return this.#lease.lease;
  }

  /**
   * From two beats on, looks for dead workers at each beat. Called once the worker's queues are
   * registered: runs taken over before (or before DBOS's queue runner has read them back) would
   * be taken from the queue under the limits an earlier worker registered, not this one's
   * `workerConcurrency`.
   */
  takeOverFromNow(): void {
    this.#takingOver = true;
    // Its streak starts again: DBOS's queue runner reads the limits just registered from the database within a second.
    this.#interrupted = true;
  }

  /** Stops beating (and looking for dead workers); resolves once a look under way has ended. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#tick;
    this.#alive?.release(true); // the lock goes with the connection
    this.#alive = undefined;
  }

  /**
   * Takes this worker's alive lock on a connection kept for it, unless held (or tried) already;
   * again after the connection was lost (a database restart). Not having it only leaves this
   * worker to be taken over by the clock alone: a failure here is never an error. Another
   * process under this id may hold it: that one lives, and this worker waits for the next beat.
   */
  async #holdAliveLock(): Promise<void> {
    if (this.#alive) return;
    let client: PoolClient | undefined;
    try {
      client = await this.#pool.connect();
      const taken = await client.query("SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok", [ALIVE_LOCK, this.#workerId]);
      if (!(taken.rows[0] as { ok: boolean }).ok) {
        client.release();
        return;
      }
      const held = client;
      this.#alive = held;
      // A lost connection has lost the lock with it: the next beat takes it again.
      held.once("error", () => {
        if (this.#alive !== held) return; // released by stop()
        this.#alive = undefined;
        this.#interrupted = true; // the server restarted, or the network between went away: others' locks went too
        held.release(true);
      });
    } catch {
      client?.release(true);
    }
  }

  /**
   * Says this worker is gone (it stopped, leaving runs unfinished): a live worker takes them
   * over at its next look, rather than after `takeoverAfter`.
   */
  async handOver(): Promise<void> {
    const held = this.#lease?.lease;
    if (!held) return;
    await this.#query("UPDATE stepflow_dbos_workers SET heartbeat_at = 'epoch' WHERE worker_id = $1 AND epoch = $2 AND taken_over_by IS NULL", [
      this.#workerId,
      held.epoch,
    ]);
  }

  /** A new epoch of this worker's lease: whatever ran under the previous one is fenced off. */
  async #acquire(): Promise<void> {
    const found = await this.#query(
      `INSERT INTO stepflow_dbos_workers (worker_id, version, beat_every_ms, epoch, up_since) VALUES ($1, $2, $3, 1, now())
       ON CONFLICT (worker_id) DO UPDATE SET version = EXCLUDED.version, beat_every_ms = EXCLUDED.beat_every_ms, heartbeat_at = now(),
         up_since = now(), epoch = stepflow_dbos_workers.epoch + 1, taken_over_by = NULL, taken_over_at = NULL
       RETURNING epoch`,
      [this.#workerId, this.#version, Math.round(this.#beatEvery)],
    );
    const epoch = (found.rows[0] as { epoch: number }).epoch;
    const abort = new AbortController();
    this.#lease = { lease: { holder: this.#workerId, epoch, signal: abort.signal }, abort };
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  async #beatAndSweep(): Promise<void> {
    try {
      const streak = await this.#beat();
      await this.#holdAliveLock();
      // The sweep checks, per worker, how long this one must have beaten (two beats, or takeoverAfter): none is shorter.
      if (this.#takingOver && streak !== undefined && this.#takeoverAfter !== undefined && streak >= (2 * this.#beatEvery) / 1000) {
        for (const takeover of await this.#sweep(this.#takeoverAfter)) this.#onTakeover(takeover);
      }
    } catch {
      this.#interrupted = true;
      // The database is away: the next tick tries again (runs ride through the outage with retries of their own).
    }
  }

  /**
   * Renews the lease; resolves with how long (seconds) this worker has beaten without a break,
   * or undefined if it found its lease lost. A break: two beats' time since the last one, or
   * the database gone away meanwhile (as this worker saw it).
   */
  async #beat(): Promise<number | undefined> {
    const held = this.#lease;
    if (!held) return undefined;
    const gap = (2 * this.#beatEvery) / 1000;
    const renewed = await this.#retrying(() => {
      // Read at each try: a try that failed on a lost connection is a break too.
      const interrupted = this.#interrupted;
      this.#interrupted = false;
      return this.#pool.query(
        `UPDATE stepflow_dbos_workers SET heartbeat_at = now(),
           up_since = CASE WHEN $4 OR heartbeat_at < now() - make_interval(secs => $3) THEN now() ELSE up_since END
         WHERE worker_id = $1 AND epoch = $2 AND taken_over_by IS NULL
         RETURNING EXTRACT(EPOCH FROM now() - up_since)::float8 AS streak`,
        [this.#workerId, held.lease.epoch, gap, interrupted],
      );
    });
    const row = renewed.rows[0] as { streak: number } | undefined;
    if (row) return row.streak;
    const now = await this.#query("SELECT taken_over_by FROM stepflow_dbos_workers WHERE worker_id = $1", [this.#workerId]);
    const takenOverBy = (now.rows[0] as { taken_over_by: string | null } | undefined)?.taken_over_by ?? undefined;
    // Its parts stop (their signal), then the worker goes on under a new epoch: the runs it held are elsewhere now.
    held.abort.abort();
    this.#onLeaseLost({ workerId: this.#workerId, epoch: held.lease.epoch, takenOverBy });
    // Not taken over but raised: a second process runs under this id. Taking the lease back would fence that one's
    // runs, and it ours, for ever; this one stays without a lease (its new parts wait) until it is stopped.
    if (takenOverBy === undefined) clearInterval(this.#timer);
    else await this.#acquire();
    return undefined;
  }

  /**
   * Takes over every worker of this version that is dead (database time), each by one live worker
   * only: silent for `seconds` while this worker beat for as long, or silent for two of its beats
   * (its alive lock free: its process is gone) while this worker beat for as long.
   */
  async #sweep(seconds: number): Promise<Takeover[]> {
    const held = this.#lease;
    // Not retried, and not after a break since the beat: its streak would be stale (the next beat starts it again).
    if (!held || this.#interrupted) return [];
    return this.#inTransaction(async (client) => {
      // SKIP LOCKED: a row another live worker is taking over right now is its business. The sweeper's own
      // streak is checked again here, in the database's time, in the transaction that takes over. Two beats are
      // the longer of the dead worker's and this one's. The lock is tried last, on the rows left, in this
      // transaction: it is let go again at its end.
      const dead = await client.query(
        `SELECT w.worker_id FROM stepflow_dbos_workers w
           CROSS JOIN LATERAL (SELECT make_interval(secs => GREATEST($5, 2 * w.beat_every_ms / 1000.0)) AS two_beats) b
           JOIN stepflow_dbos_workers me ON me.worker_id = $1 AND me.epoch = $4 AND me.taken_over_by IS NULL
           WHERE w.worker_id <> $1 AND w.version = $2 AND w.taken_over_by IS NULL
             AND ((w.heartbeat_at < now() - make_interval(secs => $3) AND me.up_since <= now() - make_interval(secs => $3))
                  OR (w.heartbeat_at < now() - b.two_beats AND me.up_since <= now() - b.two_beats
                      AND pg_try_advisory_xact_lock($6, hashtext(w.worker_id))))
           ORDER BY w.worker_id FOR UPDATE OF w SKIP LOCKED`,
        [this.#workerId, this.#version, seconds, held.lease.epoch, (2 * this.#beatEvery) / 1000, ALIVE_LOCK],
      );
      const taken: Takeover[] = [];
      for (const { worker_id: workerId } of dead.rows as { worker_id: string }[]) taken.push(await this.#takeOver(client, workerId));
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
      const step = await this.#retrying(() =>
        this.#inTransaction(async (client): Promise<{ takeover: Takeover } | { wait: number; beat: string }> => {
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
          if (wait > 0) return { wait, beat: row.beat };
          return { takeover: await this.#takeOver(client, workerId) };
        }),
      );
      if ("takeover" in step) return step.takeover;
      seen = step.beat;
      await new Promise((resolve) => setTimeout(resolve, step.wait));
    }
  }

  /**
   * With the worker's row locked: its epoch raised (its writes fenced from now on), and its
   * unfinished runs back on their queues, in one transaction. DBOS's own recovery would put runs
   * that were on no queue (`worker.run`'s) on its internal queue, which has no limits: one
   * worker would take them all at once. They go to this worker's queue with the limits instead,
   * where each worker takes no more than its `workerConcurrency` (a run among them that had
   * parked leaves it again as soon as it is taken, see `leaveSlots` in `worker.ts`).
   */
  async #takeOver(client: PoolClient, workerId: string): Promise<Takeover> {
    await client.query("UPDATE stepflow_dbos_workers SET taken_over_by = $2, taken_over_at = now(), epoch = epoch + 1 WHERE worker_id = $1", [
      workerId,
      this.#workerId,
    ]);
    const recovered = await client.query(
      `UPDATE dbos.workflow_status
       SET status = 'ENQUEUED', owner_xid = NULL, started_at_epoch_ms = NULL, updated_at = (EXTRACT(EPOCH FROM now()) * 1000)::bigint,
           queue_name = COALESCE(queue_name, $3)
       WHERE status = 'PENDING' AND executor_id = $1 AND application_version = $2
       RETURNING workflow_uuid`,
      [workerId, this.#version, this.#queues.parts],
    );
    // A run and its part under way are both put back: the run is named once.
    const runs = [...new Set((recovered.rows as { workflow_uuid: string }[]).map((row) => row.workflow_uuid.replace(/\.part-\d+$/, "")))];
    return { workerId, runs };
  }

  async #inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.#withClient(async (client) => {
      await client.query("BEGIN");
      try {
        const result = await work(client);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    });
  }

  async #withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    // The pool is `openPool`'s: its clients listen for 'error', so a connection dropped while checked out ends no process.
    const client = await this.#pool.connect();
    let broken = false;
    try {
      return await work(client);
    } catch (error) {
      broken = !(error instanceof DbosRuntimeError);
      throw error;
    } finally {
      client.release(broken); // a client that failed is not given to the next user
    }
  }

  #retrying<T>(work: () => Promise<T>): Promise<T> {
    const policy = { database: this.#database, what: "the worker heartbeats", tolerance: this.#tolerance, onRetry: () => void (this.#interrupted = true) };
    return retrying(work, policy).catch((error: unknown) => {
      throw error instanceof DbosRuntimeError || error instanceof DbosDatabaseError ? error : this.#error(error);
    });
  }

  /** One statement, retried through an outage (a failed beat is tried again at the next tick anyway). */
  async #query(sql: string, args: unknown[]) {
    return this.#retrying(() => this.#pool.query(sql, args));
  }

  #error(error: unknown): DbosDatabaseError {
    return new DbosDatabaseError(`Cannot use the worker heartbeats in ${this.#database}: ${(error as Error).message}`, this.#database, { cause: error });
  }
}
