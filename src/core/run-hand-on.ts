/**
 * The common case of a step's return, taken before the general transition (`returned` in
 * run-transitions.ts): most step executions return an event bound for exactly one step, or
 * nothing, in a run nobody observes where nothing waits. Each such return changes the state
 * as the general path would and hands back the executions it starts, in the same order, but
 * without the general path's bookkeeping: no command stored on the long-lived transitions
 * object (a write barrier for each young object stored there), no outer transition's commands
 * saved and restored, and no check made twice on the way. A fan-out takes it twice per item: a
 * worker step returns its event while others queue behind it, and the step counting them
 * returns nothing until the last.
 */
import { InputRequiredEvent, isEvent, StopEvent } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import { finishExecution, newExecution, savedIdOf, startExecution } from "./run-state.ts";
import type { RunState, StepExecution, StepSlot } from "./run-state.ts";
import { StepQueue } from "./step-queue.ts";
import type { Commands } from "./run-io.ts";

/**
 * `returned` in its most common case (ping-pong's every step): the returned event bound for
 * exactly one step with a free worker, while nothing queues behind the step that returned. It
 * changes the state as `returned` → `route` → `enqueue` → `execute` would and returns the one
 * execution they would start; `undefined`, with nothing changed: not that case. Kept apart from
 * {@link handOnQueued} and as small as it is: V8 inlines it into the driver whole.
 * @example
 * const next = handOn(state, observed, execution, output) ?? general();
 */
export function handOn(state: RunState, observed: boolean, execution: StepExecution, output: unknown): StepExecution | undefined {
  const slot = execution.slot;
  if (observed || state.phase !== "running" || state.waiters.length > 0 || execution.waits !== 0 || slot.queue?.size || slot.resumes?.size) return;
  // A restored or saved execution's event gets an id made from its own (`enqueue`): the general path.
  if (savedIdOf(execution) !== undefined || !isEvent(output) || output instanceof StopEvent || output instanceof InputRequiredEvent) return;
  const to = state.steps.routes.get(output.constructor as EventClass);
  if (to === undefined || to.length !== 1) return;
  const target = state.slots[to[0] as number] as StepSlot;
  // The worker the returning execution gives back counts when it goes to the same step.
  if (target.busy - (target === slot ? 1 : 0) >= target.step.numWorkers) return;
  finishExecution(execution);
  const next = newExecution(target, output, ++state.executions, undefined);
  startExecution(target, next);
  return next;
}

/**
 * What `returned(execution, output)` and then `pump` would do, in the next common cases: an
 * event bound for one step, free or queued, or nothing returned, while the returning step may
 * have a queue (a fan-out's workers and its counter). It returns the executions started, in
 * the general path's order (the one of the step the event went to, then the next queued one of
 * the step that returned), none (`undefined`), or `false`, with nothing changed, when it is not
 * that case and the general path must take it.
 * @example
 * const commands = handOnQueued(state, observed, execution, output);
 * if (commands === false) transitions.returned(execution, output, attempt);
 */
export function handOnQueued(state: RunState, observed: boolean, execution: StepExecution, output: unknown): Commands | false {
  const slot = execution.slot;
  if (observed || state.phase !== "running" || execution.waits !== 0 || slot.resumes?.size) return false;
  // The general path starts queued executions while workers are free: at most one here (a queue
  // with free workers beside it is left to `pump`).
  if (slot.busy < slot.step.numWorkers && (slot.queue?.size ?? 0) > 1) return false;
  let target: StepSlot | undefined;
  let event: Event | undefined;
  if (output !== undefined) {
    // A restored or saved execution's event gets an id made from its own (`enqueue`): the general path, as are waits, ends and failures.
    if (
      state.waiters.length > 0 ||
      savedIdOf(execution) !== undefined ||
      !isEvent(output) ||
      output instanceof StopEvent ||
      output instanceof InputRequiredEvent
    )
      return false;
    const to = state.steps.routes.get(output.constructor as EventClass);
    if (to === undefined || to.length !== 1) return false;
    target = state.slots[to[0] as number] as StepSlot;
    event = output;
  }
  finishExecution(execution);
  const first = target !== undefined && event !== undefined ? enqueue(state, target, event) : undefined;
  // `pump`: the worker given back takes the next queued execution of the step that returned.
  const queue = slot.queue;
  if (queue === undefined || queue.size === 0 || slot.busy >= slot.step.numWorkers) return first;
  const next = queue.shift() as StepExecution;
  startExecution(slot, next);
  return first === undefined ? next : [first, next];
}

/**
 * What `send(event, undefined, sender)` would do, when a step execution's `ctx.sendEvent(event)`
 * is the common case: the execution it starts, none (`undefined`: queued), or `false`, with
 * nothing changed, when the general path must take it. A fan-out's first step sends every item.
 * @example
 * const commands = sendOn(state, observed, event, execution);
 * if (commands === false) transitions.send(event, undefined, execution);
 */
export function sendOn(state: RunState, observed: boolean, event: Event, sender: StepExecution): Commands | false {
  if (observed || state.phase !== "running" || state.waiters.length > 0 || savedIdOf(sender) !== undefined || event instanceof StopEvent) return false;
  const to = state.steps.routes.get(event.constructor as EventClass);
  if (to === undefined || to.length !== 1) return false;
  return enqueue(state, state.slots[to[0] as number] as StepSlot, event);
}

/** `enqueue` of an event whose id is numbered: its id first, then a free worker (the execution returned) or the queue. */
function enqueue(state: RunState, slot: StepSlot, event: Event): StepExecution | undefined {
  const id = ++state.executions;
  if (slot.busy >= slot.step.numWorkers) {
    (slot.queue ??= new StepQueue(slot)).push(event, id); // its execution is made when it starts
    return undefined;
  }
  const execution = newExecution(slot, event, id, undefined);
  startExecution(slot, execution);
  return execution;
}
