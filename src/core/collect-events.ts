/**
 * `ctx.collectEvents`: a step's buffers of events, and the sets they complete. Each event costs
 * O(1) until the one that completes a set, which costs O(length of the set) once: amortised
 * O(1) per event, however long the list of expected types.
 */
import { eventTypeName } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import type { CollectBuffer, CollectPlan, RunState, StepExecution } from "./run-state.ts";

/**
 * What `types` asks for. A list seen before (the same array) costs a lookup; a new array equal
 * to the last list (`Array(n).fill(Done)` at each call) costs a comparison of references, not
 * a new plan with its key of n type names.
 */
function planOf(state: RunState, types: readonly EventClass[]): CollectPlan {
  const plans = (state.collectPlans ??= { byList: new WeakMap(), last: undefined });
  let plan = plans.byList.get(types);
  if (plan) return plan;
  const last = plans.last;
  if (last && sameList(last.types, types)) plan = last;
  else {
    const counts = new Map<EventClass, number>();
    for (const type of types) counts.set(type, (counts.get(type) ?? 0) + 1);
    plan = { types: [...types], key: types.map(eventTypeName).join("|"), members: new Set(types), counts };
  }
  plans.byList.set(types, plan);
  plans.last = plan;
  return plan;
}

function sameList(a: readonly EventClass[], b: readonly EventClass[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * `collectEvents` of `execution`: buffers `event` and returns the events of `types`, in that
 * order, once one of each has arrived; until then `null`.
 * @example const ready = collect(state, execution, ev, [ResultA, ResultB], undefined);
 */
export function collect(state: RunState, execution: StepExecution, event: Event, types: readonly EventClass[], bufferId: string | undefined): Event[] | null {
  if (types.length === 0) return [];
  const plan = planOf(state, types);
  const buffer = bufferOf(state, execution.slot.step.name, bufferId ?? plan.key);
  const type = event.constructor as EventClass;
  if (plan.members.has(type)) {
    if (!execution.retried) addToBuffer(buffer, event);
    else {
      // A retried attempt: the set its first attempt completed, or its event already in.
      const done = execution.taken?.find((set) => set.buffer === buffer && set.events.includes(event));
      if (done) return done.events;
      if (!buffer.byType.get(type)?.includes(event)) addToBuffer(buffer, event);
    }
  }
  if (buffer.size < types.length) return null;
  for (const [member, count] of plan.counts) if ((buffer.byType.get(member)?.length ?? 0) < count) return null;
  const taken = new Map<EventClass, number>();
  const events = types.map((member) => {
    const i = taken.get(member) ?? 0;
    taken.set(member, i + 1);
    return (buffer.byType.get(member) as Event[])[i] as Event;
  });
  for (const [member, count] of taken) (buffer.byType.get(member) as Event[]).splice(0, count);
  buffer.size -= types.length;
  (execution.taken ??= []).push({ buffer, events });
  return events;
}

/**
 * The buffer `id` of step `stepName`, made when first asked for.
 * @example const buffer = bufferOf(state, "collect", "Done|Done");
 */
export function bufferOf(state: RunState, stepName: string, id: string): CollectBuffer {
  const collected = (state.collected ??= new Map());
  let buffers = collected.get(stepName);
  if (!buffers) collected.set(stepName, (buffers = new Map()));
  let buffer = buffers.get(id);
  if (!buffer) buffers.set(id, (buffer = { byType: new Map(), size: 0 }));
  return buffer;
}

/**
 * Adds `event` to `buffer`, after the events of its class already there.
 * @example addToBuffer(bufferOf(state, "collect", "Done"), new Done({}));
 */
export function addToBuffer(buffer: CollectBuffer, event: Event): void {
  const type = event.constructor as EventClass;
  const list = buffer.byType.get(type);
  if (list) list.push(event);
  else buffer.byType.set(type, [event]);
  buffer.size++;
}
