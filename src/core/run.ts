/**
 * The driver of one run: it applies what happens (events sent, steps returning or throwing,
 * waits, timeouts) to the run's {@link RunState} through its transitions (run-transitions.ts)
 * and carries out the commands they return: calling steps, retry delays and timeouts, answering
 * waits, writing to the stream, ending the run.
 *
 * Each step execution resolves in its own microtask, so the stack never grows with the chain
 * length; and step executions start within the time slices of the workflow's scheduler
 * (time-slices.ts; by default one shared by all runs), so timers (the run's timeout among them)
 * fire even when every step resolves at once, or a thousand runs wake at once.
 */
import { eventTypeName } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import { WorkflowCancelledByUser, WorkflowTimeoutError } from "./errors.ts";
import { EventStream } from "./event-stream.ts";
import type { Resource } from "./resource.ts";
import { callStep, NO_RESOURCES } from "./step-call.ts";
import type { StepCallScope } from "./step-call.ts";
import type { WorkflowGraph } from "./graph.ts";
import type { StepDefinition } from "./step.ts";
import type { Context } from "./context.ts";
import { attachRun, contextRoot, executionView, retireView } from "./context-engine.ts";
import { sleep, startTimer } from "./timers.ts";
import { runOnce } from "./step-once.ts";
import type { OnceOptions, OnceResult } from "./step-once.ts";
import { ExecutionOnceScope } from "./execution-once.ts";
import { encodeRun } from "./saved-run.ts";
import type { RestoredRun } from "./saved-run.ts";
import type { Journal } from "./journal/types.ts";
import type { SavedRun } from "./context-format.ts";
import { anyStepExecuting, ended, newRunState } from "./run-state.ts";
import type { RunState, StepExecution, WaitAnswer, Waiter } from "./run-state.ts";
import { commandList, RUN_FINISHED, Transitions } from "./run-transitions.ts";
import type { Command, Commands, RunChange, RunInput, RunListener, RunOutcome, RunSettings } from "./run-io.ts";
import { pendingRun } from "./run-save.ts";
import { followersOf } from "./run-observers.ts";
import type { ObservationBridge } from "./run-observers.ts";
import { newRunId } from "./run-id.ts";
import { RunAbort } from "./run-abort.ts";

export type { RunOutcome, RunSettings } from "./run-io.ts";
export type { StepExecution } from "./run-state.ts";

/** The engine of one run. Created by `workflow.run()`; users meet it through the handler and the context. */
export class Run {
  readonly stream = new EventStream();
  readonly result: Promise<RunOutcome>;
  /** The context's view for this run: what its steps and its handler get. */
  readonly ctx: Context;
  /** Everything the run is: what a save encodes. */
  readonly state: RunState;
  readonly #transitions: Transitions;
  /** Who follows the run's changes (made when the run starts, from its settings and the run observers). */
  #listeners: RunListener[] | undefined;
  /** The run observer's bridge, which also runs each step attempt in the observer's context. */
  #bridge: ObservationBridge | undefined;
  #settle!: (outcome: RunOutcome) => void;
  #cancelTimeout: (() => void) | undefined;
  /** Step timeouts and retry delays under way: cleared when the run ends, so they do not keep the process alive. Made on first use. */
  #timers: Set<() => void> | undefined;
  /** The run's signal and the timed attempts' that follow it (each made on first read). */
  readonly aborts = new RunAbort();
  /** Values of resources cached for this run. */
  #resources: Map<Resource<unknown>, Promise<unknown>> | undefined;
  /** Made on first use (most runs never ask), or the id of the saved run this one continues. */
  #id: string | undefined;
  /**
   * Prefixes this attempt's execution numbers in their ids, made when first needed: two
   * processes resuming one saved run share the saved executions' ids, never their new ones.
   */
  #attempt: string | undefined;

