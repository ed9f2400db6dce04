/**
 * Stepflow's own database work (checkpoints, journal claims, heartbeats, session saves) riding
 * through a PostgreSQL restart or failover as DBOS's own queries do: an error that says the
 * connection went away is retried with a bounded backoff; after `tolerance` seconds of them the
 * caller gets a `DbosDatabaseError` naming the database. Any other error is thrown at once.
 *
 * Both backoffs are capped low ({@link MAX_RETRY_WAIT_MS}): a retry costs a refused connection,
 * nothing to a database that is down, while a long cap leaves a run idle long after the database
 * came back (DBOS's own doubles up to 60 s: a run waiting in a 40 s outage resumed some 20 s late).
 */
// DBOS's own test of "the connection went away" (SQLSTATE classes 08/57P0x, ECONNRESET, "Connection terminated", …):
// the same errors are retried by its queries and by ours, so both ride through the same outages.
import { retriablePostgresException } from "@dbos-inc/dbos-sdk/internal/system_database";
// The backoff of DBOS's own retried queries (its workflows' steps, messages, events, results), read at each retry.
import { dbRetryConfig } from "@dbos-inc/dbos-sdk/internal/utils";
import { DbosDatabaseError } from "./errors.ts";

/** How long stepflow's own database work keeps retrying through an outage, in seconds, when a worker names none. @example `{ outageTolerance: DEFAULT_OUTAGE_TOLERANCE * 2 }` */
export const DEFAULT_OUTAGE_TOLERANCE = 120;

/** Where a retried piece of work goes and for how long. @example `{ database: "postgres://u:***@h/db", what: "the checkpoints of durable runs", tolerance: 120 }` */
export interface RetryPolicy {
  /** The database, without its password (it names the database in the error). */
  readonly database: string;
  /** What the work uses, for the error's message: "the checkpoints of durable runs". */
  readonly what: string;
  /** Seconds of connection errors after which the work gives up. */
  readonly tolerance: number;
  /** Called before each wait (to log it); `attempt` counts from 1. */
  readonly onRetry?: (error: unknown, attempt: number, waitMs: number) => void;
}

/**
 * The longest wait between two tries of a query through an outage, in milliseconds, before
 * jitter (±50%): work resumes within about this long of the database coming back.
 * @example `retrying(work, policy)` waits 25–75 ms, then 50–150 ms, … then 350–1050 ms between tries
 */
export const MAX_RETRY_WAIT_MS = 700;

/**
 * Caps the backoff of DBOS's own retried queries at {@link MAX_RETRY_WAIT_MS}, starting at
 * 100 ms (DBOS's defaults: 1 s doubling to 60 s). Process-wide, as DBOS's setting is: called
 * by `DbosWorker.start` and `DbosRuns.connect`.
 * @example
 * retryPromptly(); // then DBOS.launch(), or DBOSClient.create(…)
 */
export function retryPromptly(): void {
  dbRetryConfig.initialBackoffSec = 0.1;
  dbRetryConfig.maxBackoffSec = MAX_RETRY_WAIT_MS / 1000;
}

/** Whether `error` says the database could not be reached or dropped the connection (rather than that the query was wrong). @example isConnectionError(Object.assign(new Error("x"), { code: "ECONNREFUSED" })) // true */
export function isConnectionError(error: unknown): boolean {
  return retriablePostgresException(error);
}

/**
 * Runs `work`, again after each connection error, with a backoff from 50 ms doubling to
 * {@link MAX_RETRY_WAIT_MS} (jittered, so that workers coming back together do not all knock at once), until it
 * succeeds, fails otherwise, or `policy.tolerance` seconds have passed.
 * @example
 * const rows = await retrying(() => pool.query("SELECT 1"), { database, what: "the journal", tolerance: 120 });
 */
export async function retrying<T>(work: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const deadline = Date.now() + policy.tolerance * 1000;
  let wait = 50;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new DbosDatabaseError(
          `Cannot use ${policy.what} in ${policy.database}: the database has not answered for ${policy.tolerance} seconds (${(error as Error).message}). Check that PostgreSQL runs and accepts connections; raise outageTolerance to wait longer.`,
          policy.database,
          { cause: error },
        );
      }
      const ms = Math.min(left, wait * (0.5 + Math.random()));
      policy.onRetry?.(error, attempt, ms);
      await new Promise((resolve) => setTimeout(resolve, ms));
      wait = Math.min(wait * 2, MAX_RETRY_WAIT_MS);
    }
  }
}
