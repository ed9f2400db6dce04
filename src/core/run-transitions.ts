/**
 * The transitions of a run: `transition(state, input)` changes a {@link RunState} for one thing
 * that happened (an event sent, a step returned or threw, a wait asked or timed out, a failure)
 * and returns what the driver must carry out: step executions to start, retries, answers to
 * waits, events for the stream, the end of the run, and the changes observers follow. No timers,
 * no promises, no step calls: a transition is synchronous and depends only on its arguments.
 */
import { eventTypeName, HumanResponseEvent, InputRequiredEvent, isEvent, StopEvent } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import { NonErrorThrownError, UnhandledEventError, WorkflowCancelledByUser, WorkflowRuntimeError } from "./errors.ts";
import { StepFailedEvent } from "./step-failed.ts";
import { retryDelay } from "./step.ts";
import type { StepDefinition } from "./step.ts";
import { describeKind, describeValue } from "./user-text.ts";
import { ended, executionIdFor, finishExecution, idle, newExecution, slotOf, startExecution } from "./run-state.ts";
import { handOn, handOnQueued, sendOn } from "./run-hand-on.ts";
import { StepQueue } from "./step-queue.ts";
import type { RunState, StepExecution, StepSlot } from "./run-state.ts";
import type { Command, Commands, RunChange, RunCommand, RunInput, RunOutcome } from "./run-io.ts";
import { loadRestored } from "./run-save.ts";
import { deliverToWaiter, dropPendingWaits, giveBackAnswers, retryWhenFree, takeWorker, wait, wake } from "./run-waits.ts";
import { runTimedOut } from "./run-timeout.ts";

const NONE: readonly Command[] = Object.freeze([]);

/** `commands` as a list. @example for (const command of commandList(transitions.apply(input))) carryOut(command); */
export function commandList(commands: Commands): readonly Command[] {
  return commands === undefined ? NONE : Array.isArray(commands) ? commands : [commands as Command];
}

// The abort reason of runs that finished while steps were still executing: one shared error,
// because capturing a stack trace per run was the largest cost of a short run.
export const RUN_FINISHED = new WorkflowRuntimeError("The run has finished.");

/**
 * Applies `input` to `state` (in place) and returns the commands it leads to, in order.
 * `observed`: whether anyone follows the run's changes (they are not made otherwise).
 * @example
 * const commands = transition(state, { kind: "send", event: new QueryEvent({ q }), target: undefined }, false);
 */
export function transition(state: RunState, input: RunInput, observed = false): readonly RunCommand[] {
  return commandList(new Transitions(state, observed).apply(input)).map((command) =>
    command.kind === "execute" ? { kind: "execute", execution: command } : command,
  );
}

/**
 * The transitions of one run's state: one object per run, so that a transition allocates
 * nothing but its commands (the hot path makes one transition per step execution).
 * @example
 * const transitions = new Transitions(state, false);
 * for (const command of commandList(transitions.apply({ kind: "start" }))) carryOut(command);
 */
export class Transitions {
  /** The first command of the transition under way; the ones after it go to `#more`. */
  #one: Command | undefined;
  #more: Command[] | undefined;

  constructor(
    readonly state: RunState,
    /** Whether anyone follows the run's changes: they are not made otherwise. */
    public observed: boolean,
  ) {}

  /** Applies `input` to the state (in place) and returns the commands it leads to, in order. */
  apply(input: RunInput): Commands {
    const one = this.#one;
    const more = this.#more;
    this.#one = this.#more = undefined;
    try {
      applyInput(this, input);
      return this.#more ?? this.#one;
    } finally {
      // A transition inside another (a retry policy that sends an event) keeps each one's commands apart.
      this.#one = one;
      this.#more = more;
    }
  }

  /**
   * `apply({ kind: "send", event, target })` without the input object: the hot path makes
   * one per event sent.
   */
  applySend(event: Event, target: StepDefinition | undefined, sender: StepExecution | undefined): Commands {
    if (target === undefined && sender !== undefined) {
      const started = sendOn(this.state, this.observed, event, sender);
      if (started !== false) return started;
    }
    const one = this.#one;
    const more = this.#more;
    this.#one = this.#more = undefined;
    try {
      if (!sender) this.received(event);
      this.send(event, target, sender);
      return this.#more ?? this.#one;
    } finally {
      this.#one = one;
      this.#more = more;
    }
  }

