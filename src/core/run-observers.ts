/**
 * Who follows one run's changes: the verbose log, lifecycle events on the run's stream, and run
 * observers (OpenTelemetry). Each is a subscriber to the one stream of {@link RunChange}s, made
 * for the run when it asks for it; a run that asks for none has no subscriber and its
 * transitions make no changes.
 */
import { eventTypeName } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import { WorkflowCancelledByUser, WorkflowTimeoutError } from "./errors.ts";
import { EventReceivedEvent, RunEndedEvent, RunStartedEvent, StepStateChangedEvent, WorkflowIdleEvent } from "./lifecycle.ts";
import type { RunStatus, StepState } from "./lifecycle.ts";
import type { RunObservation, StepObservation } from "./observer.ts";
import type { RunListener, RunSettings } from "./run-io.ts";
import type { StepExecution } from "./run-state.ts";
import type { RunOutcome } from "./run-io.ts";
import { describeValue } from "./user-text.ts";

/** What {@link followersOf} gives a run nobody follows: shared, as it is all of them. */
const NO_FOLLOWERS = Object.freeze({ listeners: Object.freeze([]) as readonly RunListener[], bridge: undefined });

/**
 * Who follows `run`, from its settings: the verbose log, lifecycle events (on its stream), and
 * the run observers' bridge, whose listener is among `listeners`. Made when the run starts.
 * @example const { listeners, bridge } = followersOf(run.settings, false, run);
 */
export function followersOf(
  settings: RunSettings,
  resumed: boolean,
  run: { readonly id: string; readonly stream: { push(event: Event): void } },
): { readonly listeners: readonly RunListener[]; readonly bridge: ObservationBridge | undefined } {
  const observers = settings.observers;
  // Most runs have no follower: they make none of the closures below (two per run, for nothing).
  if (!settings.log && !settings.lifecycleEvents && !observers.observing()) return NO_FOLLOWERS;
  const runId = () => run.id;
  const push = (event: Event) => run.stream.push(event);
  const listeners: RunListener[] = [];
  if (settings.log) listeners.push(logChanges(settings.log));
  if (settings.lifecycleEvents) listeners.push(lifecycleChanges(settings.workflowName, runId, push));
  const observation = observers.observing() ? observers.observeRun({ runId: runId(), workflow: settings.workflowName, resumed }) : undefined;
  const bridge = observation ? new ObservationBridge(observation, runId) : undefined;
  if (bridge) listeners.push(bridge.listener);
  return { listeners, bridge };
}

/**
 * The verbose log as a subscriber: a line per step attempt, result, retry and recovery.
 * @example const listener = logChanges((line) => console.log(line));
 */
export function logChanges(log: (line: string) => void): RunListener {
  return (change) => {
    switch (change.kind) {
      case "stepStarted":
        return log(`Running step ${nameOf(change.execution)}`);
      case "stepFinished":
        return log(
          change.output === undefined
            ? `Step ${nameOf(change.execution)} produced no event`
            : `Step ${nameOf(change.execution)} produced event ${typeOf(change.output)}`,
        );
      case "stepFailed":
        if (change.retryIn !== null) log(`Step ${nameOf(change.execution)} failed (attempt ${change.attempt}); retrying in ${change.retryIn} seconds`);
        return;
      case "stepRecovering":
        return log(`Step ${nameOf(change.execution)} failed; recovering with step ${change.recoverer}`);
      case "runStarted":
      case "stepCancelled":
      case "runIdle":
      case "eventReceived":
      case "runEnded":
        return;
      default:
        return assertNever(change);
    }
  };
}

/**
 * Lifecycle events as a subscriber: `RunStartedEvent`, a `StepStateChangedEvent` per step
 * attempt's change, an `EventReceivedEvent` per event accepted from outside, a `WorkflowIdleEvent`
 * per idle period, `RunEndedEvent`, written with `push` (to the run's stream).
 * @example const listener = lifecycleChanges(workflowName, () => run.id, (event) => stream.push(event));
 */