  /** Makes this the run of `ctx` (which throws if the context is running another). */
  constructor(
    ctx: Context,
    readonly graph: WorkflowGraph,
    readonly settings: RunSettings,
  ) {
    this.ctx = ctx[attachRun](this);
    this.#id = ctx[contextRoot].savedRun?.runId;
    this.result = new Promise((resolve) => (this.#settle = resolve));
    this.state = newRunState(graph, ctx.workflow.codecs);
    this.#transitions = new Transitions(this.state, false);
  }

  /**
   * Aborted when the run times out, is cancelled or fails, and when it finishes while steps are
   * still executing (their work is no longer needed). A run that finishes with nothing executing
   * leaves it alone: LLM requests that listen to it (the OpenAI SDK never removes its listener)
   * are finished, and aborting each of them again costs a DOMException apiece.
   */
  get signal(): AbortSignal {
    return this.aborts.signal;
  }

  /** The run's id: stable for the run, kept when a saved run is resumed. */
  get id(): string {
    return (this.#id ??= newRunId());
  }

  get done(): boolean {
    return ended(this.state);
  }

  /** Subscribes `listener` to this run's changes from now on (before the run starts, to see them all); returns its unsubscribe. */
  subscribe(listener: RunListener): () => void {
    (this.#listeners ??= []).push(listener);
    this.#transitions.observed = true;
    return () => {
      const at = this.#listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.#listeners?.splice(at, 1);
    };
  }

  /**
   * Loads the run's first events now and starts executing them in a microtask, as Python's
   * `run()` schedules its task: a run cancelled right away runs no step, and a context saved
   * before then holds everything, events sent meanwhile included. `first`: the StartEvent, or
   * the run saved in the context, which the context keeps until the run starts (a run
   * cancelled before leaves it saved).
   */
  schedule(first: { readonly event: Event } | { readonly restored: RestoredRun }): void {
    const restored = "restored" in first;
    this.#do("event" in first ? { kind: "schedule", event: first.event } : { kind: "restore", restored: first.restored });
    queueMicrotask(() => {
      // Started, or finished by a StopEvent sent from outside: the saved run is done with.
      if (restored && (!this.done || this.state.phase === "succeeded")) this.ctx[contextRoot].settleSavedRun(this);
      if (!this.done) this.#start(restored);
    });
  }

  #start(resumed: boolean): void {
    const settings = this.settings;
    const followers = followersOf(settings, resumed, this);
    for (const listener of followers.listeners) this.subscribe(listener);
    this.#bridge = followers.bridge;
    this.#observe({ kind: "runStarted", resumed });
    const timeout = settings.timeout;
    if (timeout !== null) {
      this.#cancelTimeout = startTimer(timeout, () => this.#do({ kind: "timedOut", workflow: settings.workflowName, seconds: timeout }));
    }
    this.#do({ kind: "start" });
  }

  /** Applies `input` and carries out what it leads to. */
  #do(input: RunInput): void {
    this.#carryOutAll(this.#transitions.apply(input));
  }

  #carryOutAll(commands: Commands): void {
    if (commands === undefined) return;
    if (!Array.isArray(commands)) return this.#carryOut(commands as Command);
    for (let i = 0; i < commands.length; i++) this.#carryOut(commands[i] as Command);
  }

  #carryOut(command: Command): void {
    switch (command.kind) {
      case "execute":
        return this.#execute(command);
      case "retry":
        return; // only a failed attempt leads to one, and `#failed` carries it out with the attempt's context
      case "answer":
        command.waiter.cancelTimer?.();
        return command.waiter.answer(command.answer);
      case "startRetry":
        return command.start();
      case "stream":
        return this.stream.push(command.event);
      case "observe":
        return this.#observe(command.change);
      case "checkIdle":
        return this.#checkIdleLater(command.period);
      case "end":
        return this.#end(command.outcome, command.reason, command.waiters);
      default:
        throw new Error(`Unknown run command ${JSON.stringify(command satisfies never)}`);
    }
  }

  /** A method of its own: a closure in `#carryOut` would cost every command its variables' context (48 B per step execution). */
  #checkIdleLater(period: number): void {
    setImmediate(() => this.#do({ kind: "idleCheck", period }));
  }

