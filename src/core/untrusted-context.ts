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
 * What else {@link untrustedContext} drops.
 * @example
 * const options: UntrustedContextOptions = { fromOutside: eventsFromOutside(workflow).keys() };
 */
export interface UntrustedContextOptions {
  /**
   * The type names of the events the workflow takes from outside its run (its answers:
   * `eventsFromOutside(workflow).keys()`). The saved run's answers that no step had finished
   * with (buffered by `ctx.collectEvents`, queued for a step, or being handled by one) are
   * dropped too: an answer given to the run that saved the context is not taken for this one.
   */
  readonly fromOutside?: Iterable<string>;
}

/**
 * `json` without the records of its run: pass the result to `Context.fromJSON` to continue a
 * run from a context you did not save yourself.
 * @example
 * const ctx = Context.fromJSON(agent, untrustedContext(request.body.context, { fromOutside: eventsFromOutside(agent).keys() }));
 * const handler = agent.run(undefined, { ctx }); // asks again for every approval
 */
export function untrustedContext(json: ContextJSON | string, options: UntrustedContextOptions = {}): ContextJSON {
  let context: unknown = json;
  if (typeof json === "string") {
    try {
      context = JSON.parse(json);
    } catch (error) {
      throw new ContextSerdeError(`Cannot restore the context: it is not JSON (${error instanceof Error ? error.message : String(error)}).`, { cause: error });
    }
  }
  if (!isRecord(context) || !isRecord(context.run)) return context as ContextJSON;
  const outside = new Set(options.fromOutside ?? []);
  const answer = (event: unknown) => isRecord(event) && typeof event.type === "string" && outside.has(event.type);
  const run: Record<string, unknown> = { ...context.run, unclaimed: [] };
  delete run.runId;
  delete run.once;
  for (const group of ["queued", "inFlight"] as const) {
    const steps = run[group];
    if (!isRecord(steps)) continue;
    run[group] = Object.fromEntries(
      Object.entries(steps).map(([step, list]) => [
        step,
        Array.isArray(list) ? list.filter((delivery: unknown) => !answer(delivery)).map((delivery: unknown) => withoutExecution(delivery)) : list,
      ]),
    );
  }
  if (outside.size > 0 && isRecord(run.collected)) {
    const kept = (events: unknown) => (Array.isArray(events) ? events.filter((event: unknown) => !answer(event)) : events);
    // By step, then buffer; format 1 (migrated after this) kept the buffers at the top.
    run.collected = Object.fromEntries(
      Object.entries(run.collected).map(([key, buffers]) => [
        key,
        isRecord(buffers) ? Object.fromEntries(Object.entries(buffers).map(([id, events]) => [id, kept(events)])) : kept(buffers),
      ]),
    );
  }
  return { ...context, run } as unknown as ContextJSON;
}

function withoutExecution(delivery: unknown): unknown {
  if (!isRecord(delivery)) return delivery;
  const { execution: _execution, ...rest } = delivery;
  return rest;
}
