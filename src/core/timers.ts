/**
 * Timeouts in seconds, checked and started the same way everywhere. Node's `setTimeout` fires
 * at once (with a warning) for any delay over 2³¹−1 ms, about 24.8 days, and `NaN`, negative
 * or infinite delays fire at once too; a run waiting days for a human needs neither.
 */
import { ConfigurationError } from "./errors.ts";

/** The longest delay `setTimeout` honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Throws a {@link ConfigurationError} unless `value` is a timeout in seconds (a finite number > 0).
 * `option` is the option's name (the error's `option` field), `label` how the message names
 * it, and `orElse` says what to pass instead for none.
 * @example
 * checkTimeout(Infinity, "timeout", "or null for none");
 * // throws ConfigurationError: "timeout is in seconds and must be a finite number > 0 (or null for none), got Infinity."
 */
export function checkTimeout(value: unknown, option: string, orElse: string, label: string = option): void {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return;
  const got = typeof value === "string" ? JSON.stringify(value) : String(value);
  throw new ConfigurationError(`${label} is in seconds and must be a finite number > 0 (${orElse}), got ${got}.`, option, value);
}

/**
 * What is wrong with `value` as a timeout in seconds, as a sentence; `undefined` when nothing is.
 * @deprecated Use {@link checkTimeout}, which throws the {@link ConfigurationError} itself; this
 * remains only until workflows/function-calling-agent.ts (being rewritten) switches to it.
 * @example
 * badTimeout("toolTimeout", -1, "the default is 60"); // "toolTimeout is in seconds and must be …, got -1."
 */
export function badTimeout(name: string, value: unknown, orElse: string): string | undefined {
  try {
    checkTimeout(value, name, orElse);
    return undefined;
  } catch (error) {
    return (error as ConfigurationError).message;
  }
}

/**
 * Calls `onExpire` after `seconds` (any finite number > 0, however large) unless the returned
 * function is called first.
 * @example
 * const cancel = startTimer(30 * 24 * 3600, () => console.log("a month later"));
 * cancel();
 */
export function startTimer(seconds: number, onExpire: () => void): () => void {
  let remaining = seconds * 1000;
  let timer: ReturnType<typeof setTimeout>;
  const arm = () => {
    const delay = Math.min(remaining, MAX_TIMER_MS);
    remaining -= delay;
    timer = setTimeout(remaining > 0 ? arm : onExpire, delay);
  };
  arm();
  return () => clearTimeout(timer);
}

/**
 * Waits `seconds`, its timer's cancel in `timers` meanwhile: clearing them (a run that ends)
 * leaves the promise pending for good.
 * @example await sleep(2, runTimers);
 */
export function sleep(seconds: number, timers: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const cancel = startTimer(seconds, () => {
      timers.delete(cancel);
      resolve();
    });
    timers.add(cancel);
  });
}
