/**
 * `ctx.collectEvents`: a step's buffers of events, and the sets they complete. Each event costs
 * O(1) until the one that completes a set, which costs O(length of the set) once: amortised
 * O(1) per event, however long the list of expected types — when the list is given as the same
 * array at each call, or as a class and a count (`collectEvents(ev, Done, { count: n })`).
 *
 * A fresh array at each call (`Array(n).fill(Done)`) is read whole at each call, O(n): it is
 * the only sound way to know what it asks for, as any element left unread could name another
 * class and so another buffer (a check of its length and a sample of its elements would put an
 * event into the wrong buffer for a list that differs elsewhere). The caller has just written
 * those n elements, so the read costs about what building the list did; it is one tight loop of
 * reference comparisons against the list's plan, with nothing allocated and nothing kept.
 */
import { eventTypeName } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import type { CollectBuffer, CollectPlan, CollectPlans, RunState, StepExecution } from "./run-state.ts";

function plansOf(state: RunState): CollectPlans {
  return (state.collectPlans ??= { byList: new WeakMap(), last: undefined, byCount: undefined });
}

/**
 * What `types` asks for. A list seen before (the same array) costs a lookup; a new array equal
 * to the last list (`Array(n).fill(Done)` at each call) costs one pass of reference comparisons,
 * and is not remembered (a WeakMap entry per call was most of that call's cost, in ephemeron
 * tables for the garbage collector).
 */
function planOfList(state: RunState, types: readonly EventClass[]): CollectPlan {
  const plans = plansOf(state);
  let plan = plans.byList.get(types);
  if (!plan) {
    const last = plans.last;
    if (last && asks(last, types)) return last;
    plan = newPlan(types);
    plans.byList.set(types, plan);
  }
  plans.last = plan;
  return plan;
}

/** What `count` events of `type` ask for: the plan of `Array(count).fill(type)`, made once per class and count. */
function planOfCount(state: RunState, type: EventClass, count: number): CollectPlan {
  const plans = plansOf(state);
  const byCount = (plans.byCount ??= new Map());
  let counts = byCount.get(type);
  if (!counts) byCount.set(type, (counts = new Map()));
  let plan = counts.get(count);
  if (!plan) {
    const name = eventTypeName(type);
    // The key of the equal list, so that both forms share one buffer (and a saved run's buffers).
    const key = `${`${name}|`.repeat(count - 1)}${name}`;
    counts.set(
      count,
      (plan = { length: count, single: type, types: undefined, key, members: new Set([type]), counts: new Map([[type, count]]), cached: undefined }),
    );
  }
  return plan;
}

function newPlan(types: readonly EventClass[]): CollectPlan {
  const first = types[0] as EventClass;
  let single: EventClass | undefined = first;
  const counts = new Map<EventClass, number>();
  for (const type of types) {
    counts.set(type, (counts.get(type) ?? 0) + 1);
    if (type !== first) single = undefined;
  }
  const key = types.map(eventTypeName).join("|");
  return { length: types.length, single, types: single ? undefined : [...types], key, members: new Set(types), counts, cached: undefined };
}

/** Whether `types` asks for what `plan` does: every element read, as a fresh list may differ anywhere. */
function asks(plan: CollectPlan, types: readonly EventClass[]): boolean {
  const n = types.length;
  if (n !== plan.length) return false;
  const single = plan.single;
  if (single) {
    for (let i = 0; i < n; i++) if (types[i] !== single) return false;
    return true;
  }
  const own = plan.types as readonly EventClass[];
  for (let i = 0; i < n; i++) if (types[i] !== own[i]) return false;
  return true;
}

/**
 * `collectEvents` of `execution`: buffers `event` and returns the events of `types`, in that
 * order, once one of each has arrived; until then `null`.
 * @example const ready = collect(state, execution, ev, [ResultA, ResultB], undefined);
 */
export function collect(state: RunState, execution: StepExecution, event: Event, types: readonly EventClass[], bufferId: string | undefined): Event[] | null {
  if (types.length === 0) return [];
  return collectFor(state, execution, event, planOfList(state, types), bufferId);
}

/**
 * `collectEvents(event, type, { count })` of `execution`: the same as {@link collect} with
 * `Array(count).fill(type)`, the same buffer included, at O(1) per call.
 * @example const all = collectCount(state, execution, ev, Done, 1000, undefined);
 */
export function collectCount(
  state: RunState,
  execution: StepExecution,
  event: Event,
  type: EventClass,
  count: number,
  bufferId: string | undefined,
): Event[] | null {
  if (count === 0) return [];
  return collectFor(state, execution, event, planOfCount(state, type, count), bufferId);
}

function collectFor(state: RunState, execution: StepExecution, event: Event, plan: CollectPlan, bufferId: string | undefined): Event[] | null {
  const stepName = execution.slot.step.name;
  let buffer: CollectBuffer;
  if (bufferId !== undefined) buffer = bufferOf(state, stepName, bufferId);
  else {
    // The default buffer of the step that asked last: most fan-ins call from one step, at every event.
    const cached = plan.cached;
    if (cached && cached.stepName === stepName) buffer = cached.buffer;
    else plan.cached = { stepName, buffer: (buffer = bufferOf(state, stepName, plan.key)) };
  }
  const type = event.constructor as EventClass;
  if (plan.single === undefined ? plan.members.has(type) : type === plan.single) {
    if (!execution.retried) addToBuffer(buffer, event);
    else {
      // A retried attempt: the set its first attempt completed, or its event already in.
      const done = execution.taken?.find((set) => set.buffer === buffer && set.events.includes(event));
      if (done) return done.events;
      if (!buffer.byType.get(type)?.includes(event)) addToBuffer(buffer, event);
    }
  }
  const length = plan.length;
  if (buffer.size < length) return null;
  let events: Event[];
  const single = plan.single;
  if (single) {
    const list = buffer.byType.get(single);
    if (list === undefined || list.length < length) return null;
    // The whole list when it is the set (a fan-in's usual end): handed over, not copied.
    if (list.length === length) {
      events = list;
      buffer.byType.delete(single);
    } else events = list.splice(0, length);
  } else {
    for (const [member, count] of plan.counts) if ((buffer.byType.get(member)?.length ?? 0) < count) return null;
    const taken = new Map<EventClass, number>();
    events = (plan.types as readonly EventClass[]).map((member) => {
      const i = taken.get(member) ?? 0;
      taken.set(member, i + 1);
      return (buffer.byType.get(member) as Event[])[i] as Event;
    });
    for (const [member, count] of taken) (buffer.byType.get(member) as Event[]).splice(0, count);
  }
  buffer.size -= length;
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
