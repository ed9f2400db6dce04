/**
 * Values kept per run and never saved: the scratch state a run's steps share (a counter, objects
 * looked up once). A restored run starts with none, like any new run.
 */
import type { Context } from "./context.ts";
import { runOfContext } from "./context-engine.ts";
import { ContextStateError } from "./errors.ts";

/**
 * A slot that holds one value per run. The value lives as long as the run object; it is not in
 * `ctx.store` and not in `ctx.toJSON()`, so keep there only what a resumed run can rebuild.
 * @example
 * const llmCalls = new RunLocal<{ count: number }>();
 * // in a step:
 * const calls = llmCalls.get(ctx) ?? llmCalls.set(ctx, { count: 0 });
 * if (++calls.count > 20) throw new Error("Too many LLM calls in this run.");
 */
export class RunLocal<T> {
  readonly #values = new WeakMap<object, T>();

  /** The value of the run `ctx` belongs to (in a step: the step's run), or `undefined` when none was set. */
  get(ctx: Context<object>): T | undefined {
    const run = ctx[runOfContext]();
    return run === undefined ? undefined : this.#values.get(run);
  }

  /** Sets the value of the run `ctx` belongs to, and returns it. Throws when no run was ever started on `ctx`. */
  set(ctx: Context<object>, value: T): T {
    const run = ctx[runOfContext]();
    if (run === undefined) throw new ContextStateError("RunLocal.set: no run was started on this context. Call it from a step, or with handler.ctx.");
    this.#values.set(run, value);
    return value;
  }
}
