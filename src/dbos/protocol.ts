/** What the workers and the clients of durable runs agree on: names in DBOS, and what a run returns. */
import type { Json } from "../core/internal.ts";
import { DbosAnswerTimeoutError, DbosRunFailedError } from "./errors.ts";

/**
 * The DBOS workflow every stepflow run is (its arguments: the workflow's name and the run's
 * input). It holds no slot of the queue's limits: it waits for its parts, and for answers.
 */
export const RUN_WORKFLOW = "stepflow.run";
/** The DBOS workflow of one part of a run (from its start or an answer to its next question or end), on the queue with the limits. */
export const PART_WORKFLOW = "stepflow.part";
/** The DBOS message topic on which a part tells its run how it ended. */
export const PART_DONE_TOPIC = "stepflow.part-done";
/** The queue runs wait on when none is named. */
export const DEFAULT_QUEUE = "stepflow";
/** The DBOS stream of a part's events (a run's events are those of its parts, in order). */
export const EVENTS_STREAM = "stepflow.events";
/** The DBOS message topic of the answers sent to a run. */
export const ANSWER_TOPIC = "stepflow.answer";
/** The DBOS event a run sets each time it parks to wait for an answer: how many times it has. */
export const PARKED_EVENT = "stepflow.parked";
/** The queue the runs themselves wait on: unlimited, as they only wait (their parts take the slots of `queue`). */
export function runsQueue(queue: string): string {
  return `${queue}.runs`;
}

/** The id of part `n` (1 = the first) of run `runId`; a part's id is only its run's id and its number, so any process can name it. */
export function partId(runId: string, n: number): string {
  return `${runId}.part-${n}`;
}

/** The run a DBOS workflow id belongs to: the id itself, or the run of a part. */
export function runOf(workflowId: string): string {
  return workflowId.replace(/\.part-\d+$/, "");
}

/** The DBOS application version of workers that name none: runs are dequeued and recovered only by workers of their version. 3: parts close no stream and runs forget nothing at their end (2: they did; 1: a run was one workflow). */
export const DEFAULT_VERSION = "stepflow-dbos-3";

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
