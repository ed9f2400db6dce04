/**
 * The error of an agent run that hit `maxIterations`, with the run saved at that point so the
 * caller can continue it (with a higher limit, or after looking at what the model did).
 */
import { StepflowError } from "../src/index.ts";
import type { Context, ContextJSON } from "../src/index.ts";

/**
 * The model kept calling tools past `maxIterations`. `context` is the run saved just before the
 * LLM call that would have gone past the limit: restore it into an agent with a higher limit and
 * run it to continue from there, with its memory, tool results and usage so far (a restored run
 * counts its LLM calls afresh). It is `undefined` only when the run's store could not be saved
 * (then `cause` says why).
 * @example
 * try {
 *   await agent.run({ input: "Add up the invoices" });
 * } catch (error) {
 *   if (!(error instanceof AgentMaxIterationsError) || !error.context) throw error;
 *   const patient = new FunctionCallingAgent({ llm, tools, maxIterations: 50 });
 *   const { response } = await patient.run(undefined, { ctx: Context.fromJSON(patient, error.context) });
 * }
 */
export class AgentMaxIterationsError extends StepflowError {
  override name = "AgentMaxIterationsError";
  constructor(
    readonly iterations: number,
    /** The run saved before the call past the limit (`Context.fromJSON` restores it); `undefined` when it could not be saved. */
    readonly context?: ContextJSON,
    options?: ErrorOptions,
  ) {
    super(
      `FunctionCallingAgent stopped after ${iterations} LLM calls without a final answer (maxIterations: ${iterations}). The model kept calling tools: check the tool results it got, or raise maxIterations and continue the run from this error's context.`,
      options,
    );
  }
}

/**
 * The error for a run on `ctx` that hit `maxIterations`, carrying the run saved now (in the step
 * that would make the next LLM call: restored, that step runs again).
 * @example throw maxIterationsReached(ctx, 20);
 */
export function maxIterationsReached(ctx: Context, iterations: number): AgentMaxIterationsError {
  try {
    return new AgentMaxIterationsError(iterations, ctx.toJSON());
  } catch (error) {
    return new AgentMaxIterationsError(iterations, undefined, { cause: error });
  }
}
