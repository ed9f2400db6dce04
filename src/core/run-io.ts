/**
 * What goes into a run and what comes out: its settings, the inputs of its transitions (what
 * happened), the commands (what the driver must do), and the changes observers follow, one
 * stream of them, which the verbose log, lifecycle events and run observers (OpenTelemetry) all
 * read.
 */
import type { Event } from "./event.ts";
import type { StopEvent } from "./event.ts";
import type { RestoredRun } from "./saved-run.ts";
import type { StepDefinition } from "./step.ts";
import type { StepExecution, WaitAnswer, Waiter } from "./run-state.ts";
import type { RunObservers } from "./observer.ts";
import type { TimeSlices } from "./time-slices.ts";

/** Options of one run. @example `const settings: RunSettings = { workflowName: "Flow", timeout: 10, log: undefined, observers, timeSlices };` */
export interface RunSettings {
  readonly workflowName: string;
  /** Write RunStartedEvent, StepStateChangedEvent, WorkflowIdleEvent and RunEndedEvent to the stream. */
  readonly lifecycleEvents?: boolean;
  readonly timeout: number | null;
  readonly log: ((line: string) => void) | undefined;
  /** Who follows the run (the workflow's observers). */
  readonly observers: RunObservers;
  /** The scheduler the run's step executions start in (the workflow's). */
  readonly timeSlices: TimeSlices;
}

/** How a run ended. */
export type RunOutcome = { readonly ok: true; readonly stop: StopEvent } | { readonly ok: false; readonly error: unknown };

/** What happened to a run: the input of {@link transition}. */
export type RunInput =
  /** The run's first event (the StartEvent), loaded before the run starts. */
  | { readonly kind: "schedule"; readonly event: Event }
  /** A run saved in progress, loaded before the run continues it. */
  | { readonly kind: "restore"; readonly restored: RestoredRun }
  /** The run starts executing what it has loaded. */
  | { readonly kind: "start" }
  /**
   * An event sent by `ctx.sendEvent` (to `target` only, when given); kept for a later wait when
   * nothing takes it. `fromOutside`: sent through the handler's context, not by a step.
   */
  | { readonly kind: "send"; readonly event: Event; readonly target: StepDefinition | undefined; readonly fromOutside?: boolean }
  /** Attempt `attempt` of `execution` returned `output`. */
  | { readonly kind: "stepReturned"; readonly execution: StepExecution; readonly output: unknown; readonly attempt: number }
  /** Attempt `attempt` of `execution` threw `error`, `elapsed` seconds after its first attempt began. */
  | { readonly kind: "stepThrew"; readonly execution: StepExecution; readonly error: unknown; readonly attempt: number; readonly elapsed: number }
  /** Attempt `attempt` (> 1) of `execution` begins, after its retry delay. */
  | { readonly kind: "retrying"; readonly execution: StepExecution; readonly attempt: number }
  /** A `retry` command that `needsWorker`: `start` (which begins it) once `execution` has a worker of its step again. */
  | { readonly kind: "retryWhenFree"; readonly execution: StepExecution; readonly start: () => void }
  /** `waitForEvent` asks: answered by a kept event, or registered; `waiterEvent` goes to the stream if it must wait. */
  | { readonly kind: "wait"; readonly waiter: Waiter; readonly waiterEvent: Event | undefined }
  /** A wait's timeout expired with `error`. */
  | { readonly kind: "waitTimedOut"; readonly waiter: Waiter; readonly error: unknown }
  /** The run's timeout (`seconds`) expired. */
  | { readonly kind: "timedOut"; readonly workflow: string; readonly seconds: number }
  /** The run fails with `error` (a cancel, an error outside the steps). */
  | { readonly kind: "fail"; readonly error: unknown }
  /** The check a `checkIdle` command deferred: the run is idle if it still is, and has not worked since it became idle as `period`. */
  | { readonly kind: "idleCheck"; readonly period: number };

