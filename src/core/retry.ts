/**
 * Ready-made retry policies for `@step({ retry })`: exponential backoff with jitter, retrying
 * only given error classes, within a total time. A policy is a plain function of the attempts
 * made, the last error and the seconds elapsed since the first attempt, so one can be tested
 * by calling it.
 */
import { ConfigurationError } from "./errors.ts";
import type { RetryPolicy } from "./step.ts";

/** An error class, for `retryOn`. @example `const retryOn: ErrorClass[] = [TypeError];` */
export type ErrorClass = abstract new (...args: never[]) => Error;

/** Options of {@link exponentialBackoff}. Times are in seconds. @example `exponentialBackoff({ initialDelay: 0.5, maxAttempts: 4 })` */
export interface BackoffOptions {
  /** Attempts in all, the first one included. Default 5. */
  readonly maxAttempts?: number;
  /** The wait after the first failure. Default 1. */
  readonly initialDelay?: number;
  /** Each wait is this many times the one before. Default 2. */
  readonly factor?: number;
  /** No wait is longer than this. Default 60. */
  readonly maxDelay?: number;
  /**
   * How much of each wait is random, from 0 (none, the default) to 1: a wait of `d` becomes a
   * random time between `d × (1 − jitter)` and `d`, so that many runs failing together do not
   * all retry at the same moment.
   */
  readonly jitter?: number;
  /** Retry only errors of these classes (or subclasses); any other error fails the step at once. Default: every error. */
  readonly retryOn?: readonly ErrorClass[];
  /** Give up rather than start a wait that would end more than this long after the first attempt began. Default: no limit. */
  readonly maxElapsed?: number;
  /** A number in [0, 1) for the jitter. Default `Math.random`; pass your own for repeatable delays. */
  readonly random?: () => number;
}

/**
 * A retry policy with waits growing exponentially: `initialDelay × factor^(attempts − 1)`,
 * capped at `maxDelay`, less a random part (`jitter`); it gives up after `maxAttempts`
 * attempts, on an error not in `retryOn`, or when the next wait would end past `maxElapsed`.
 * @example
 * import { Workflow, step, StartEvent, StopEvent, exponentialBackoff } from "stepflow";
 * class RateLimited extends Error {}
 * class Fetcher extends Workflow<{}, string> {
 *   @step({ accepts: [StartEvent], emits: [StopEvent], retry: exponentialBackoff({ initialDelay: 0.5, jitter: 0.5, retryOn: [RateLimited], maxElapsed: 30 }) })
 *   async fetch() { return new StopEvent({ result: "ok" }); }
 * }
 */
export function exponentialBackoff(options: BackoffOptions = {}): RetryPolicy {
  const { maxAttempts = 5, initialDelay = 1, factor = 2, maxDelay = 60, jitter = 0, retryOn, maxElapsed, random = Math.random } = options;
  const check = (ok: boolean, option: string, rule: string, value: unknown) => {
    if (!ok) throw new ConfigurationError(`exponentialBackoff: ${option} ${rule}, got ${String(value)}.`, option, value);
  };
  check(Number.isInteger(maxAttempts) && maxAttempts >= 1, "maxAttempts", "must be a whole number ≥ 1", maxAttempts);
  check(isSeconds(initialDelay), "initialDelay", "is in seconds and must be a finite number ≥ 0", initialDelay);
  check(Number.isFinite(factor) && factor >= 1, "factor", "must be a finite number ≥ 1", factor);
  check(isSeconds(maxDelay), "maxDelay", "is in seconds and must be a finite number ≥ 0", maxDelay);
  check(Number.isFinite(jitter) && jitter >= 0 && jitter <= 1, "jitter", "must be a number from 0 (no randomness) to 1", jitter);
  check(
    maxElapsed === undefined || isSeconds(maxElapsed),
    "maxElapsed",
    "is in seconds and must be a finite number ≥ 0 (or left out for no limit)",
    maxElapsed,
  );
  check(
    retryOn === undefined || (Array.isArray(retryOn) && retryOn.every((c) => typeof c === "function")),
    "retryOn",
    "must be a list of error classes, like [RateLimitError]",
    retryOn,
  );
  return (attempts, error, elapsed = 0) => {
    if (attempts >= maxAttempts) return null;
    if (retryOn && !retryOn.some((type) => error instanceof type)) return null;
    const base = Math.min(maxDelay, initialDelay * factor ** (attempts - 1));
    const delay = base * (1 - jitter * random());
    if (maxElapsed !== undefined && elapsed + delay > maxElapsed) return null;
    return delay;
  };
}

const isSeconds = (value: unknown): boolean => typeof value === "number" && Number.isFinite(value) && value >= 0;
