/**
 * `stepflow/dbos`: durable, distributed runs of any stepflow workflow on DBOS and PostgreSQL.
 * Workers (`DbosWorker`) take runs from a queue, record every finished step execution and
 * every side effect, and pick runs up again after a crash; clients (`DbosRuns`) start runs,
 * read their events, answer their questions and get their results from any process; session
 * turns (`DbosSessions`) run on any worker, one at a time per session.
 */
export { DbosWorker } from "./worker.ts";
export type { DbosWorkerOptions } from "./worker.ts";
export type { LeaseLoss, Takeover } from "./takeover.ts";
export { DbosRuns } from "./client.ts";
export type { DbosRunStatus, DbosRunsOptions } from "./client.ts";
export { DbosSessions } from "./sessions.ts";
export type { DbosSessionsOptions } from "./sessions.ts";
export { DbosAnswerTimeoutError, DbosDatabaseError, DbosLeaseLostError, DbosRunFailedError, DbosRuntimeError } from "./errors.ts";
export type { RunRecord } from "./protocol.ts";
