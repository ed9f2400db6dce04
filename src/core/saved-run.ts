/**
 * A run in progress as saved JSON and back: what `ctx.toJSON()` writes of a run (live, or kept
 * by a cancel) and what a restored context hands to the run that continues it.
 */
import { eventTypeName, HumanResponseEvent, InputRequiredEvent, isEvent, StartEvent, StopEvent } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import type { SavedDelivery, SavedRun } from "./context-format.ts";
import { ContextSerdeError, decodeEvent, encodeEvent } from "./serialize.ts";
import type { Codecs, SavedEvent } from "./serialize.ts";
import { saveOnceRecords } from "./step-once.ts";
import { OnceRecords } from "./once-records.ts";
import type { SavedOnceRecord } from "./step-once.ts";
import type { AnyWorkflow } from "./workflow.ts";

/** An event given to a step, decoded, with its execution id when it was saved with one. */
export interface Delivery {
  readonly event: Event;
  readonly execution: string | undefined;
}

/** A saved run with its events decoded, ready to resume. */
export interface RestoredRun {
  readonly runId?: string;
  readonly queued: Record<string, Delivery[]>;
  readonly inFlight: Record<string, Delivery[]>;
  /** `ctx.once` records per execution id (live maps for a run kept by `cancel()`: work that ends later is recorded). */
  readonly once?: Record<string, Record<string, SavedOnceRecord> | OnceRecords>;
  readonly collected: Record<string, Record<string, Event[]>>;
  /** Still encoded when their class is not one the workflow's steps name: a `waitForEvent` for it decodes them. */
  readonly unclaimed: (Event | SavedEvent)[];
  readonly waiters?: SavedRun["waiters"];
}

/**
 * Decodes a saved run's events with `workflow`'s event classes and codecs. Throws
 * `ContextSerdeError` for events of steps the workflow does not have.
 * @example const restored = restoreRun(saved.run, flow);
 */
export function restoreRun(run: SavedRun, workflow: AnyWorkflow): RestoredRun {
  const graph = workflow.graph;
  const codecs = workflow.codecs;
  const types = new Map(graph.eventTypes);
  for (const type of [StartEvent, StopEvent, InputRequiredEvent, HumanResponseEvent] as EventClass[])
    if (!types.has(eventTypeName(type))) types.set(eventTypeName(type), type);
  for (const group of ["queued", "inFlight", "collected"] as const) {
    for (const step of Object.keys(run[group])) {
      if (!graph.steps.has(step))
        throw new ContextSerdeError(
          `Cannot restore the context: the saved run has events for a step "${step}" that ${workflow.constructor.name} does not have.`,
          { path: `run.${group}.${step}` },
        );
    }
  }
  const deliveries = (group: Record<string, SavedDelivery[]>, what: string): Record<string, Delivery[]> =>
    Object.fromEntries(
      Object.entries(group).map(([step, list]) => [
        step,
        list.map((ev, i) => ({ event: decodeEvent(ev, types, `run.${what}["${step}"][${i}]`, codecs), execution: ev.execution })),
      ]),
    );
  return {
    ...(run.runId ? { runId: run.runId } : {}),
    queued: deliveries(run.queued, "queued"),
    inFlight: deliveries(run.inFlight, "inFlight"),
    ...(run.once ? { once: run.once } : {}),
    collected: Object.fromEntries(
      Object.entries(run.collected).map(([step, buffers]) => [
        step,
        Object.fromEntries(
          Object.entries(buffers).map(([id, list]) => [id, list.map((ev, i) => decodeEvent(ev, types, `run.collected["${step}"]["${id}"][${i}]`, codecs))]),
        ),
      ]),
    ),
    // An event sent for a waitForEvent of a class no step names stays encoded until the wait asks for it.
    unclaimed: run.unclaimed.map((ev, i) => (types.has(ev.type) ? decodeEvent(ev, types, `run.unclaimed[${i}]`, codecs) : ev)),
  };
}

/** Encodes a run's pending events (live, or kept by a cancel) as plain JSON. */
export function encodeRun(run: RestoredRun, codecs: Codecs): SavedRun {
  const events = (list: Iterable<Event>, where: string) => [...list].map((ev, i) => encodeEvent(ev, `${where}[${i}]`, codecs));
  const group = (record: Record<string, Event[]>, what: string) =>
    Object.fromEntries(Object.entries(record).map(([name, list]) => [name, events(list, `${what} "${name}"`)]));
  const deliveries = (record: Record<string, Delivery[]>, what: string) =>
    Object.fromEntries(
      Object.entries(record).map(([name, list]) => [
        name,
        list.map((d, i): SavedDelivery => ({
          ...encodeEvent(d.event, `${what} "${name}"[${i}]`, codecs),
          ...(d.execution === undefined ? {} : { execution: d.execution }),
        })),
      ]),
    );
  const collected = Object.fromEntries(
    Object.entries(run.collected).map(([name, buffers]) => [name, group(buffers, `collected event of step "${name}", buffer`)]),
  );
  const unclaimed = run.unclaimed.map((ev, i) => (isEvent(ev) ? encodeEvent(ev, `unclaimed event[${i}]`, codecs) : (ev as SavedEvent)));
  const once: Record<string, Record<string, SavedOnceRecord>> = {};
  for (const [id, records] of Object.entries(run.once ?? {})) {
    const saved = records instanceof OnceRecords ? saveOnceRecords(records) : (records as Record<string, SavedOnceRecord>);
    if (Object.keys(saved).length > 0) once[id] = saved;
  }
  return {
    ...(run.runId ? { runId: run.runId } : {}),
    queued: deliveries(run.queued, "queued event of step"),
    inFlight: deliveries(run.inFlight, "in-flight event of step"),
    ...(Object.keys(once).length > 0 ? { once } : {}),
    collected,
    unclaimed,
    waiters: run.waiters ?? [],
  };
}
