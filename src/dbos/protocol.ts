/** What the workers and the clients of durable runs agree on: names in DBOS, and what a run returns. */
import type { Json } from "../core/internal.ts";
import { DbosAnswerTimeoutError, DbosRunFailedError } from "./errors.ts";

/**
 * The DBOS workflow every stepflow run is (its arguments: the workflow's name, the run's input
 * and its {@link RunPlacement}). It runs the run's first part itself, on the queue with the
 * limits, and leaves that queue's slots when the run parks to wait for an answer.
 */
export const RUN_WORKFLOW = "stepflow.run";
/** The DBOS workflow of one part of a run after an answer (and of every part of a session turn), on the queue with the limits. */
export const PART_WORKFLOW = "stepflow.part";
/** The DBOS message topic on which a part tells its run how it ended. */
export const PART_DONE_TOPIC = "stepflow.part-done";
/** The queue runs wait on when none is named. */
export const DEFAULT_QUEUE = "stepflow";
/** The DBOS stream of a run's events, on the run's workflow: those of all its parts, in order. */
export const EVENTS_STREAM = "stepflow.events";
/** The DBOS message topic of the answers sent to a run. */
export const ANSWER_TOPIC = "stepflow.answer";
/** The DBOS event a run sets each time it parks to wait for an answer: how many times it has. */
export const PARKED_EVENT = "stepflow.parked";
/** The unlimited queue of runs that only wait: parked runs, which leave `queue` for it. */
export function runsQueue(queue: string): string {
  return `${queue}.runs`;
}

/**
 * The queue session turns wait on, beside the queue `queue` of other runs: partitioned by
 * session, one turn of a session at a time.
 * @example sessionQueue("stepflow"); // "stepflow.sessions"
 */
export function sessionQueue(queue: string): string {
  return `${queue}.sessions`;
}

/** The id of part `n` (1 = the first) of run `runId`; a part's id is only its run's id and its number, so any process can name it. */
export function partId(runId: string, n: number): string {
  return `${runId}.part-${n}`;
}

/** The run a DBOS workflow id belongs to: the id itself, or the run of a part. */
export function runOf(workflowId: string): string {
  return workflowId.replace(/\.part-\d+$/, "");
}

/**
 * The DBOS application version of workers that name none: runs are dequeued and recovered only by
 * workers of their version. 5: a part is no DBOS step (stepflow's checkpoints say how it ended);
 * 4: a run runs its first part itself and streams its events on its own workflow (3: every part
 * was a workflow of its own, with its stream; 2: parts closed their streams and runs forgot their
 * checkpoints at their end; 1: a run was one workflow).
 */
export const DEFAULT_VERSION = "stepflow-dbos-5";

/**
 * Where a run's parts run: `queue`, a run started by a client, on the queue with the limits
 * (its first part in the run's own workflow, the next ones workflows of their own there);
 * `process`, a run of `worker.run`, off the queues in the worker's process; `session`, a
 * session turn, which waits on its session's partition and runs every part as a workflow of its
 * own on the queue with the limits.
 */
export type RunPlacement = "queue" | "process" | "session";

/** How a durable run ended, as DBOS records it. @example `{ ok: true, result: { response: "Done." } }` */
export type RunRecord =
  { readonly ok: true; readonly result: Json } | { readonly ok: false; readonly error: { readonly name: string; readonly message: string } };

/** The result of a run that ended as `record`, or its error. */
export function settle<T>(runId: string, record: RunRecord): T {
  if (record.ok) return record.result as T;
  const { name, message } = record.error;
  if (name === "DbosAnswerTimeoutError") throw new DbosAnswerTimeoutError(message, runId);
  throw new DbosRunFailedError(`Run ${runId} failed with ${name}: ${message}`, runId, name);
}
