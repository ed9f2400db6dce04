/** The CLI's errors and how they reach the user: one line, no stack trace, no secret. */
import { StepflowError } from "../core/internal.ts";

/** A mistake in the command line: exit code 2. @example throw new UsageError("--llm must be offline or openai.") */
export class UsageError extends StepflowError {
  override name = "UsageError";
}

/** `sessions show` or `sessions delete` named a session the store does not have: exit code 1. @example `err instanceof NoSuchSessionError && err.sessionId` */
export class NoSuchSessionError extends StepflowError {
  override name = "NoSuchSessionError";
  constructor(
    message: string,
    readonly sessionId: string,
  ) {
    super(message);
  }
}
