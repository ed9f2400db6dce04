/**
 * Fencing of durable runs. A worker owns the runs it executes through a lease: its row in
 * `stepflow_dbos_workers`, held at an epoch that every takeover (and every restart under the
 * same id) raises. A part's writes (checkpoints, journal claims, its outcome) land only while
 * the lease it started under still holds — `WHERE worker_id = me AND epoch = n` — and while
 * DBOS still gives the part's execution to this process (its ownership token, which DBOS
 * resets when it puts the part back on the queue). A worker that was taken over while alive
 * (a stalled process, a partition) can therefore finish nothing of a run another worker now
 * executes: its next write fails, it stops, and says so.
 */
import { DbosLeaseLostError } from "./errors.ts";

/** A worker's hold on its runs: who, at which epoch, and a signal aborted when it is lost. @example `{ holder: "w1", epoch: 3, signal }` */
export interface Lease {
  readonly holder: string;
  readonly epoch: number;
  /** Aborted once the worker learns (from a heartbeat) that the lease is lost: its parts stop. */
  readonly signal: AbortSignal;
}

/** What a part's writes are fenced by: its worker's lease, and DBOS's token of the part's execution (`undefined` outside DBOS). @example `{ lease, part: "3f2….part-1", owner: "9f…" }` */
export interface Fence {
  readonly lease: Lease;
  /** The DBOS workflow id of the part. */
  readonly part: string;
  readonly owner: string | undefined;
}

/**
 * A CTE named `fence` that has one row while `fence` holds, its parameters numbered from
 * `$first` (pass {@link fenceArgs} there). The worker's row is locked FOR SHARE: a takeover
 * (which locks it FOR UPDATE and raises the epoch) waits for the write, and a write that waited
 * for a takeover sees the new epoch and lands nothing.
 * @example
 * const sql = `WITH ${fenceCte(3)} UPDATE t SET x = $2 WHERE id = $1 AND EXISTS (SELECT 1 FROM fence)`;
 */
export function fenceCte(first: number): string {
  const [holder, epoch, part, owner] = [first, first + 1, first + 2, first + 3].map((n) => `$${n}`);
  return `fence AS (
    SELECT 1 FROM stepflow_dbos_workers w
    WHERE w.worker_id = ${holder} AND w.epoch = ${epoch} AND w.taken_over_by IS NULL
      AND (${owner}::text IS NULL OR EXISTS (SELECT 1 FROM dbos.workflow_status s WHERE s.workflow_uuid = ${part} AND s.owner_xid = ${owner}::text))
    FOR SHARE OF w)`;
}

/** The four parameters of {@link fenceCte}. @example [...args, ...fenceArgs(fence)] */
export function fenceArgs(fence: Fence): unknown[] {
  return [fence.lease.holder, fence.lease.epoch, fence.part, fence.owner ?? null];
}

/** Who holds a journal claim: one execution of one part under one lease. @example claimant(fence) // "w1@3/part-2:9f…" */
export function claimant(fence: Fence): string {
  return `${fence.lease.holder}@${fence.lease.epoch}/${fence.part}:${fence.owner ?? ""}`;
}

/** The error a part stops with when a write found its fence gone. @example throw leaseLost(fence, "checkpoint 4 of run 3f2…") */
export function leaseLost(fence: Fence, what: string): DbosLeaseLostError {
  const { holder, epoch } = fence.lease;
  return new DbosLeaseLostError(
    `Worker "${holder}" no longer holds ${fence.part} (lease epoch ${epoch}): another worker took it over, or it was cancelled; ${what} was not written and this execution stops.`,
    holder,
    epoch,
  );
}
