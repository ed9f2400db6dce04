/**
 * A run's abort: its `signal` (what a step without a timeout reads as `ctx.signal`), made on
 * first read, and the signals of the timed attempts under way, which follow it. Creating and
 * aborting an AbortController is not free, so a run whose steps never read `ctx.signal` makes
 * none; and an attempt's signal follows the run's by being in a set the run aborts itself, not by
 * a listener on the run's signal: Node's `addEventListener` and `removeEventListener` cost an
 * attempt more than the rest of its signal (counted in docs/benchmarks.md, "Timed attempts").
 */

/**
 * The abort of one run, and of the timed attempts' signals that follow it.
 * @example
 * const abort = new RunAbort();
 * fetch(url, { signal: abort.signal });
 * const attempt = new AbortController();
 * abort.follow(attempt); // … abort.unfollow(attempt) when the attempt ends
 * abort.abort(new WorkflowCancelledByUser("The run was cancelled.")); // aborts both
 */
export class RunAbort {
  #controller: AbortController | undefined;
  #aborted: { readonly reason: unknown } | undefined;
  /** The controllers of the attempts under way that read their signal: aborted with the run's. */
  #followers: Set<AbortController> | undefined;

  /** The run's signal. One first read after the run was aborted comes already aborted, with the recorded reason. */
  get signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = (this.#controller = new AbortController());
    if (this.#aborted) controller.abort(this.#aborted.reason);
    return controller.signal;
  }

  /** Why the run's signal was aborted, once it was. */
  get abortedBecause(): { readonly reason: unknown } | undefined {
    return this.#aborted;
  }

  /** Aborts the run's signal, then those of the attempts that follow it, with `reason`. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = { reason };
    this.#controller?.abort(reason);
    const followers = this.#followers;
    this.#followers = undefined;
    if (followers) for (const follower of followers) follower.abort(reason);
  }

  /** `controller` is aborted with the run's signal (at once if it was already), until `unfollow(controller)`. */
  follow(controller: AbortController): void {
    if (this.#aborted) controller.abort(this.#aborted.reason);
    else (this.#followers ??= new Set()).add(controller);
  }

  unfollow(controller: AbortController): void {
    this.#followers?.delete(controller);
  }
}
