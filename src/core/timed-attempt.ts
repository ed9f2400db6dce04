/**
 * What an attempt of a step with a `timeout` holds of its run that the engine takes back when
 * the attempt times out, since a promise cannot be cancelled and the step's code runs on: its
 * own `ctx.signal`, aborted then with the step's timeout error (and, while the attempt is under
 * way, when the run ends), and the store's writes, refused from then on. Steps without a
 * timeout are never given up on while they run, and pay for none of this.
 */
import type { ContextStore } from "./store.ts";
import type { RunAbort } from "./run-abort.ts";

/**
 * The `ctx.signal` of one attempt of a step with a timeout. Its AbortController is made when
 * the step first reads `ctx.signal` (most steps never do), and follows the run's signal (run-abort.ts)
 * until the attempt ends: a run whose timed steps read the signal at every attempt must not
 * gather a follower per attempt for as long as it lasts (Node's `engines` of this package
 * include 20.0–20.2, which lack `AbortSignal.any`).
 * @example
 * const attempt = new AttemptSignal(run.aborts);
 * fetch(url, { signal: attempt.signal });
 * attempt.timedOut(new WorkflowTimeoutError('Step "fetch" timed out after 5 seconds.', ["fetch"]));
 */
export class AttemptSignal {
  #controller: AbortController | undefined;
  /** Why the attempt was given up on, once it was. */
  #timedOut: { readonly reason: unknown } | undefined;
  /** Ended before it timed out. */
  #ended = false;

  constructor(readonly run: RunAbort) {}

  /**
   * The attempt's signal. Read first after the attempt ended without timing out (by work it left
   * running), it is the run's, as a step without a timeout gets: nothing is left to follow.
   */
  get signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    if (this.#ended && !this.#timedOut) return this.run.signal;
    const controller = (this.#controller = new AbortController());
    if (this.#timedOut) controller.abort(this.#timedOut.reason);
    else this.run.follow(controller);
    return controller.signal;
  }

  /** The attempt timed out: its signal aborts with `reason` (the step's timeout error), and no longer follows the run's. */
  timedOut(reason: unknown): void {
    if (this.#timedOut || this.#ended) return;
    this.#timedOut = { reason };
    this.ended();
    this.#controller?.abort(reason);
  }

  /** The attempt ended (returned, threw or timed out): its signal no longer follows the run's. */
  ended(): void {
    this.#ended = true;
    if (this.#controller) this.run.unfollow(this.#controller);
  }
}

/** Whether `key` names one of the store's methods that change it. */
const isWrite = (key: PropertyKey): boolean => key === "set" || key === "delete" || key === "clear" || key === "edit";

/**
 * `store` as a step attempt with a timeout sees it: the same store, whose writes are refused
 * (a rejected promise, as the store's own errors are) once `refusal` gives an error, that is
 * once the attempt timed out and its retry, a recovery step or the rest of the run goes on
 * beside it. Reads stay allowed: they change nothing the run or a retry sees, and code that
 * runs on after its timeout (a `finally` that logs what it found) should not fail on them.
 * @example
 * const store = attemptStore(ctx.store, (operation) => (retired ? new ContextStateError(`${operation}: ${why}`) : undefined));
 * await store.set("n", 1); // rejects once retired
 */
export function attemptStore<S extends object>(store: ContextStore<S>, refusal: (operation: string) => Error | undefined): ContextStore<S> {
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      // The store keeps its state in private fields: its methods must be called on the store itself.
      if (!isWrite(key)) return (value as (...args: unknown[]) => unknown).bind(target);
      return (...args: unknown[]): unknown => {
        const refused = refusal(`store.${String(key)}`);
        return refused ? Promise.reject(refused) : (value as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
