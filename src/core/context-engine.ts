/**
 * The engine's side of a `Context`: symbol-keyed members of the context for run.ts, workflow.ts
 * and run-local.ts, which hand a context its run, continue the run saved in it and give steps
 * their views. The package exports none of these symbols, so applications meet only a
 * context's public faces (docs/architecture.md, "Context by role"); no module state is
 * involved: a symbol is a name, and each context keeps its own state.
 */

import type { Run } from "./run.ts";

/** `ctx[runOfContext]()`: the run `ctx` belongs to (its current or last run; in a step, the step's run). @example const run = ctx[runOfContext](); */
export const runOfContext: unique symbol = Symbol("stepflow.context.run");
/** `ctx[attachRun](run)`: makes `run` the context's run (one at a time) and returns the view its steps and handler get. @example const view = ctx[attachRun](run); */
export const attachRun: unique symbol = Symbol("stepflow.context.attachRun");
/** `view[executionView](execution)`: the view one step execution gets. @example const stepCtx = run.ctx[executionView](execution); */
export const executionView: unique symbol = Symbol("stepflow.context.executionView");
/**
 * `view[retireView](why)`: refuses from now on what the step attempt holding `view` does in its
 * run (`why` says so), as the engine gave up on it (its step timed out) while it runs on.
 * `view[retireView]()` only tells whether it was retired. @example stepCtx[retireView](`Step "fetch" timed out`);
 */
export const retireView: unique symbol = Symbol("stepflow.context.retireView");
/**
 * `view[beginAttempt]()`: an attempt of the step holding `view`, which has a timeout, begins:
 * from now on the view's `signal` is that attempt's (timed-attempt.ts), returned to end it.
 * @example const attempt = stepCtx[beginAttempt](); // … attempt.timedOut(error) or attempt.ended()
 */
export const beginAttempt: unique symbol = Symbol("stepflow.context.beginAttempt");
/** `ctx[contextRoot]`: what the context holds across runs: its current run, and a run saved in it (restored from JSON, or kept by a cancel) that `run()` continues. @example const saved = ctx[contextRoot].savedRun; */
export const contextRoot: unique symbol = Symbol("stepflow.context.root");

/** The run `ctx` belongs to, for the layers above the core (the server's inspector, DBOS): its current or last run. @example runOf(handler.ctx)?.subscribe((change) => log(change)); */
export function runOf(ctx: { [runOfContext](): Run | undefined }): Run | undefined {
  return ctx[runOfContext]();
}
