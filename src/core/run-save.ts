/**
 * A run's state in and out of a save: loading a restored run into a fresh {@link RunState},
 * and reading a live state as the events a save keeps.
 */
import { eventTypeName } from "./event.ts";
import type { Event } from "./event.ts";
import { WorkflowRuntimeError } from "./errors.ts";
import { encodeValue } from "./serialize.ts";
import { restoreOnceRecords } from "./step-once.ts";
import type { OnceRecords } from "./once-records.ts";
import { newExecution, slotOf } from "./run-state.ts";
import { StepQueue } from "./step-queue.ts";
import type { CollectBuffer, RunState, StepExecution } from "./run-state.ts";
import { addToBuffer, bufferOf } from "./collect-events.ts";
import { heldByOnce } from "./run-waits.ts";
import type { Delivery, RestoredRun } from "./saved-run.ts";

/**
 * Loads a saved run into `state` (not started yet); returns the error that stops it, if any.
 * @example const error = loadRestored(state, restoreRun(saved.run, flow));
 */
export function loadRestored(state: RunState, restored: RestoredRun): Error | undefined {
  const once = restored.once ?? {};
  for (const [name, buffers] of Object.entries(restored.collected)) {
    for (const [id, events] of Object.entries(buffers)) {
      const buffer = bufferOf(state, name, id);
      for (const event of events) addToBuffer(buffer, event);
    }
  }
  state.unclaimed.push(...restored.unclaimed);
  // In-flight events first: they were taken before the queued ones.
  for (const source of [restored.inFlight, restored.queued]) {
    for (const [name, events] of Object.entries(source)) {
      const slot = slotOf(state, name);
      if (!slot) return new WorkflowRuntimeError(`The saved run has events for a step "${name}" that this workflow does not have.`);
      for (const { event, execution } of events) {
        const id = execution ?? ++state.executions;
        const records = execution === undefined ? undefined : once[execution];
        (slot.queue ??= new StepQueue(slot)).pushExecution(newExecution(slot, event, id, records ? restoreOnceRecords(records) : undefined));
      }
    }
  }
  return undefined;
}

/**
 * What `state` has pending, as live events (copies of the lists: the run goes on changing its
 * own). `executionId` gives each execution its saved id; the executions it names are marked shared.
 * @example const pending = pendingRun(state, run.id, (execution) => String(execution.id));
 */
export function pendingRun(state: RunState, runId: string, executionId: (execution: StepExecution) => string): RestoredRun {
  const queued: Record<string, Delivery[]> = {};
  const inFlight: Record<string, Delivery[]> = {};
  const once: Record<string, OnceRecords> = {};
  const deliver = (execution: StepExecution): Delivery => {
    const id = executionId(execution);
    execution.shared = id;
    if (execution.once && execution.once.size > 0) once[id] = execution.once;
    return { event: execution.event, execution: id };
  };
  for (const slot of state.slots) {
    const name = slot.step.name;
    if (slot.queue?.size) queued[name] = slot.queue.executions().map(deliver);
    if (slot.inFlight.size) inFlight[name] = slot.inFlight.toArray().map(deliver);
  }
  // A restored run executes the in-flight steps again, and they collect their events again:
  // saved are the buffers as they were before those executions added or took anything.
  // (Recorded without a cost per event: an in-flight execution's own event leaves its step's
  // buffers, and the sets it completed go back.)
  const rerun = new Map<string, Set<Event>>();
  const restored = new Map<CollectBuffer, Event[]>();
  for (const slot of state.slots) {
    const name = slot.step.name;
    for (let execution = slot.inFlight.first; execution; execution = execution.next) {
      let events = rerun.get(name);
      if (!events) rerun.set(name, (events = new Set()));
      events.add(execution.event);
      for (const set of execution.taken ?? []) {
        let back = restored.get(set.buffer);
        if (!back) restored.set(set.buffer, (back = []));
        back.push(...set.events);
      }
    }
  }
  const collected: Record<string, Record<string, Event[]>> = {};
  for (const [name, buffers] of state.collected ?? []) {
    const removed = rerun.get(name);
    for (const [id, buffer] of buffers) {
      let events = [...(restored.get(buffer) ?? []), ...bufferedEvents(buffer)];
      if (removed) events = events.filter((ev) => !removed.has(ev));
      if (events.length > 0) (collected[name] ??= {})[id] = events;
    }
  }
  const waiters = state.waiters.map((w) => ({
    type: eventTypeName(w.type),
    requirements: encodeValue(w.requirements ?? null, `requirements of waitForEvent(${eventTypeName(w.type)})`),
  }));
  // In-flight executions wait again when the run is restored: what their waits took goes back first, as it came before.
  // (Not what a recorded ctx.once holds: its work does not run again.)
  const waited = state.slots.flatMap((slot) =>
    slot.inFlight.toArray().flatMap((execution) => (execution.waited ?? []).filter((w) => !heldByOnce(execution, w))),
  );
  const givenBack = waited.sort((a, b) => a.order - b.order).map(({ event }) => event);
  return { runId, queued, inFlight, once, collected, unclaimed: [...givenBack, ...state.unclaimed], waiters };
}

/** The events a buffer holds, each class's in arrival order. */
function bufferedEvents(buffer: CollectBuffer): Event[] {
  const events: Event[] = [];
  for (const list of buffer.byType.values()) events.push(...list);
  return events;
}