/** What the driver carries out: the output of {@link transition}, in order. */
export type RunCommand =
  /** Call `execution`'s step (its worker is counted already). */
  | { readonly kind: "execute"; readonly execution: StepExecution }
  /**
   * Start attempt `attempt` of `execution` after `delay` seconds (0: now); `needsWorker`: it gave
   * its worker back to wait, and every worker was busy then, so it must wait for one (`retryWhenFree`).
   */
  | { readonly kind: "retry"; readonly execution: StepExecution; readonly attempt: number; readonly delay: number; readonly needsWorker?: true }
  /** Begin a retry that had to wait for a worker of its step (which it now holds). */
  | { readonly kind: "startRetry"; readonly start: () => void }
  /** Continue a wait with its answer. */
  | { readonly kind: "answer"; readonly waiter: Waiter; readonly answer: WaitAnswer }
  /** Write `event` to the run's stream. */
  | { readonly kind: "stream"; readonly event: Event }
  /** Tell the run's observers. */
  | { readonly kind: "observe"; readonly change: RunChange }
  /**
   * The observed run became idle (its `period`-th time): apply `idleCheck` once what is under
   * way has had its turn, as Python checks after a yield, so that an answer sent at once (in
   * the stream's loop, say) is not first told of as a wait.
   */
  | { readonly kind: "checkIdle"; readonly period: number }
  /** The run ended: answer `waiters` with `reason`, stop timers, abort the signal (`reason`), settle with `outcome`. */
  | { readonly kind: "end"; readonly outcome: RunOutcome; readonly reason: unknown; readonly waiters: readonly Waiter[] };

/**
 * A command as the transitions hand it to the driver: the same as a {@link RunCommand}, except
 * that an `execute` command is the execution itself (whose `kind` is "execute"), as almost every
 * transition emits one and an object for it was an allocation per step execution.
 * @example const execution = (command: Command) => (command.kind === "execute" ? command : undefined);
 */
export type Command = StepExecution | Exclude<RunCommand, { readonly kind: "execute" }>;

/**
 * What a transition leads to: nothing, one command, or several in order. One command comes
 * alone, not in an array: it is what almost every transition emits (a step execution to
 * start), and an array of one for it was an allocation per step execution.
 */
export type Commands = Command | readonly Command[] | undefined;

/**
 * One change of a run.
 * @example
 * const log = (change: RunChange) => change.kind === "stepStarted" && console.log(change.execution.slot.step.name);
 */
export type RunChange =
  /** The run started (or a saved run resumed). */
  | { readonly kind: "runStarted"; readonly resumed: boolean }
  /** The run accepted `event`, sent in from outside it (not by a step); noted before what it leads to. */
  | { readonly kind: "eventReceived"; readonly event: Event }
  /** Attempt `attempt` of `execution` is about to call its step. */
  | { readonly kind: "stepStarted"; readonly execution: StepExecution; readonly attempt: number }
  /** Attempt `attempt` returned `output` (an event, or nothing). */
  | { readonly kind: "stepFinished"; readonly execution: StepExecution; readonly attempt: number; readonly output: Event | undefined }
  /** Attempt `attempt` threw `error`; `retryIn`: seconds before the next attempt, `null` when none follows. */
  | { readonly kind: "stepFailed"; readonly execution: StepExecution; readonly attempt: number; readonly error: unknown; readonly retryIn: number | null }
  /** The execution failed for good and the recovery step `recoverer` takes over. */
  | { readonly kind: "stepRecovering"; readonly execution: StepExecution; readonly recoverer: string }
  /** The run ended while the execution was still going: its result will be ignored. */
  | { readonly kind: "stepCancelled"; readonly execution: StepExecution }
  /** The run is idle: nothing queued or executing, it waits for an event from outside. Once per idle period. */
  | { readonly kind: "runIdle" }
  /** The run ended. */
  | { readonly kind: "runEnded"; readonly outcome: RunOutcome };

/**
 * Follows one run's changes. Called synchronously, in order; must not throw.
 * @example const listener: RunListener = (change) => console.log(change.kind);
 */
export type RunListener = (change: RunChange) => void;
