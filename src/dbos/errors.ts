/** What can go wrong when runs are durable on DBOS, each as its own error class. */
import { StepflowError } from "../core/internal.ts";

/** PostgreSQL could not be reached or used; `database` names it without its password. @example `if (e instanceof DbosDatabaseError) console.error(e.database)` */
export class DbosDatabaseError extends StepflowError {
  override name = "DbosDatabaseError";
  constructor(
    message: string,
    /** The database, as `postgres://user@host:port/db` (never with the password). */
    readonly database: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A durable run ended in failure; `runId` names it, `errorName` is the class of what its workflow threw. @example `if (e instanceof DbosRunFailedError) console.error(e.runId, e.errorName)` */
export class DbosRunFailedError extends StepflowError {
  override name = "DbosRunFailedError";
  constructor(
    message: string,
    readonly runId: string,
    readonly errorName: string,
  ) {
    super(message);
  }
}

/** A durable run waited for an answer longer than its `answerTimeout`. @example `if (e instanceof DbosAnswerTimeoutError) console.error(e.runId)` */
export class DbosAnswerTimeoutError extends StepflowError {
  override name = "DbosAnswerTimeoutError";
  constructor(
    message: string,
    readonly runId: string,
  ) {
    super(message);
  }
}

/** The runtime was used the wrong way (a workflow name no worker knows, a second runtime in one process, …). @example `new DbosRuntimeError("No workflow named \"agent\"…")` */
export class DbosRuntimeError extends StepflowError {
  override name = "DbosRuntimeError";
}

/**
 * This worker no longer holds the run it was executing: another worker took it over (this one
 * missed its heartbeats for `takeoverAfter` seconds), or the run was cancelled or resumed
 * elsewhere. The part stops without writing anything; the run goes on where it now runs.
 * @example `if (e instanceof DbosLeaseLostError) console.warn(e.workerId, e.epoch)`
 */
export class DbosLeaseLostError extends StepflowError {
  override name = "DbosLeaseLostError";
  constructor(
    message: string,
    /** This worker's id. */
    readonly workerId: string,
    /** The epoch of the lease it lost. */
    readonly epoch: number,
  ) {
    super(message);
  }
}
