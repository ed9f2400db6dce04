/**
 * What a context is between runs, and what a restoring process holds: the workflow, the store,
 * the current (or last) run, and a run saved in progress that the next `run()` continues. One
 * per context the user made; the views a run's handler and steps get share it.
 */
import { ContextStateError } from "./errors.ts";
import type { Run } from "./run.ts";
import { encodeRun } from "./saved-run.ts";
import type { RestoredRun } from "./saved-run.ts";
import type { SavedRun } from "./context-format.ts";
import type { Codecs } from "./serialize.ts";
import type { AnyWorkflow } from "./workflow.ts";

/**
 * The root of one context: the part of it that outlives runs (the store aside, which the
 * context and its views hold).
 * @example
 * const root = new ContextRoot(workflow);
 * root.attach(run); // throws if another run is in progress
 */
export class ContextRoot {
  /** The current or last run. */
  run: Run | undefined;
  /**
   * A run saved in progress, waiting for `run()` to continue it: restored from JSON, or kept by
   * `cancel()` (`json` then made when `toJSON` asks).
   */
  #saved: { json: SavedRun | undefined; readonly events: RestoredRun; readonly cancelled: boolean } | undefined;

  constructor(readonly workflow: AnyWorkflow) {}

  /** Whether a run is in progress. */
  get running(): boolean {
    return this.run !== undefined && !this.run.done;
  }

  /** Makes `run` the current run; throws if one is in progress (one at a time). */
  attach(run: Run): void {
    if (this.running) {
      throw new ContextStateError(
        "This context is already running a workflow. Await the current run (or cancel it) before starting another on the same context.",
      );
    }
    this.run = run;
  }

  /** Keeps a run restored from `json`, for the next `run()` to continue. */
  restore(json: SavedRun, events: RestoredRun): void {
    this.#saved = { json, events, cancelled: false };
  }

  /** The events of the run saved in progress, for the run that continues it. */
  get savedRun(): RestoredRun | undefined {
    return this.#saved?.events;
  }

  /** Whether a run saved in progress waits for `run()` to continue it. */
  get hasSavedRun(): boolean {
    return this.#saved !== undefined;
  }

  /** The saved run as JSON, made once. */
  savedJSON(codecs: Codecs): SavedRun | undefined {
    const saved = this.#saved;
    if (saved && !saved.json) saved.json = encodeRun(saved.events, codecs);
    return saved?.json;
  }

  /** Forgets the saved run once `run`, still the current run, has continued it. */
  settleSavedRun(run: Run): void {
    if (this.run === run) this.#saved = undefined;
  }

  /** Keeps what `run` (cancelled) had pending, so `toJSON()` saves it and `run(undefined, { ctx })` continues it. */
  keepCancelledRun(run: Run, events: RestoredRun): void {
    if (this.run === run) this.#saved = { json: undefined, events, cancelled: true };
  }

  /** Drops a run kept by `cancel()`, for a new run started with input. */
  dropCancelledRun(): void {
    if (this.#saved?.cancelled) this.#saved = undefined;
  }
}