  #observe(change: RunChange): void {
    const listeners = this.#listeners;
    if (listeners) for (let i = 0; i < listeners.length; i++) (listeners[i] as RunListener)(change);
  }

  /** Routes an event: to the first matching waiter, else to `target` only, or to every step accepting its class; `sender`: the step execution that sent it (none: from outside, through the handler's context). */
  send(event: Event, target: StepDefinition | undefined, sender: StepExecution | undefined): void {
    this.#carryOutAll(this.#transitions.applySend(event, target, sender));
  }

  writeToStream(event: Event): void {
    if (!this.done) this.stream.push(event);
  }

  /** The first unclaimed event that matches, else a wait for one; `waiterEvent` goes to the stream only when the run must wait. */
  waitFor(
    type: EventClass,
    requirements: Readonly<Record<string, unknown>> | undefined,
    timeout: number | undefined,
    waiterEvent: Event | undefined,
    execution?: StepExecution,
  ): Promise<Event> {
    return new Promise<Event>((resolve, reject) => {
      const answer = (answered: WaitAnswer) => (answered.ok ? resolve(answered.event) : reject(answered.error));
      const waiter: Waiter = { type, requirements, execution, question: waiterEvent, answer };
      this.#do({ kind: "wait", waiter, waiterEvent });
      if (timeout !== undefined && this.state.waiters.includes(waiter)) {
        waiter.cancelTimer = startTimer(timeout, () => {
          const error = new WorkflowTimeoutError(`waitForEvent(${eventTypeName(type)}) timed out after ${timeout} seconds.`);
          this.#do({ kind: "waitTimedOut", waiter, error });
        });
      }
    });
  }

  /** Ends the run; what it had pending stays in the context, for `toJSON()` and for a later run to continue. */
  cancel(): void {
    if (this.done) return;
    const pending = this.state.phase === "created" ? undefined : this.#pending();
    this.fail(new WorkflowCancelledByUser("The run was cancelled."));
    if (pending) this.ctx[contextRoot].keepCancelledRun(this, pending);
  }

  fail(error: unknown): void {
    this.#do({ kind: "fail", error });
  }

  /** What is pending, as plain JSON, for `ctx.toJSON()`. */
  save(): SavedRun {
    return encodeRun(this.#pending(), this.state.codecs);
  }

  #pending(): RestoredRun {
    return pendingRun(this.state, this.id, (execution) => this.executionIdOf(execution));
  }

  /**
   * `execution`'s id, as saved and as `ctx.stepExecution` tells a step: scoped to the run by the
   * journal key, not by itself. @example `run.executionIdOf(execution); // "1f0c2a9b.3"`
   */
  executionIdOf(execution: StepExecution): string {
    return typeof execution.id === "string" ? execution.id : `${(this.#attempt ??= globalThis.crypto.randomUUID().slice(0, 8))}.${execution.id}`;
  }

  /**
   * `ctx.once` in `execution`: its records, then `journal`, under a key scoped to this run and
   * execution. The journal is asked only when another attempt at the run could know that key:
   * the execution has a string id (restored from a save, or made from the id of a restored
   * execution or of one a save included, which every attempt makes alike) or a save included it. A numbered
   * execution's id is this attempt's own, so no one else can claim its work.
   */
  once<T>(execution: StepExecution, name: string, work: () => T | Promise<T>, options: OnceOptions | undefined, journal: Journal): Promise<OnceResult<T>> {
    return runOnce(new ExecutionOnceScope(this, execution, journal), name, work, options);
  }

  /** For {@link ExecutionOnceScope}: the journal key of `ctx.once(name)` in `execution`. */
  onceKey(execution: StepExecution, name: string): string {
    return `once:${this.id}:${this.executionIdOf(execution)}:${name}`;
  }

  /** For {@link ExecutionOnceScope}: why the run ended, or `undefined` while it goes on. */
  endedBecause(): { readonly reason: unknown } | undefined {
    return this.done ? { reason: this.aborts.abortedBecause?.reason ?? RUN_FINISHED } : undefined;
  }

  /**
   * Starts `execution`'s first attempt (its worker counted by the transition), in this time
   * slice or a later one. Not `async`, nor are the attempts: an async method's suspended frame
   * (its promise, its registers) cost as much as the rest of an execution's bookkeeping, and
   * stays alive across the whole step; a `then` on the step's promise costs a fraction of it.
   */
  #execute(execution: StepExecution): void {
    if (this.done) return;
    const ctx = this.ctx[executionView](execution);
    if (this.settings.timeSlices.sliceSpent()) this.#inNextSlice(execution, ctx);
    else this.#firstAttempt(execution, ctx);
  }

  /** A method of its own: a closure in `#execute` would cost every execution its variables' context. */
  #inNextSlice(execution: StepExecution, ctx: Context): void {
    this.settings.timeSlices.inNextSlice(() => {
      if (!this.done) this.#firstAttempt(execution, ctx);
    });
  }

  #firstAttempt(execution: StepExecution, ctx: Context): void {
    // Read only for steps that retry: a clock read per execution would cost the hot path.
    const startedAt = execution.slot.step.retry ? performance.now() : 0;
    this.#runAttempt(execution, ctx, 1, startedAt, this.settings.timeSlices.currentSlice());
  }

  /**
   * Calls the step; its result (or failure) is handled in a later microtask, even when it
   * returns at once, so the stack never grows with the chain of steps. `startedAt`: when the
   * first attempt began, for retry policies; `slice`: the time slice it was counted in.
   */
  #runAttempt(execution: StepExecution, ctx: Context, attempt: number, startedAt: number, slice: number): void {
    const { slot, event } = execution;
    const { step } = slot;
    if (attempt > 1) this.#do({ kind: "retrying", execution, attempt });
    if (this.#listeners) this.#observe({ kind: "stepStarted", execution, attempt });
    let output: unknown;
    try {
      if (this.#bridge) output = this.#invokeObserved(this.#bridge, execution, ctx);
      else if (step.resources === undefined && step.timeout === null) output = step.handler(ctx, event, NO_RESOURCES);
      else output = callStep(step, ctx, event, this.#stepCall());
    } catch (error) {
      return this.#failed(execution, ctx, error, attempt, startedAt, slice);
    }
    if (step.retry) this.#settleAttempt(output, execution, ctx, attempt, startedAt, slice);
    else this.#settleOnlyAttempt(output, execution, slice);
  }

  /**
   * `output` handled in a later microtask: not closures in `#runAttempt`, as a `then`'s closures
   * share a context of every variable they use (8 bytes each, per step execution), and the only
   * attempt of a step without a retry policy (most) needs 3 of 6: no view, no start time.
   */
  #settleAttempt(output: unknown, execution: StepExecution, ctx: Context, attempt: number, startedAt: number, slice: number): void {
    void Promise.resolve(output).then(
      (value) => this.#returned(execution, value, attempt, slice),
      (error: unknown) => this.#failed(execution, ctx, error, attempt, startedAt, slice),
    );
  }
  #settleOnlyAttempt(output: unknown, execution: StepExecution, slice: number): void {
    void Promise.resolve(output).then(
      (value) => this.#returned(execution, value, 1, slice),
      (error: unknown) => this.#failed(execution, undefined, error, 1, 0, slice),
    );
  }
  #returned(execution: StepExecution, value: unknown, attempt: number, slice: number): void {
    this.settings.timeSlices.workDone(slice);
    this.#carryOutAll(this.#transitions.applyReturned(execution, value, attempt));
  }

  /** An attempt threw: the transition says whether it is retried (carried out here, with the attempt's context), recovered, or fails the run. */
  #failed(execution: StepExecution, ctx: Context | undefined, error: unknown, attempt: number, startedAt: number, slice: number): void {
    execution.lastError = error;
    const commands = commandList(this.#transitions.apply({ kind: "stepThrew", execution, error, attempt, elapsed: (performance.now() - startedAt) / 1000 }));
    for (let i = 0; i < commands.length; i++) {
      const command = commands[i] as Command;
      if (command.kind !== "retry") this.#carryOut(command);
      else {
        // A step that retries has its attempts' view already, unless the attempt timed out and keeps it.
        const view = (ctx = ctx === undefined || ctx[retireView]() ? this.ctx[executionView](execution) : ctx);
        const start = () =>
          command.delay === 0
            ? this.#runAttempt(execution, view, command.attempt, startedAt, slice)
            : void sleep(command.delay, (this.#timers ??= new Set())).then(
                () => !this.done && this.#runAttempt(execution, view, command.attempt, startedAt, slice),
              );
        if (command.needsWorker) this.#do({ kind: "retryWhenFree", execution, start });
        else start();
      }
    }
  }

  /** `#invoke` within the observer's context; a method of its own, so that its closure costs only observed runs. */
  #invokeObserved(bridge: ObservationBridge, execution: StepExecution, ctx: Context): unknown {
    return bridge.run(execution, () => callStep(execution.slot.step, ctx, execution.event, this.#stepCall()));
  }

  /** What a step call needs of the run: its resources' values and its timers. */
  #stepCall(): StepCallScope {
    return { resources: (this.#resources ??= new Map()), resourceCache: this.graph.resourceCache, timers: (this.#timers ??= new Set()) };
  }

  #end(outcome: RunOutcome, reason: unknown, waiters: readonly Waiter[]): void {
    this.#cancelTimeout?.();
    if (this.#timers) for (const cancel of this.#timers) cancel();
    this.#timers = undefined;
    if (!outcome.ok || anyStepExecuting(this.state)) this.aborts.abort(reason);
    for (const waiter of waiters) {
      waiter.cancelTimer?.();
      waiter.answer({ ok: false, error: reason });
    }
    this.#observe({ kind: "runEnded", outcome });
    this.stream.close();
    this.#settle(outcome);
  }
}
