/**
 * The faces of a `Context` by role (docs/architecture.md, "Context by role"): what a step
 * gets, what the caller of `run()` gets, and what is left between runs. Types only.
 */
import type { Context } from "./context.ts";

/**
 * The face of a context a step gets: its run's store, signal and id, and what a step does in
 * its run (send, stream, collect, wait, do once). Type a helper that a step calls with this,
 * to say that it needs a step's context and nothing else of it.
 * @example
 * async function askHuman(ctx: StepContext, question: string): Promise<string> {
 *   const answer = await ctx.waitForEvent(HumanResponseEvent, { waiterEvent: new InputRequiredEvent({ prefix: question }) });
 *   return answer.response;
 * }
 */
export type StepContext<S extends object = Record<string, unknown>> = Pick<
  Context<S>,
  "workflow" | "store" | "signal" | "runId" | "sendEvent" | "writeEventToStream" | "collectEvents" | "waitForEvent" | "once"
>;

/**
 * The face of a context the caller of `run()` gets (`handler.ctx`): the run's store, signal and
 * id, events sent in from outside, and the run saved as it stands.
 * @example
 * function answer(ctx: HandlerContext, response: string): void {
 *   ctx.sendEvent(new HumanResponseEvent({ response }));
 * }
 */
export type HandlerContext<S extends object = Record<string, unknown>> = Pick<
  Context<S>,
  "workflow" | "store" | "signal" | "runId" | "running" | "sendEvent" | "writeEventToStream" | "toJSON"
>;

/**
 * The face of a context between runs, and of one a restoring process made with
 * `Context.fromJSON`: its store, whether it holds a run saved in progress (which
 * `workflow.run(undefined, { ctx })` continues), and its JSON.
 * @example
 * function describe(ctx: SavedContext): string {
 *   return ctx.hasSavedRun ? "a run saved in progress waits to continue" : "no run in progress";
 * }
 */
export type SavedContext<S extends object = Record<string, unknown>> = Pick<Context<S>, "workflow" | "store" | "runId" | "running" | "hasSavedRun" | "toJSON">;