  /** `apply({ kind: "stepReturned", execution, output, attempt })` without the input object: one per step execution. */
  applyReturned(execution: StepExecution, output: unknown, attempt: number): Commands {
    const next = handOn(this.state, this.observed, execution, output);
    if (next !== undefined) return next;
    const started = handOnQueued(this.state, this.observed, execution, output);
    if (started !== false) return started;
    const one = this.#one;
    const more = this.#more;
    this.#one = this.#more = undefined;
    try {
      this.returned(execution, output, attempt);
      return this.#more ?? this.#one;
    } finally {
      this.#one = one;
      this.#more = more;
    }
  }

  emit(command: Command): void {
    // The first command alone: no array of one per step execution (V8's sampling heap profiler:
    // ping-pong 704 → 649 bytes allocated per event, the counted fan-out 1,970 → 1,868).
    if (this.#one === undefined) this.#one = command;
    else if (this.#more === undefined) this.#more = [this.#one, command];
    else this.#more.push(command);
  }

  note(change: RunChange): void {
    this.emit({ kind: "observe", change });
  }

  /**
   * After a step gave its worker back (or the run started): a run left with nothing to do but
   * wait for events from outside has become idle, which its observers learn once the driver's
   * deferred check confirms it. Never checked for runs nobody observes.
   */
  quiet(): void {
    if (this.observed && idle(this.state)) this.emit({ kind: "checkIdle", period: ++this.state.idlePeriod });
  }

  /** An event sent in from outside the run: noted (before what it leads to) when the run takes it, that is while it goes on. */
  received(event: Event): void {
    if (this.observed && !ended(this.state)) this.note({ kind: "eventReceived", event });
  }

  /** `sender`: the step execution that sent it with `ctx.sendEvent`, if one did. */
  send(event: Event, target: StepDefinition | undefined, sender?: StepExecution): void {
    if (!this.route(event, target, sender, true)) this.state.unclaimed.push(event);
  }

  /** Delivers an event: to the first matching waiter, which consumes it; else to `target` only, or to every step accepting its exact class. False when nothing took it. */
  route(event: Event, target: StepDefinition | undefined, from: StepExecution | undefined, sent = false): boolean {
    const state = this.state;
    if (ended(state)) return true;
    if (event instanceof StopEvent) {
      this.emit({ kind: "stream", event });
      this.end({ ok: true, stop: event }, RUN_FINISHED);
      return true;
    }
    // As in Python, the answer to a waitForEvent is the waiter's: it does not also start steps.
    if (state.waiters.length > 0 && deliverToWaiter(this, event)) return true;
    if (target) {
      this.enqueue(slotOf(state, target.name) as StepSlot, event, from, sent);
      return true;
    }
    const to = state.steps.routes.get(event.constructor as EventClass);
    if (!to) return false;
    for (let i = 0; i < to.length; i++) this.enqueue(state.slots[to[i] as number] as StepSlot, event, from, sent);
    return true;
  }

  enqueue(slot: StepSlot, event: Event, from: StepExecution | undefined, sent = false): void {
    const state = this.state;
    const id = executionIdFor(state, slot, from, sent);
    if (state.phase === "running" && slot.busy < slot.step.numWorkers) this.execute(slot, newExecution(slot, event, id, undefined));
    else (slot.queue ??= new StepQueue(slot)).push(event, id); // a numbered one's execution is made when it starts
  }

  execute(slot: StepSlot, execution: StepExecution): void {
    startExecution(slot, execution);
    this.emit(execution);
  }

  /** Gives free workers to waiting executions whose answer came, then to queued events. */
  pump(slot: StepSlot): void {
    while (!ended(this.state) && slot.busy < slot.step.numWorkers) {
      const resume = slot.resumes?.shift();
      if (resume) {
        slot.busy++;
        this.emit(resume.start ? { kind: "startRetry", start: resume.start } : { kind: "answer", waiter: resume.waiter, answer: resume.answer });
        continue;
      }
      const next = slot.queue?.shift();
      if (next === undefined) return;
      this.execute(slot, next);
    }
  }

  /** An attempt returned `output`: the execution ends, and its event (if any) goes on. */
  returned(execution: StepExecution, output: unknown, attempt: number): void {
    const slot = execution.slot;
    finishExecution(execution);
    if (ended(this.state)) return;
    if (this.observed) this.note({ kind: "stepFinished", execution, attempt, output: isEvent(output) ? output : undefined });
    if (output !== undefined && !isEvent(output)) {
      return this.fail(
        new WorkflowRuntimeError(
          `Step "${slot.step.name}" returned ${describeKind(output)}, not an event. Return an Event instance, or nothing to send nothing.`,
        ),
        undefined,
      );
    }
    if (output !== undefined) {
      // A returned InputRequiredEvent is for the app, as in Python's workflows: it goes to the stream.
      // A step may also accept it (or a subclass of it).
      if (output instanceof InputRequiredEvent) {
        this.emit({ kind: "stream", event: output });
        if (this.state.graph.routes.has(output.constructor as EventClass)) this.send(output, undefined);
      } else if (!this.route(output, undefined, execution)) {
        // A HumanResponseEvent may answer a waitForEvent not asked yet; anything else would wait for the timeout.
        if (!(output instanceof HumanResponseEvent)) return this.fail(unhandled(slot.step.name, output), undefined);
        this.state.unclaimed.push(output);
      }
    }
    if (slot.queue?.size || slot.resumes?.size) this.pump(slot);
    if (this.observed && execution.waits === 0) this.quiet();
  }

  /** An attempt threw: retry it (now or after a delay), hand it to a recovery step, or fail the run. */
  threw(execution: StepExecution, error: unknown, attempt: number, elapsed: number): void {
    if (ended(this.state)) return;
    const step = execution.slot.step;
    let delay: number | null;
    try {
      delay = retryDelay(step, attempt, error, elapsed);
    } catch (policyError) {
      finishExecution(execution);
      return this.fail(policyError, undefined); // a retry function that throws or returns nonsense
    }
    if (this.observed) this.note({ kind: "stepFailed", execution, attempt, error, retryIn: delay });
    if (delay !== null) {
      const retry = { kind: "retry", execution, attempt: attempt + 1, delay } as const;
      // It holds a worker again until its retry, as an attempt that fails without waiting does, once one is free.
      return this.emit(dropPendingWaits(this, execution, error) && !takeWorker(execution.slot) ? { ...retry, needsWorker: true } : retry);
    }
    if (this.recover(execution, attempt, error)) return;
    finishExecution(execution);
    this.fail(
      error instanceof Error
        ? error
        : new NonErrorThrownError(
            `Step "${step.name}" threw ${describeValue(error)}, not an Error. Throw an Error (throw new Error("what went wrong")) so the failure says what happened; the thrown value is this error's cause.`,
            step.name,
            error,
          ),
      undefined,
    );
  }

  /**
   * Hands a step that failed for good to a recovery step, if one covers it and has recoveries
   * left: the failed execution ends as if it had returned nothing. False when none takes it.
   */
  recover(execution: StepExecution, attempt: number, error: unknown): boolean {
    const { slot, event } = execution;
    const step = slot.step;
    const recoverer = this.state.graph.recoverers.find((r) => r !== step && (r.catchErrors?.forSteps ?? [step.name]).includes(step.name));
    if (!recoverer) return false;
    const recoveries = (this.state.recoveries ??= new Map());
    const used = recoveries.get(recoverer.name) ?? 0;
    if (used >= (recoverer.catchErrors?.maxRecoveries ?? 1)) return false;
    recoveries.set(recoverer.name, used + 1);
    // Counted as holding the worker that finishing gives back, which it gave back to wait.
    if (dropPendingWaits(this, execution, error)) slot.busy++;
    finishExecution(execution);
    if (this.observed) this.note({ kind: "stepRecovering", execution, recoverer: recoverer.name });
    const failure = error instanceof Error ? { name: error.name, message: error.message } : { name: typeof error, message: describeValue(error) };
    this.send(
      new StepFailedEvent({
        step: step.name,
        attempts: attempt,
        error: failure,
        inputEvent: eventTypeName(event.constructor as EventClass),
        input: { ...event },
      }),
      recoverer,
    );
    this.pump(slot);
    return true;
  }

  /** Ends the run with `error`; `reason` (default: the error) is what the run's signal is aborted with. */
  fail(error: unknown, reason: unknown): void {
    if (ended(this.state)) return;
    this.end({ ok: false, error }, reason === undefined ? error : reason);
  }

  end(outcome: RunOutcome, reason: unknown): void {
    const state = this.state;
    state.phase = outcome.ok ? "succeeded" : "failed";
    const waiters = state.waiters;
    state.waiters = [];
    if (this.observed && !outcome.ok && !(outcome.error instanceof WorkflowCancelledByUser)) {
      // Steps still executing when the run fails are abandoned: their state ends here, not
      // "running" forever. (A cancel by the user says so itself, in the run's end.)
      for (const slot of state.slots)
        for (let execution = slot.inFlight.first; execution; execution = execution.next) this.note({ kind: "stepCancelled", execution });
    }
    this.emit({ kind: "end", outcome, reason, waiters });
  }
}

/** One input, applied by `t`. */
function applyInput(t: Transitions, input: RunInput): void {
  switch (input.kind) {
    case "schedule":
      if (ended(t.state)) return; // cancelled before it was scheduled
      t.state.phase = "scheduled";
      return t.send(input.event, undefined);
    case "restore": {
      if (ended(t.state)) return;
      t.state.phase = "scheduled";
      const error = loadRestored(t.state, input.restored);
      return error === undefined ? undefined : t.fail(error, error);
    }
    case "start":
      if (ended(t.state)) return;
      t.state.phase = "running";
      for (const slot of t.state.slots) t.pump(slot);
      return t.quiet(); // a restored run may start with nothing to execute, only questions asked
    case "send":
      if (input.fromOutside) t.received(input.event);
      return t.send(input.event, input.target);
    case "stepReturned": {
      // As `applyReturned`: its common cases first.
      const next = handOn(t.state, t.observed, input.execution, input.output) ?? handOnQueued(t.state, t.observed, input.execution, input.output);
      if (next === false) return t.returned(input.execution, input.output, input.attempt);
      for (const command of commandList(next)) t.emit(command);
      return;
    }
    case "stepThrew":
      return t.threw(input.execution, input.error, input.attempt, input.elapsed);
    case "retrying":
      input.execution.attempt = input.attempt;
      input.execution.retried = true;
      input.execution.sends = undefined; // the retry's events are its own: counted afresh
      return giveBackAnswers(t.state, input.execution);
    case "retryWhenFree":
      return retryWhenFree(t, input.execution, input.start);
    case "wait":
      return wait(t, input.waiter, input.waiterEvent);
    case "waitTimedOut": {
      const waiters = t.state.waiters;
      const at = waiters.indexOf(input.waiter);
      if (at < 0) return; // answered meanwhile
      waiters.splice(at, 1);
      return wake(t, input.waiter, { ok: false, error: input.error });
    }
    case "timedOut":
      return t.fail(runTimedOut(t.state, input.workflow, input.seconds), undefined);
    case "fail":
      return t.fail(input.error, input.error);
    case "idleCheck":
      // No step has run since (a later idle period would have a later number), and none runs now.
      if (input.period === t.state.idlePeriod && idle(t.state)) t.note({ kind: "runIdle" });
      return;
    default:
      return assertNever(input);
  }
}

function unhandled(stepName: string, event: Event): UnhandledEventError {
  const type = eventTypeName(event.constructor as EventClass);
  return new UnhandledEventError(
    `Step "${stepName}" returned ${type}, but no step accepts ${type} and no waitForEvent is waiting for it, so the run could not go on. Add ${type} to the accepts of the step that should handle it (or send it with ctx.sendEvent, which keeps it for a later waitForEvent).`,
    stepName,
    type,
  );
}

function assertNever(value: never): never {
  throw new WorkflowRuntimeError(`Unknown run input ${JSON.stringify(value)}.`);
}
