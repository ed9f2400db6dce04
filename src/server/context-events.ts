/**
 * The events of a context a client sends, checked as the events it sends one by one are: a
 * mid-run context puts its events into the run (queued for steps, being handled, collected), and
 * without this check they would be a way round the schemas `POST /api/handlers/:id/events`
 * enforces. Each event whose type has a schema must fit it, and is built again from the schema's
 * output (defaults filled, unknown keys dropped), as an event sent in is.
 */
import {
  Context,
  HumanResponseEvent,
  InputRequiredEvent,
  StartEvent,
  StopEvent,
  checkEventFields,
  decodeValue,
  encodeEvent,
  eventSchemaOf,
  eventTypeName,
} from "../core/internal.ts";
import type { ContextJSON, Event, EventClass, EventSchema, Json, SavedEvent } from "../core/internal.ts";
import { eventFieldsRefusal } from "./event-fields.ts";
import type { ServedWorkflow } from "./served-workflow.ts";

/** What {@link checkContextEvents} found: the context to run (its events built from their schemas' output), or why it is refused. */
export type CheckedContextEvents = { readonly ok: true; readonly ctx: Context } | { readonly ok: false; readonly message: string };

type SavedRun = NonNullable<ContextJSON["run"]>;

/**
 * Checks each event of the run saved in `ctx` (restored from a client's context) against its
 * schema: the served workflow's `eventSchemas` for its type, else its class's `static schema`;
 * the workflow's StartEvent against the served `inputSchema`, as a run's input is. Every event
 * that does not fit is named in the refusal, with where it sits in the context.
 * @example
 * const checked = checkContextEvents(served, Context.fromJSON(served.workflow, untrustedContext(body.context)));
 * if (!checked.ok) return c.json({ error: { code: "invalid_context", message: checked.message } }, 400);
 */
export function checkContextEvents(wf: ServedWorkflow, ctx: Context): CheckedContextEvents {
  if (!ctx.hasSavedRun) return { ok: true, ctx };
  const json = ctx.toJSON();
  if (!json.run) return { ok: true, ctx };
  const check = new EventCheck(wf);
  const run: SavedRun = {
    ...json.run,
    queued: check.steps(json.run.queued, "queued"),
    inFlight: check.steps(json.run.inFlight, "inFlight"),
    collected: Object.fromEntries(
      Object.entries(json.run.collected).map(([step, buffers]) => [
        step,
        Object.fromEntries(
          Object.entries(buffers).map(([id, list]) => [id, check.list(list, `run.collected[${JSON.stringify(step)}][${JSON.stringify(id)}]`)]),
        ),
      ]),
    ),
    unclaimed: check.list(json.run.unclaimed, "run.unclaimed"),
  };
  if (check.refusals.length > 0) return { ok: false, message: refusal(check.refusals) };
  // Restored again only when a schema gave the fields: its output is what the steps read.
  return { ok: true, ctx: check.rebuilt ? Context.fromJSON(wf.workflow, { ...json, run }) : ctx };
}

/** The walk over a saved run's events: each checked, and what was wrong with those that do not fit. */
class EventCheck {
  readonly refusals: string[] = [];
  rebuilt = false;
  readonly #wf: ServedWorkflow;
  readonly #types: Map<string, EventClass>;

  constructor(wf: ServedWorkflow) {
    this.#wf = wf;
    // The classes a restored run decodes its events with (saved-run.ts): the graph's and the built-in ones.
    this.#types = new Map(wf.workflow.graph.eventTypes);
    for (const type of [StartEvent, StopEvent, InputRequiredEvent, HumanResponseEvent] as EventClass[])
      if (!this.#types.has(eventTypeName(type))) this.#types.set(eventTypeName(type), type);
  }

  steps<T extends SavedEvent>(group: Record<string, T[]>, name: string): Record<string, T[]> {
    return Object.fromEntries(Object.entries(group).map(([step, list]) => [step, this.list(list, `run.${name}[${JSON.stringify(step)}]`)]));
  }

  list<T extends SavedEvent>(list: readonly T[], where: string): T[] {
    return list.map((saved, i) => this.#event(saved, `${where}[${i}]`));
  }

  #event<T extends SavedEvent>(saved: T, where: string): T {
    const cls = this.#types.get(saved.type);
    // A type no step names stays encoded in the run until a wait asks for it; untrustedContext leaves none.
    if (!cls) return saved;
    const schema = this.#schemaOf(saved.type, cls);
    if (!schema) return saved;
    const codecs = this.#wf.workflow.codecs;
    try {
      // As the run decodes it (saved-run.ts), so the schema sees the values a step will read.
      const data = (saved.data ?? {}) as Record<string, Json>;
      const fields = Object.fromEntries(Object.entries(data).map(([key, value]) => [key, decodeValue(value, `${where}.data.${key}`, codecs)]));
      const checked = checkEventFields(cls, fields, schema);
      if (!checked.ok) {
        this.refusals.push(eventFieldsRefusal(saved.type, checked.schema, checked.problems, where));
        return saved;
      }
      const event = new (cls as unknown as new (fields: object) => Event)(checked.fields);
      this.rebuilt = true;
      return { ...saved, data: encodeEvent(event, where, codecs).data };
    } catch (error) {
      this.refusals.push(`The ${saved.type} at ${where} could not be built from its data: ${error instanceof Error ? error.message : String(error)}`);
      return saved;
    }
  }

  /** The schema its type is checked against where a client sends it: the StartEvent's is the served input's. */
  #schemaOf(type: string, cls: EventClass): EventSchema | undefined {
    const wf = this.#wf;
    if (cls === wf.workflow.graph.startEvent && wf.inputSchema) return wf.inputSchema as unknown as EventSchema;
    return (wf.eventSchemas?.[type] as EventSchema | undefined) ?? eventSchemaOf(cls);
  }
}

/** The message of the 400: each event that does not fit, then what to do. */
function refusal(refusals: readonly string[]): string {
  const one = refusals.length === 1;
  return (
    `The context holds ${one ? "an event that does" : `${refusals.length} events that do`} not fit ${one ? "its schema" : "their schemas"}` +
    ` (as POST /api/handlers/:id/events would refuse ${one ? "it" : "them"}): ${refusals.join(" ")}` +
    ` Nothing was started. Correct the data in the context, or start a new run with input instead.`
  );
}
