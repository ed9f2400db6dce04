/**
 * A durable run's event stream: the events every part of the run streams, in order, on the
 * run's own DBOS workflow, where `DBOSClient.readStream` reads them until the run ends. Written
 * by stepflow in one fenced statement per write rather than through `DBOS.writeStream`, which
 * would write to the part's workflow and spend a transaction of four statements on it: one
 * stream per run, whichever parts ran it, and a quarter of the round trips.
 */
import type { Pool } from "pg";
import type { SavedEvent } from "../core/internal.ts";
import { DbosDatabaseError, DbosRuntimeError } from "./errors.ts";
import { fenceArgs, fenceCte, leaseLost } from "./lease.ts";
import type { Fence } from "./lease.ts";
import { retrying } from "./retry.ts";

/** How DBOS names plain JSON values, which any reader of the stream decodes without a serializer of its own. */
const PORTABLE_JSON = "portable_json";

/**
 * An INSERT that appends one value to a run's stream when `when` holds: the run's id is `$1`,
 * the stream's key `$first`, the value (JSON) `$first + 1`. For a CTE of a statement that
 * writes something else in the same transaction (a checkpoint).
 * @example `WITH ${fenceCte(4)}, appended AS (${appendEvents(2, "EXISTS (SELECT 1 FROM fence)")}) SELECT 1`
 */
export function appendEvents(first: number, when: string): string {
  const [key, value] = [`$${first}`, `$${first + 1}`];
  return `INSERT INTO dbos.streams (workflow_uuid, key, value, "offset", serialization)
    SELECT $1, ${key}, ${value}, COALESCE((SELECT max(s."offset") FROM dbos.streams s WHERE s.workflow_uuid = $1 AND s.key = ${key}), -1) + 1, '${PORTABLE_JSON}'
    WHERE ${when}`;
}

/** PostgreSQL's codes for a missing table and a missing column. */
const SCHEMA_MISMATCH = new Set(["42P01", "42703"]);

/**
 * The error to throw for `error`, a failed write to DBOS's stream table, when that table is not
 * the one stepflow writes to (another DBOS version): `undefined` for any other failure.
 * @example
 * const mismatch = streamTableMismatch(error);
 * if (mismatch) throw mismatch;
 */
export function streamTableMismatch(error: unknown): DbosRuntimeError | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== "string" || !SCHEMA_MISMATCH.has(code) || typeof message !== "string" || !/\bstreams\b/.test(message)) return undefined;
  return new DbosRuntimeError(
    `DBOS's stream table is not the one stepflow writes a run's events to (${message}): stepflow supports @dbos-inc/dbos-sdk 5.3.x. Install that version.`,
    { cause: error },
  );
}

/**
 * The streams of durable runs in one database.
 * @example
 * const stream = new RunStreams(pool, "postgres://u:***@h/db", 120);
 * await stream.write("3f2…", "stepflow.events", [{ type: "ProgressEvent", data: {} }], fence);
 */
export class RunStreams {
  constructor(
    private readonly pool: Pool,
    private readonly database: string,
    private readonly tolerance: number,
  ) {}

  /** Appends `events` as one value of `runId`'s stream `key`; throws `DbosLeaseLostError` unless `fence` holds. */
  async write(runId: string, key: string, events: readonly SavedEvent[], fence: Fence): Promise<void> {
    for (;;) {
      let written;
      try {
        written = await retrying(
          () =>
            this.pool.query(
              `WITH ${fenceCte(4)}, appended AS (${appendEvents(2, "EXISTS (SELECT 1 FROM fence)")} RETURNING 1)
               SELECT (SELECT count(*) FROM appended)::int AS appended`,
              [runId, key, JSON.stringify(events), ...fenceArgs(fence)],
            ),
          { database: this.database, what: "the event streams of durable runs", tolerance: this.tolerance },
        );
      } catch (error) {
        // Two writes took the same offset (a retry beside the write it retries): this one goes after it.
        if ((error as { code?: unknown }).code === "23505") continue;
        if (error instanceof DbosDatabaseError) throw error;
        const mismatch = streamTableMismatch(error);
        if (mismatch) throw mismatch;
        throw new DbosDatabaseError(`Cannot write the events of run ${runId} in ${this.database}: ${(error as Error).message}`, this.database, {
          cause: error,
        });
      }
      if ((written.rows[0] as { appended: number }).appended === 0) throw leaseLost(fence, `events of run ${runId}`);
      return;
    }
  }
}
