/**
 * Typed errors of the engine. Each class is one line on purpose: the class says what
 * happened, the message (part of the contract, tested word for word) says what to do.
 */

/** Base class of every stepflow error. @example `if (err instanceof StepflowError) …` */
export class StepflowError extends Error {
  override name = "StepflowError";
}

/**
 * An option was given a value it cannot take (a negative timeout, a tool list that is not a list, …).
 * `option` names the option as the user wrote it, `received` is the value that was refused.
 * @example
 * import { ConfigurationError } from "stepflow";
 * try { await workflow.run({}, { timeout: -1 }); }
 * catch (err) { if (err instanceof ConfigurationError) console.log(err.option, err.received); }
 */
export class ConfigurationError extends StepflowError {
  override name = "ConfigurationError";
  constructor(
    message: string,
    readonly option: string,
    readonly received: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The workflow's steps do not form a runnable graph. @example `new WorkflowValidationError("No step accepts a StartEvent.")` */
export class WorkflowValidationError extends StepflowError {
  override name = "WorkflowValidationError";
}

/** A run or a step ran out of time. @example `err instanceof WorkflowTimeoutError && err.activeSteps` */
export class WorkflowTimeoutError extends StepflowError {
  override name = "WorkflowTimeoutError";
  constructor(
    message: string,
    readonly activeSteps: readonly string[] = [],
  ) {
    super(message);
  }
}

/** A step broke the engine's rules at run time (returned a non-event, bad `sendEvent` target, …). @example `new WorkflowRuntimeError('Step "a" returned a string, not an event.')` */
export class WorkflowRuntimeError extends StepflowError {
  override name = "WorkflowRuntimeError";
}

/** A step returned an event that no step accepts and no `waitForEvent` awaits. @example `err instanceof UnhandledEventError && err.eventType` */
export class UnhandledEventError extends WorkflowRuntimeError {
  override name = "UnhandledEventError";
  constructor(
    message: string,
    readonly step: string,
    readonly eventType: string,
  ) {
    super(message);
  }
}

/** A step threw something that is not an `Error` (`throw undefined`, a string); the value is the `cause`. @example `err instanceof NonErrorThrownError && err.cause` */
export class NonErrorThrownError extends WorkflowRuntimeError {
  override name = "NonErrorThrownError";
  constructor(
    message: string,
    readonly step: string,
    cause: unknown,
  ) {
    super(message, { cause });
  }
}

/** The run was cancelled through `handler.cancel()` or the run's `signal`. @example `await handler.catch((e) => e instanceof WorkflowCancelledByUser)` */
export class WorkflowCancelledByUser extends StepflowError {
  override name = "WorkflowCancelledByUser";
}

/** A context was used in a state that does not allow it (a second run on a running context, no run in progress). @example `new ContextStateError("…")` */
export class ContextStateError extends StepflowError {
  override name = "ContextStateError";
}

/** `ctx.store.get(key)` found nothing at `key` and no default was given. @example `await ctx.store.get("memory", null)` avoids it */
export class StoreKeyError extends StepflowError {
  override name = "StoreKeyError";
}

/** A typed state was given a value its schema refuses; the store keeps what it had. @example `err instanceof StateValidationError && err.message` */
export class StateValidationError extends StepflowError {
  override name = "StateValidationError";
}