export function lifecycleChanges(workflow: string, runId: () => string, push: (event: Event) => void): RunListener {
  const stepState = (execution: StepExecution, state: StepState, attempt: number, more: { outputEvent?: string; error?: string; willRetry?: boolean } = {}) =>
    push(new StepStateChangedEvent({ runId: runId(), step: nameOf(execution), state, attempt, inputEvent: typeOf(execution.event), ...more }));
  return (change) => {
    switch (change.kind) {
      case "runStarted":
        return push(new RunStartedEvent({ runId: runId(), workflow, resumed: change.resumed }));
      case "stepStarted":
        return stepState(change.execution, "started", change.attempt);
      case "stepFinished":
        return stepState(change.execution, "finished", change.attempt, change.output === undefined ? {} : { outputEvent: typeOf(change.output) });
      case "stepFailed":
        return stepState(change.execution, "failed", change.attempt, { error: errorMessage(change.error), willRetry: change.retryIn !== null });
      case "stepCancelled":
        return stepState(change.execution, "cancelled", change.execution.attempt);
      case "stepRecovering":
        return;
      case "runIdle":
        return push(new WorkflowIdleEvent({ runId: runId() }));
      case "eventReceived":
        return push(new EventReceivedEvent({ runId: runId(), eventType: typeOf(change.event), event: change.event }));
      case "runEnded":
        return push(runEnded(runId(), change.outcome));
      default:
        return assertNever(change);
    }
  };
}

/**
 * A run observer (OpenTelemetry) as a subscriber: it also runs each step attempt inside the
 * observer's own context (`run`), so that what the step does belongs to the step's span.
 * @example const bridge = new ObservationBridge(observation, () => run.id);
 */
export class ObservationBridge {
  /** Each execution's current attempt, as the observer follows it. */
  readonly #steps = new Map<StepExecution, StepObservation>();

  constructor(
    readonly observation: RunObservation,
    readonly runId: () => string,
  ) {}

  readonly listener: RunListener = (change) => {
    switch (change.kind) {
      case "stepStarted": {
        const step = this.observation.stepStarted({
          runId: this.runId(),
          step: nameOf(change.execution),
          attempt: change.attempt,
          inputEvent: typeOf(change.execution.event),
        });
        if (step) this.#steps.set(change.execution, step);
        return;
      }
      case "stepFinished":
        return this.#ended(change.execution, change.output === undefined ? { ok: true } : { ok: true, outputEvent: typeOf(change.output) });
      case "stepFailed":
        return this.#ended(change.execution, { ok: false, error: change.error, willRetry: change.retryIn !== null });
      case "stepCancelled":
        return this.#ended(change.execution, {
          ok: false,
          error: new WorkflowCancelledByUser("The run ended while the step was executing."),
          willRetry: false,
        });
      case "runEnded":
        for (const step of this.#steps.values()) step.ended({ ok: false, error: new WorkflowCancelledByUser("The run ended."), willRetry: false });
        this.#steps.clear();
        return this.observation.runEnded(
          change.outcome.ok ? { status: "succeeded" } : { status: runStatus(change.outcome.error), error: change.outcome.error },
        );
      case "runIdle":
        return this.observation.idle?.();
      case "runStarted":
      case "stepRecovering":
      case "eventReceived":
        return;
      default:
        return assertNever(change);
    }
  };

  /** Runs `work` (the step's handler) in the observer's context for `execution`'s attempt. */
  run<T>(execution: StepExecution, work: () => T): T {
    const step = this.#steps.get(execution);
    return step ? step.run(work) : work();
  }

  #ended(execution: StepExecution, outcome: Parameters<StepObservation["ended"]>[0]): void {
    const step = this.#steps.get(execution);
    if (!step) return;
    this.#steps.delete(execution);
    step.ended(outcome);
  }
}

function runEnded(runId: string, outcome: RunOutcome): RunEndedEvent {
  if (outcome.ok) return new RunEndedEvent({ runId, status: "succeeded" });
  const error = outcome.error;
  return new RunEndedEvent({
    runId,
    status: runStatus(error),
    error: { name: error instanceof Error ? error.name : typeof error, message: errorMessage(error) },
  });
}

function runStatus(error: unknown): RunStatus {
  return error instanceof WorkflowCancelledByUser ? "cancelled" : error instanceof WorkflowTimeoutError ? "timedOut" : "failed";
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : describeValue(error);
}

const nameOf = (execution: StepExecution): string => execution.slot.step.name;
const typeOf = (event: Event): string => eventTypeName(event.constructor as EventClass);

function assertNever(value: never): never {
  throw new Error(`Unknown run change ${JSON.stringify(value)}`);
}
