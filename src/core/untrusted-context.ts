/**
 * A saved context from someone who must not speak for the run (a client of a server, a file
 * others can write), made safe to restore: its run keeps the events it was working on, but
 * none of the run's records. A context saved mid-run records what its steps did (`ctx.once`:
 * a model's reply, a human's answer, a tool call's result), the answers sent in early, and
 * the run's and executions' ids, under which a journal finds more records; any of these,
 * edited, would stand for work or answers that never happened. Without them the steps do
 * their work again and ask their questions again, under fresh ids.
 */
import type { ContextJSON } from "./context-format.ts";
import { isRecord } from "./is-record.ts";
import { ContextSerdeError } from "./serialize.ts";

/**
 * `json` without the records of its run: pass the result to `Context.fromJSON` to continue a
 * run from a context you did not save yourself.
 * @example
 * const ctx = Context.fromJSON(agent, untrustedContext(request.body.context));
 * const handler = agent.run(undefined, { ctx }); // asks again for every approval
 */
export function untrustedContext(json: ContextJSON | string): ContextJSON {
  let context: unknown = json;
  if (typeof json === "string") {
    try {
      context = JSON.parse(json);
    } catch (error) {
      throw new ContextSerdeError(`Cannot restore the context: it is not JSON (${error instanceof Error ? error.message : String(error)}).`, { cause: error });
    }
  }
  if (!isRecord(context) || !isRecord(context.run)) return context as ContextJSON;
  const run: Record<string, unknown> = { ...context.run, unclaimed: [] };
  delete run.runId;
  delete run.once;
  for (const group of ["queued", "inFlight"] as const) {
    const steps = run[group];
    if (!isRecord(steps)) continue;
    run[group] = Object.fromEntries(
      Object.entries(steps).map(([step, list]) => [step, Array.isArray(list) ? list.map((delivery: unknown) => withoutExecution(delivery)) : list]),
    );
  }
  return { ...context, run } as unknown as ContextJSON;
}

function withoutExecution(delivery: unknown): unknown {
  if (!isRecord(delivery)) return delivery;
  const { execution: _execution, ...rest } = delivery;
  return rest;
}
