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
