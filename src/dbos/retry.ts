/**
 * Stepflow's own database work (checkpoints, journal claims, heartbeats, session saves) riding
 * through a PostgreSQL restart or failover as DBOS's own queries do: an error that says the
 * connection went away is retried with a bounded backoff; after `tolerance` seconds of them the
 * caller gets a `DbosDatabaseError` naming the database. Any other error is thrown at once.
 */
// DBOS's own test of "the connection went away" (SQLSTATE classes 08/57P0x, ECONNRESET, "Connection terminated", …):
// the same errors are retried by its queries and by ours, so both ride through the same outages.
import { retriablePostgresException } from "@dbos-inc/dbos-sdk/internal/system_database";
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

/** Whether `error` says the database could not be reached or dropped the connection (rather than that the query was wrong). @example isConnectionError(Object.assign(new Error("x"), { code: "ECONNREFUSED" })) // true */
export function isConnectionError(error: unknown): boolean {
  return retriablePostgresException(error);
}

/**
 * Runs `work`, again after each connection error, with a backoff from 50 ms doubling to 2 s
 * (jittered, so that workers coming back together do not all knock at once), until it
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
      wait = Math.min(wait * 2, 2000);
    }
  }
}
