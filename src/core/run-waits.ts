/**
 * The waits of a run's transitions: `waitForEvent` answered from the events kept so far or
 * registered, events given to the waiters they answer, and a waiting step woken once it has a
 * worker again. Part of the transitions (run-transitions.ts): synchronous, on the run's state.
 */
import { eventTypeName, isEvent } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import { WorkflowRuntimeError } from "./errors.ts";
import { decodeEvent } from "./serialize.ts";
import type { SavedEvent } from "./serialize.ts";
import { ended } from "./run-state.ts";
import { Fifo } from "./fifo.ts";
import type { RunState, StepExecution, StepSlot, WaitAnswer, Waiter } from "./run-state.ts";
import type { Command } from "./run-io.ts";

/** What the waits need of the transitions: the state, a command out, a step's queue run again, the idle check. @example `const host: WaitHost = transitions;` */
export interface WaitHost {
  readonly state: RunState;
  emit(command: Command): void;
  pump(slot: StepSlot): void;
  quiet(): void;
}

/** The first kept event that matches answers at once; else the wait is registered, and its step's worker freed. */
export function wait(t: WaitHost, waiter: Waiter, waiterEvent: Event | undefined): void {
  const state = t.state;
  const { type, execution } = waiter;
  const unclaimed = state.unclaimed;
  for (let i = 0; i < unclaimed.length; i++) {
    let event = unclaimed[i] as Event | SavedEvent;
    if (!isEvent(event)) {
      // Restored before anything knew its class (only the waiting step names it): decoded now.
      const saved = event as unknown as SavedEvent;
      if (saved.type !== eventTypeName(type)) continue;
      try {
        event = unclaimed[i] = decodeEvent(saved, new Map([[saved.type, type]]), `unclaimed event[${i}]`, state.codecs);
      } catch {
        continue; // saved in a shape the class no longer takes (an older version): it answers nothing, and the question is asked again
      }
    }
    if (matches(waiter, event as Event)) {
      unclaimed.splice(i, 1);
      tookForWait(t, execution, event as Event);
      return t.emit({ kind: "answer", waiter, answer: { ok: true, event: event as Event } });
    }
  }
  if (ended(state)) {
    const error = new WorkflowRuntimeError(`waitForEvent(${eventTypeName(type)}) was called after the run ended.`);
    return t.emit({ kind: "answer", waiter, answer: { ok: false, error } });
  }
  state.waiters.push(waiter);
  // A waiting step gives its worker back (Python re-runs the step when the answer comes), so
  // the events it waits on can reach it even with numWorkers: 1.
  const freed = execution !== undefined && execution.waits++ === 0;
  if (freed) {
    execution.slot.busy--;
    t.pump(execution.slot);
  }
  if (waiterEvent && !ended(state)) t.emit({ kind: "stream", event: waiterEvent });
  if (freed) t.quiet();
}

/** Gives `event` to the first waiter it answers, if any. */
export function deliverToWaiter(t: WaitHost, event: Event): boolean {
  const waiters = t.state.waiters;
  const index = waiters.findIndex((w) => matches(w, event));
  if (index < 0) return false;
  const [waiter] = waiters.splice(index, 1) as [Waiter];
  tookForWait(t, waiter.execution, event);
  wake(t, waiter, { ok: true, event });
  return true;
}

/**
 * Notes that `execution` took `event` with `waitForEvent`. A restored run executes an
 * in-flight step again from its input event, and its waits ask again: a save gives them
 * their answers back, in the order they were taken, so that each goes to its question again
 * and none is asked twice.
 */
function tookForWait(t: WaitHost, execution: StepExecution | undefined, event: Event): void {
  if (execution) (execution.waited ??= []).push({ order: t.state.waitedCount++, event, during: runningOnceNames(execution) });
}

/**
 * Before a retry of `execution`: the answers its failed attempt's waits took go back first
 * among the kept events, in the order taken, so that the retry's waits take them again without
 * asking again, as Python's workflows keep a step's answered waiters for its retries (a human
 * who approved is not asked twice because the step failed after). Not an answer a recorded
 * `ctx.once` holds: that work does not run again.
 */
export function giveBackAnswers(state: RunState, execution: StepExecution): void {
  const waited = execution.waited;
  execution.waited = undefined; // the retry's waits record what they take anew
  if (!waited) return;
  const back = waited.filter((w) => !heldByOnce(execution, w)).sort((a, b) => a.order - b.order);
  state.unclaimed.unshift(...back.map(({ event }) => event));
}

/**
 * When a failed attempt of `execution` is retried or handed to a recovery step: the waits it
 * left pending (its step timed out while it waited) were that attempt's, and answering one
 * would hand the answer to an attempt the run gave up on, where it should go to whoever asks
 * next or stay unclaimed. They end with `error`. True when the execution holds no worker then,
 * having given its worker back to wait: the caller takes one back for it (or queues for one)
 * before it finishes or retries, as `execution.waits` is 0 from now on.
 */
export function dropPendingWaits(t: WaitHost, execution: StepExecution, error: unknown): boolean {
  const slot = execution.slot;
  if (execution.waits === 0 && !slot.resumes?.size) return false;
  // Also a wait answered but not yet resumed, for want of a worker: it holds none either.
  const resumes = slot.resumes?.toArray() ?? [];
  const resumed = resumes.flatMap((r) => (r.waiter?.execution === execution ? [r.waiter] : []));
  if (execution.waits === 0 && resumed.length === 0) return false;
  if (resumed.length > 0) {
    slot.resumes = new Fifo();
    for (const r of resumes) if (r.waiter?.execution !== execution) slot.resumes.push(r);
  }
  const state = t.state;
  const stale = [...state.waiters.filter((w) => w.execution === execution), ...resumed];
  state.waiters = state.waiters.filter((w) => w.execution !== execution);
  execution.waits = 0;
  for (const waiter of stale) t.emit({ kind: "answer", waiter, answer: { ok: false, error } });
  return true;
}

