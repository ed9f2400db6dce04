/**
 * Timeouts in seconds, checked and started the same way everywhere. Node's `setTimeout` fires
 * at once (with a warning) for any delay over 2³¹−1 ms, about 24.8 days, and `NaN`, negative
 * or infinite delays fire at once too; a run waiting days for a human needs neither.
 */

/** The longest delay `setTimeout` honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * What is wrong with `value` as a timeout in seconds (a finite number > 0), as a sentence for
 * an error message; `undefined` when nothing is. `orElse` says what to pass instead for none.
 * @example
 * badTimeout("timeout", Infinity, "or null for none");
 * // "timeout is in seconds and must be a finite number > 0 (or null for none), got Infinity."
 */
export function badTimeout(name: string, value: unknown, orElse: string): string | undefined {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return undefined;
  return `${name} is in seconds and must be a finite number > 0 (${orElse}), got ${typeof value === "string" ? JSON.stringify(value) : String(value)}.`;
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
