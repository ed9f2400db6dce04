/**
 * The error of a run that timed out, worded from its state: the steps still active, the
 * answers its waits never got, and the events it was sent that nothing took (a run with no step
 * active and no wait has most often been sent an event no step accepts).
 */
import { eventTypeName, isEvent } from "./event.ts";
import type { EventClass } from "./event.ts";
import { WorkflowTimeoutError } from "./errors.ts";
import { activeSteps } from "./run-state.ts";
import type { RunState } from "./run-state.ts";
import type { SavedEvent } from "./serialize.ts";
import { describeRequirements } from "./user-text.ts";

/**
 * @example
 * runTimedOut(state, "Orders", 45).message;
 * // Workflow "Orders" timed out after 45 seconds. Active steps: none. Sent but taken by no step or waitForEvent: Refund (…).
 */
export function runTimedOut(state: RunState, workflow: string, seconds: number): WorkflowTimeoutError {
  const active = activeSteps(state);
  // A run that times out waiting for a human should say for what: the answer it never got.
  const waiting = state.waiters.map((w) => `${eventTypeName(w.type)}${describeRequirements(w.requirements)}`);
  const waitingFor = waiting.length > 0 ? ` Waiting for: ${waiting.join(", ")} (send it with handler.ctx.sendEvent).` : "";
  // Python's workflows stream an UnhandledEvent for such an event; here the timeout names it.
  const stray = new Set(state.unclaimed.map((ev) => (isEvent(ev) ? eventTypeName(ev.constructor as EventClass) : (ev as SavedEvent).type)));
  const unclaimed =
    stray.size > 0
      ? ` Sent but taken by no step or waitForEvent: ${[...stray].join(", ")} (routing is by exact class: is it in the accepts of the step meant to take it?).`
      : "";
  return new WorkflowTimeoutError(
    `Workflow "${workflow}" timed out after ${seconds} seconds. Active steps: ${active.join(", ") || "none"}.${waitingFor}${unclaimed}`,
    active,
  );
}