/**
 * Counts a worker of `slot` as taken, if one is free and no execution waits for one before.
 * @example if (!takeWorker(slot)) queueForOne();
 */
export function takeWorker(slot: StepSlot): boolean {
  if (slot.busy >= slot.step.numWorkers || slot.resumes?.size) return false;
  slot.busy++;
  return true;
}

/**
 * The retry of `execution`, which gave its worker back to wait and found every worker busy when
 * its attempt failed: `start` begins it once it has a worker again, queued as a waiting
 * execution whose answer came is, so that its step never runs more than `numWorkers` at once.
 */
export function retryWhenFree(t: WaitHost, execution: StepExecution, start: () => void): void {
  if (ended(t.state)) return;
  if (takeWorker(execution.slot)) t.emit({ kind: "startRetry", start });
  else (execution.slot.resumes ??= new Fifo()).push({ execution, start });
}

/** Whether a wait's event is held by a `ctx.once` that was running when it was taken and has recorded its result. */
export function heldByOnce(execution: StepExecution, waited: NonNullable<StepExecution["waited"]>[number]): boolean {
  return waited.during?.some((name) => execution.once?.get(name)?.state === "finished") ?? false;
}

/** Continues a waiter: at once, or, for the last pending wait of a step execution, once it has a worker again. */
export function wake(t: WaitHost, waiter: Waiter, answer: WaitAnswer): void {
  const execution = waiter.execution;
  if (!execution || --execution.waits > 0 || execution.ended) return t.emit({ kind: "answer", waiter, answer });
  if (takeWorker(execution.slot)) t.emit({ kind: "answer", waiter, answer });
  else (execution.slot.resumes ??= new Fifo()).push({ waiter, answer });
}

/**
 * Whether `event` answers `waiter`: its exact class, as steps are routed and as Python's
 * workflows match waiters (a waiter for a base class must not take a subclass meant for another
 * waiter, nor take it live but not once restored, where an event is known by its class's name),
 * and every required field equal by value, as Python's `==`.
 */
function matches(waiter: Waiter, event: Event): boolean {
  const requirements = waiter.requirements;
  return (
    event.constructor === waiter.type && (!requirements || Object.entries(requirements).every(([k, v]) => sameValue((event as Record<string, unknown>)[k], v)))
  );
}

/** `a` and `b` equal, arrays and plain objects by their contents: a requirement `{ tags: ["x"] }` is a value, and a restored run's requirements are new objects. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => Object.hasOwn(b, key) && sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  );
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * The names of `execution`'s `ctx.once` calls whose work is running (live records): found when a
 * wait takes its event, so that `ctx.once` itself pays nothing for waits inside its work.
 */
function runningOnceNames(execution: StepExecution): string[] | undefined {
  let names: string[] | undefined;
  for (const [name, record] of execution.once ?? []) if (record.state === "started" && record.live) (names ??= []).push(name);
  return names;
}

/**
 * Whether the run still waits with `question` (a `waiterEvent` it wrote to its stream): false
 * once an event answered that wait, or the run ended (its end takes every wait off
 * `state.waiters`).
 * @example if (!stillAsks(run.state, question)) dropQuestion(question);
 */
export function stillAsks(state: RunState, question: Event): boolean {
  return state.waiters.some((waiter) => waiter.question === question);
}

/**
 * How many of the run's waits `event` answers if it is sent now. It goes to the first; a caller
 * that lets someone choose between questions (an approval, by its id) needs it to be one.
 * @example if (waitsAnswered(run.state, answer) > 1) throw new Error("the answer fits more than one question");
 */
export function waitsAnswered(state: RunState, event: Event): number {
  let count = 0;
  for (const waiter of state.waiters) if (matches(waiter, event)) count++;
  return count;
}

/**
 * Whether the run takes `event` at once if it is sent now: a wait it answers, or steps that
 * accept its class, each with a worker free. Else it would be kept (for a later wait, or queued
 * for a busy step), and count in {@link heldEvents}.
 * @example if (!takenAtOnce(run.state, answer)) console.log("kept until something takes it");
 */
export function takenAtOnce(state: RunState, event: Event): boolean {
  if (state.waiters.some((waiter) => matches(waiter, event))) return true;
  const to = state.steps.routes.get(event.constructor as EventClass);
  return to !== undefined && to.every((i) => (state.slots[i] as StepSlot).busy < (state.slots[i] as StepSlot).step.numWorkers);
}

/**
 * How many events the run holds that nothing has taken yet: those kept for a later wait, and
 * those queued for a busy step, of the steps named in `steps` (all when left out).
 * @example heldEvents(run.state, new Set(["review"])); // 3
 */
export function heldEvents(state: RunState, steps?: ReadonlySet<string>): number {
  let held = state.unclaimed.length;
  for (const slot of state.slots) if (slot.queue && (steps === undefined || steps.has(slot.step.name))) held += slot.queue.size;
  return held;
}

/**
 * The events {@link heldEvents} counts, read without changing the run: those kept for a later
 * wait (still encoded when restored before their class was known), then those queued for the
 * steps named in `steps` (all when left out).
 * @example for (const ev of heldEventList(run.state, new Set(["review"]))) console.log(ev);
 */
export function* heldEventList(state: RunState, steps?: ReadonlySet<string>): Generator<Event | SavedEvent> {
  yield* state.unclaimed;
  for (const slot of state.slots) if (slot.queue && (steps === undefined || steps.has(slot.step.name))) yield* slot.queue.events();
}
