/**
 * One run of a workflow: routes events to steps, caps each step's concurrent executions,
 * retries, enforces timeouts, and ends exactly once (result, error, timeout or cancel).
 *
 * All run state is plain data (queues of events, in-flight events, collect buffers,
 * waiters), so a context can be saved and restored. Each step execution resolves in its own
 * microtask, so the stack never grows with the chain length; and step executions start within
 * time slices shared by all runs (time-slices.ts), so timers (the run's timeout among them)
 * fire even when every step resolves at once, or a thousand runs wake at once.
 */
import { createHash, randomUUID } from "node:crypto";
import { eventTypeName, HumanResponseEvent, InputRequiredEvent, isEvent, StopEvent } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import { NonErrorThrownError, UnhandledEventError, WorkflowCancelledByUser, WorkflowRuntimeError, WorkflowTimeoutError } from "./errors.ts";
import { EventStream } from "./event-stream.ts";
import { StepFailedEvent } from "./step-failed.ts";
import { resolveResources } from "./resource.ts";
import type { Resource } from "./resource.ts";
import { RunEndedEvent, RunStartedEvent, StepStateChangedEvent } from "./lifecycle.ts";
import type { RunStatus, StepState } from "./lifecycle.ts";
import type { WorkflowGraph } from "./graph.ts";
import { retryDelay } from "./step.ts";
import type { StepDefinition } from "./step.ts";
import type { Context } from "./context.ts";
import { contextEngine } from "./context.ts";
import { decodeEvent, encodeValue } from "./serialize.ts";
import type { Codecs, SavedEvent } from "./serialize.ts";
import { startTimer } from "./timers.ts";
import { currentSlice, inNextSlice, sliceSpent, workDone } from "./time-slices.ts";
import { restoreOnceRecords, runOnce } from "./step-once.ts";
import type { OnceOptions, OnceRecord, OnceResult, OnceScope } from "./step-once.ts";
import { encodeRun } from "./saved-run.ts";
import type { Delivery, RestoredRun } from "./saved-run.ts";
import type { Journal } from "./journal/types.ts";
import type { SavedRun } from "./context-format.ts";
import { describeValue } from "./user-text.ts";
import { observeRun, observing } from "./observer.ts";
import type { RunObservation, StepObservation } from "./observer.ts";

/** How a run ended. */
export type RunOutcome = { readonly ok: true; readonly stop: StopEvent } | { readonly ok: false; readonly error: unknown };

interface Waiter {
  readonly type: EventClass;
  readonly requirements: Readonly<Record<string, unknown>> | undefined;
  readonly resolve: (event: Event) => void;
  readonly reject: (error: unknown) => void;
  /** The step execution waiting, when a step called it: it gets its worker back before it continues. */
  readonly execution: StepExecution | undefined;
  cancelTimer?: () => void;
}

/** One execution of a step, as its context view knows it; made when its event is queued for the step. */
export interface StepExecution {
  readonly slot: StepSlot;
  readonly event: Event;
  /** Its id: a number for this attempt's executions (see `Run.#executionId`), the saved id for restored ones. */
  readonly id: number | string;
  /** `ctx.once` records, made at the first call (most executions make none). */
  once: Map<string, OnceRecord> | undefined;
  /**
   * Set when a save of the run includes it: its id has left this process, so its `ctx.once`
   * work is claimed in the journal from then on (see `Run.once`).
   */
  shared?: true;
  /** `waitForEvent` calls of this execution still pending; while any is, it holds no worker. */
  waits: number;
  /** Finished (a wait it left pending, say by throwing, answers nothing then). */
  ended: boolean;
  /** An attempt after the first is running: its `collectEvents` calls must not collect its event twice. */
  retried: boolean;
  /** The sets its `collectEvents` calls completed: a save gives them back, since a restored run executes it again. */
  taken: CollectTaken[] | undefined;
  /** Its neighbours in its step's {@link InFlight} list while it executes. */
  previous: StepExecution | undefined;
  next: StepExecution | undefined;
  /**
   * The events its `waitForEvent` calls took (this attempt's), numbered in the run's order, with
   * the `ctx.once` names whose work was running then: a save gives them back too, unless such a
   * work's result is recorded (the step, run again, gets that result and does not wait again).
   */
  waited?: { readonly order: number; readonly event: Event; readonly during: readonly string[] | undefined }[];
}

/** A set of events an execution's `collectEvents` took out of `buffer`. */
interface CollectTaken {
  readonly buffer: CollectBuffer;
  readonly events: Event[];
}

/** A `collectEvents` buffer: events by exact class, each list in arrival order. */
interface CollectBuffer {
  readonly byType: Map<EventClass, Event[]>;
  size: number;
}

/** What a list of types given to `collectEvents` asks for; worked out once per array. */
interface CollectPlan {
  readonly key: string;
  readonly members: ReadonlySet<EventClass>;
  readonly counts: ReadonlyMap<EventClass, number>;
}
const collectPlans = new WeakMap<readonly EventClass[], CollectPlan>();
function collectPlan(types: readonly EventClass[]): CollectPlan {
  let plan = collectPlans.get(types);
  if (!plan) {
    const counts = new Map<EventClass, number>();
    for (const type of types) counts.set(type, (counts.get(type) ?? 0) + 1);
    plan = { key: types.map(eventTypeName).join("|"), members: new Set(types), counts };
    collectPlans.set(types, plan);
  }
  return plan;
}

/**
 * A FIFO with O(1) shift: an array and a head index, compacted when half is spent. A shifted
 * execution's place is cleared, so the queue does not keep it (its event, its records) alive
 * after it has finished.
 */
class ExecutionQueue {
  items: (StepExecution | undefined)[] = [];
  head = 0;
  get size(): number {
    return this.items.length - this.head;
  }
  push(execution: StepExecution): void {
    if (this.items.length === 0)
      this.items = [execution]; // most queues hold one at a time: no 17-slot first push
    else this.items.push(execution);
  }
  shift(): StepExecution | undefined {
    if (this.head === this.items.length) return undefined;
    const execution = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return execution;
  }
  toArray(): StepExecution[] {
    return this.items.slice(this.head) as StepExecution[];
  }
}

/**
 * A step's executions started and not finished, in the order they started: a list linked
 * through the executions themselves, because an array emptied and refilled at every execution
 * gets a new backing store each time (V8 frees the store of an emptied array), which cost more
 * than the rest of a short step execution's bookkeeping.
 */
class InFlight {
  first: StepExecution | undefined;
  last: StepExecution | undefined;
  size = 0;
  add(execution: StepExecution): void {
    execution.previous = this.last;
    execution.next = undefined;
    if (this.last) this.last.next = execution;
    else this.first = execution;
    this.last = execution;
    this.size++;
  }
  delete(execution: StepExecution): void {
    const { previous, next } = execution;
    if (previous) previous.next = next;
    else this.first = next;
    if (next) next.previous = previous;
    else this.last = previous;
    execution.previous = execution.next = undefined;
    this.size--;
  }
  toArray(): StepExecution[] {
    const executions: StepExecution[] = [];
    for (let execution = this.first; execution; execution = execution.next) executions.push(execution);
    return executions;
  }
}

interface StepSlot {
  readonly step: StepDefinition;
  /** Events waiting for a worker; made at the first (most steps never queue one, their worker being free). */
  queue: ExecutionQueue | undefined;
  /** Executions started and not finished. */
  readonly inFlight: InFlight;
  /** Executions holding a worker: started and not finished, less those waiting in `waitForEvent`. */
  busy: number;
  /** Waiting executions whose answer came while every worker was busy: they continue first when one frees. */
  resumes: (() => void)[] | undefined;
}

/** Options of one run. */
export interface RunSettings {
  readonly workflowName: string;
  /** Write RunStartedEvent, StepStateChangedEvent and RunEndedEvent to the stream. */
  readonly lifecycleEvents?: boolean;
  readonly timeout: number | null;
  readonly log: ((line: string) => void) | undefined;
}

const NO_RESOURCES: Record<string, unknown> = Object.freeze({});

/** A graph's steps as a list, and the index of each name in it: the order of a run's slots. */
interface StepList {
  readonly list: readonly StepDefinition[];
  readonly indexes: ReadonlyMap<string, number>;
}
const stepLists = new WeakMap<WorkflowGraph, StepList>();
function stepsOf(graph: WorkflowGraph): StepList {
  let steps = stepLists.get(graph);
  if (!steps) {
    const list = [...graph.steps.values()];
    steps = { list, indexes: new Map(list.map((step, i) => [step.name, i])) };
    stepLists.set(graph, steps);
  }
  return steps;
}

/** The engine of one run. Created by `workflow.run()`; users meet it through the handler and the context. */
export class Run {
  readonly stream = new EventStream();
  readonly result: Promise<RunOutcome>;
  /** The context's view for this run: what its steps and its handler get. */
  readonly ctx: Context;
  /** One per step, in the graph's order (see {@link stepsOf}): an array, cheaper to make per run than a Map. */
  readonly #slots: StepSlot[];
  /** `collectEvents` buffers: step name → buffer id → buffer. This and the two maps below are made on first use: most runs need none. */
  #collected: Map<string, Map<string, CollectBuffer>> | undefined;
  #waiters: Waiter[] = [];
  /** Events that reached no step and no waiter yet: a later `waitForEvent` may claim them. */
  readonly #unclaimed: (Event | SavedEvent)[] = [];
  /** How many events `waitForEvent` calls of step executions have taken: their order, for a save to give them back in. */
  #waitedCount = 0;
  #settle!: (outcome: RunOutcome) => void;
  #done = false;
  #succeeded = false;
  /** Whether the first events were loaded: a run cancelled before has nothing of its own to keep. */
  #scheduled = false;
  /** Until the microtask that starts the run, events wait in their steps' queues. */
  #started = false;
  #cancelTimeout: (() => void) | undefined;
  /** Step timeouts and retry delays under way: cleared when the run ends, so they do not keep the process alive. Made on first use. */
  #timers: Set<() => void> | undefined;
  // The AbortController (and its signal) is created on first use, as creating and aborting one
  // is not free: a run whose steps never read ctx.signal creates none. One first read after the
  // run was aborted comes already aborted, with the recorded reason.
  #controller: AbortController | undefined;
  #abortReason: { readonly reason: unknown } | undefined;
  /** What run observers (tracing) follow of this run; `undefined` when none does. */
  #observation: RunObservation | undefined;
  /** `settings.lifecycleEvents`, read once: it is checked at every step execution. */
  readonly #lifecycle: boolean;
  /** Values of resources cached for this run. */
  #resources: Map<Resource<unknown>, Promise<unknown>> | undefined;
  /** Recoveries made, per recovery step (counted per run: a resumed run starts again from 0). */
  #recoveries: Map<string, number> | undefined;
  /** Made on first use (most runs never ask), or the id of the saved run this one continues. */
  #id: string | undefined;
  /** Executions made by this attempt at the run, numbered from 1. */
  #executions = 0;
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
    this.ctx = contextEngine.attach(ctx, this);
    this.#id = contextEngine.savedRun(ctx)?.runId;
    this.#lifecycle = settings.lifecycleEvents === true;
    this.result = new Promise((resolve) => (this.#settle = resolve));
    this.#slots = stepsOf(graph).list.map((step) => ({ step, queue: undefined, inFlight: new InFlight(), busy: 0, resumes: undefined }));
  }

  /**
   * Aborted when the run times out, is cancelled or fails, and when it finishes while steps are
   * still executing (their work is no longer needed). A run that finishes with nothing executing
   * leaves it alone: LLM requests that listen to it (the OpenAI SDK never removes its listener)
   * are finished, and aborting each of them again costs a DOMException apiece.
   */
  get signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = (this.#controller = new AbortController());
    const signal = controller.signal;
    if (this.#abortReason) controller.abort(this.#abortReason.reason);
    return signal;
  }

  /** The run's id: stable for the run, kept when a saved run is resumed. */
  get id(): string {
    return (this.#id ??= randomUUID());
  }

  get done(): boolean {
    return this.#done;
  }

  /** Names of the steps executing right now. */
  activeSteps(): string[] {
    return this.#slots.filter((s) => s.inFlight.size > 0).map((s) => s.step.name);
  }

  /** The slot of the step named `name`, if the workflow has one. */
  #slot(name: string): StepSlot | undefined {
    const index = stepsOf(this.graph).indexes.get(name);
    return index === undefined ? undefined : this.#slots[index];
  }

  /**
   * Loads the run's first events now and starts executing them in a microtask, as Python's
   * `run()` schedules its task: a run cancelled right away runs no step, and a context saved
   * before then holds everything, events sent meanwhile included. `first`: the StartEvent, or
   * the run saved in the context, which the context keeps until the run starts (a run
   * cancelled before leaves it saved).
   */
  schedule(first: { readonly event: Event } | { readonly restored: RestoredRun }): void {
    this.#scheduled = true;
    if ("event" in first) this.send(first.event);
    else this.#load(first.restored);
    queueMicrotask(() => {
      // Started, or finished by a StopEvent sent from outside: the saved run is done with.
      if ("restored" in first && (!this.#done || this.#succeeded)) contextEngine.settleSavedRun(this.ctx, this);
      if (!this.#done) this.#start("restored" in first);
    });
  }

  #load(restored: RestoredRun): void {
    const once = restored.once ?? {};
    for (const [name, buffers] of Object.entries(restored.collected)) {
      for (const [id, events] of Object.entries(buffers)) {
        const buffer = this.#buffer(name, id);
        for (const event of events) this.#addToBuffer(buffer, event);
      }
    }
    this.#unclaimed.push(...restored.unclaimed);
    // In-flight events first: they were taken before the queued ones.
    for (const source of [restored.inFlight, restored.queued]) {
      for (const [name, events] of Object.entries(source)) {
        const slot = this.#slot(name);
        if (!slot) return this.fail(new WorkflowRuntimeError(`The saved run has events for a step "${name}" that this workflow does not have.`));
        for (const { event, execution } of events) {
          const id = execution ?? ++this.#executions;
          const records = execution === undefined ? undefined : once[execution];
          (slot.queue ??= new ExecutionQueue()).push(newExecution(slot, event, id, records ? restoreOnceRecords(records) : undefined));
        }
      }
    }
  }

  #start(restored: boolean): void {
    this.#started = true;
    if (this.settings.lifecycleEvents) this.stream.push(new RunStartedEvent({ runId: this.id, workflow: this.settings.workflowName, resumed: restored }));
    if (observing()) this.#observation = observeRun({ runId: this.id, workflow: this.settings.workflowName, resumed: restored });
    const timeout = this.settings.timeout;
    if (timeout !== null) {
      this.#cancelTimeout = startTimer(timeout, () => {
        const active = this.activeSteps();
        // A run that times out waiting for a human should say for what: the answer it never got.
        const waiting = this.#waiters.map((w) => `${eventTypeName(w.type)}${describeRequirements(w.requirements)}`);
        const waitingFor = waiting.length > 0 ? ` Waiting for: ${waiting.join(", ")} (send it with handler.ctx.sendEvent).` : "";
        this.fail(
          new WorkflowTimeoutError(
            `Workflow "${this.settings.workflowName}" timed out after ${timeout} seconds. Active steps: ${active.join(", ") || "none"}.${waitingFor}`,
            active,
          ),
        );
      });
    }
    for (const slot of this.#slots) {
      this.#pump(slot);
    }
  }

  /** Routes an event: to the first matching waiter, which consumes it; else to `target` only, or to every step accepting its exact class. */
  send(event: Event, target?: StepDefinition): void {
    if (!this.#route(event, target)) this.#unclaimed.push(event);
  }

  /** Delivers an event; false when nothing took it. */
  #route(event: Event, target?: StepDefinition, from?: StepExecution): boolean {
    if (this.#done) return true;
    if (event instanceof StopEvent) return (this.#finish(event), true);
    // As in Python, the answer to a waitForEvent is the waiter's: it does not also start steps.
    if (this.#waiters.length > 0 && this.#deliverToWaiter(event)) return true;
    const steps = target ? [target] : this.graph.routes.get(event.constructor as EventClass);
    if (!steps) return false;
    for (const step of steps) this.#enqueue(this.#slot(step.name) as StepSlot, event, from);
    return true;
  }

  writeToStream(event: Event): void {
    if (!this.#done) this.stream.push(event);
  }

  /** `collectEvents` for step `stepName`: O(1) per event until the last one, O(types) then. */
  collect(event: Event, types: readonly EventClass[], stepName: string, bufferId: string | undefined, execution: StepExecution): Event[] | null {
    if (types.length === 0) return [];
    const plan = collectPlan(types);
    const buffer = this.#buffer(stepName, bufferId ?? plan.key);
    if (plan.members.has(event.constructor as EventClass)) {
      // A retried attempt (or a second call) of the same execution: its event is in already.
      if (!execution.retried) this.#addToBuffer(buffer, event);
      else {
        // A retried attempt: the set its first attempt completed, or its event already in.
        const done = execution.taken?.find((set) => set.buffer === buffer && set.events.includes(event));
        if (done) return done.events;
        if (!buffer.byType.get(event.constructor as EventClass)?.includes(event)) this.#addToBuffer(buffer, event);
      }
    }
    if (buffer.size < types.length) return null;
    for (const [type, count] of plan.counts) if ((buffer.byType.get(type)?.length ?? 0) < count) return null;
    const taken = new Map<EventClass, number>();
    const events = types.map((type) => {
      const i = taken.get(type) ?? 0;
      taken.set(type, i + 1);
      return (buffer.byType.get(type) as Event[])[i] as Event;
    });
    for (const [type, count] of taken) (buffer.byType.get(type) as Event[]).splice(0, count);
    buffer.size -= types.length;
    (execution.taken ??= []).push({ buffer, events });
    return events;
  }

  #buffer(stepName: string, id: string): CollectBuffer {
    const collected = (this.#collected ??= new Map());
    let buffers = collected.get(stepName);
    if (!buffers) collected.set(stepName, (buffers = new Map()));
    let buffer = buffers.get(id);
    if (!buffer) buffers.set(id, (buffer = { byType: new Map(), size: 0 }));
    return buffer;
  }

  #addToBuffer(buffer: CollectBuffer, event: Event): void {
    const type = event.constructor as EventClass;
    const list = buffer.byType.get(type);
    if (list) list.push(event);
    else buffer.byType.set(type, [event]);
    buffer.size++;
  }

  /** The first unclaimed event that matches, else a wait for one; `waiterEvent` goes to the stream only when the run must wait. */
  waitFor(
    type: EventClass,
    requirements: Readonly<Record<string, unknown>> | undefined,
    timeout: number | undefined,
    waiterEvent: Event | undefined,
    execution?: StepExecution,
  ): Promise<Event> {
    const matches = (ev: Event) =>
      ev instanceof type && (!requirements || Object.entries(requirements).every(([k, v]) => (ev as Record<string, unknown>)[k] === v));
    for (let i = 0; i < this.#unclaimed.length; i++) {
      let event = this.#unclaimed[i] as Event | SavedEvent;
      if (!isEvent(event)) {
        // Restored before anything knew its class (only the waiting step names it): decoded now.
        const saved = event as unknown as SavedEvent;
        if (saved.type !== eventTypeName(type)) continue;
        try {
          event = this.#unclaimed[i] = decodeEvent(saved, new Map([[saved.type, type]]), `unclaimed event[${i}]`, this.ctx.workflow.codecs);
        } catch {
          continue; // saved in a shape the class no longer takes (an older version): it answers nothing, and the question is asked again
        }
      }
      if (matches(event as Event)) return Promise.resolve(this.#tookForWait(execution, this.#unclaimed.splice(i, 1)[0] as Event));
    }
    if (this.#done) return Promise.reject(new WorkflowRuntimeError(`waitForEvent(${eventTypeName(type)}) was called after the run ended.`));
    const waiting = new Promise<Event>((resolve, reject) => {
      const waiter: Waiter = { type, requirements, resolve, reject, execution };
      if (timeout !== undefined) {
        waiter.cancelTimer = startTimer(timeout, () => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          this.#wake(waiter, () => reject(new WorkflowTimeoutError(`waitForEvent(${eventTypeName(type)}) timed out after ${timeout} seconds.`)));
        });
      }
      this.#waiters.push(waiter);
    });
    // A waiting step gives its worker back (Python re-runs the step when the answer comes), so
    // the events it waits on can reach it even with numWorkers: 1.
    if (execution && execution.waits++ === 0) {
      execution.slot.busy--;
      this.#pump(execution.slot);
    }
    if (waiterEvent) this.writeToStream(waiterEvent);
    return waiting;
  }

  /** Ends the run; what it had pending stays in the context, for `toJSON()` and for a later run to continue. */
  cancel(): void {
    if (this.#done) return;
    const pending = this.#scheduled ? this.#pending() : undefined;
    this.fail(new WorkflowCancelledByUser("The run was cancelled."));
    if (pending) contextEngine.keepCancelledRun(this.ctx, this, pending);
  }

  fail(error: unknown): void {
    if (this.#done) return;
    this.#end({ ok: false, error }, error);
  }

  /** What is pending, as plain JSON, for `ctx.toJSON()`. */
  save(): SavedRun {
    return encodeRun(this.#pending(), this.ctx.workflow.codecs);
  }

  /** What is pending, as live events (copies of the lists: the run goes on changing its own). */
  #pending(): RestoredRun {
    const queued: Record<string, Delivery[]> = {};
    const inFlight: Record<string, Delivery[]> = {};
    const once: Record<string, ReadonlyMap<string, OnceRecord>> = {};
    const deliver = (execution: StepExecution): Delivery => {
      const id = this.#executionId(execution);
      execution.shared = true;
      if (execution.once && execution.once.size > 0) once[id] = execution.once;
      return { event: execution.event, execution: id };
    };
    for (const slot of this.#slots) {
      const name = slot.step.name;
      if (slot.queue?.size) queued[name] = slot.queue.toArray().map(deliver);
      if (slot.inFlight.size) inFlight[name] = slot.inFlight.toArray().map(deliver);
    }
    // A restored run executes the in-flight steps again, and they collect their events again:
    // saved are the buffers as they were before those executions added or took anything.
    // (Recorded without a cost per event: an in-flight execution's own event leaves its step's
    // buffers, and the sets it completed go back.)
    const rerun = new Map<string, Set<Event>>();
    const restored = new Map<CollectBuffer, Event[]>();
    for (const slot of this.#slots) {
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
    for (const [name, buffers] of this.#collected ?? []) {
      const removed = rerun.get(name);
      for (const [id, buffer] of buffers) {
        let events = [...(restored.get(buffer) ?? []), ...[...buffer.byType.values()].flat()];
        if (removed) events = events.filter((ev) => !removed.has(ev));
        if (events.length > 0) (collected[name] ??= {})[id] = events;
      }
    }
    const waiters = this.#waiters.map((w) => ({
      type: eventTypeName(w.type),
      requirements: encodeValue(w.requirements ?? null, `requirements of waitForEvent(${eventTypeName(w.type)})`),
    }));
    // In-flight executions wait again when the run is restored: what their waits took goes back first, as it came before.
    // (Not what a recorded ctx.once holds: its work does not run again.)
    const waited = this.#slots.flatMap((slot) =>
      slot.inFlight.toArray().flatMap((execution) => (execution.waited ?? []).filter((w) => !heldByOnce(execution, w))),
    );
    const givenBack = waited.sort((a, b) => a.order - b.order).map(({ event }) => event);
    return { runId: this.id, queued, inFlight, once, collected, unclaimed: [...givenBack, ...this.#unclaimed], waiters };
  }

  /** An execution's id as saved: scoped to the run by the journal key, not by itself. */
  #executionId(execution: StepExecution): string {
    return typeof execution.id === "string" ? execution.id : `${(this.#attempt ??= randomUUID().slice(0, 8))}.${execution.id}`;
  }

  /**
   * `ctx.once` in `execution`: its records, then `journal`, under a key scoped to this run and
   * execution. The journal is asked only when another attempt at the run could know that key:
   * the execution has a string id (restored from a save, or made from a restored execution's
   * id, which every resume of the save makes alike) or a save included it. A numbered
   * execution's id is this attempt's own, so no one else can claim its work.
   */
  once<T>(execution: StepExecution, name: string, work: () => T | Promise<T>, options: OnceOptions | undefined, journal: Journal): Promise<OnceResult<T>> {
    return runOnce(new ExecutionOnceScope(this, execution, journal), name, work, options);
  }

  /** For {@link ExecutionOnceScope}: the journal key of `ctx.once(name)` in `execution`. */
  onceKey(execution: StepExecution, name: string): string {
    return `once:${this.id}:${this.#executionId(execution)}:${name}`;
  }

  /** For {@link ExecutionOnceScope}: why the run ended, or `undefined` while it goes on. */
  endedBecause(): { readonly reason: unknown } | undefined {
    return this.#done ? { reason: this.#abortReason?.reason ?? RUN_FINISHED } : undefined;
  }

  #anyStepExecuting(): boolean {
    for (const slot of this.#slots) if (slot.inFlight.size > 0) return true;
    return false;
  }

  #deliverToWaiter(event: Event): boolean {
    const index = this.#waiters.findIndex(
      (w) => event instanceof w.type && (!w.requirements || Object.entries(w.requirements).every(([k, v]) => (event as Record<string, unknown>)[k] === v)),
    );
    if (index < 0) return false;
    const [waiter] = this.#waiters.splice(index, 1) as [Waiter];
    waiter.cancelTimer?.();
    this.#tookForWait(waiter.execution, event);
    this.#wake(waiter, () => waiter.resolve(event));
    return true;
  }

  /**
   * Notes that `execution` took `event` with `waitForEvent`. A restored run executes an
   * in-flight step again from its input event, and its waits ask again: a save gives them
   * their answers back, in the order they were taken, so that each goes to its question again
   * and none is asked twice.
   */
  #tookForWait(execution: StepExecution | undefined, event: Event): Event {
    if (execution) (execution.waited ??= []).push({ order: this.#waitedCount++, event, during: runningOnceNames(execution) });
    return event;
  }

  /** Continues a waiter: at once, or, for the last pending wait of a step execution, once it has a worker again. */
  #wake(waiter: Waiter, proceed: () => void): void {
    const execution = waiter.execution;
    if (!execution || --execution.waits > 0 || execution.ended) return proceed();
    const slot = execution.slot;
    if (slot.busy < slot.step.numWorkers && !slot.resumes?.length) {
      slot.busy++;
      proceed();
    } else (slot.resumes ??= []).push(proceed);
  }

  /** Gives free workers to waiting executions whose answer came, then to queued events. */
  #pump(slot: StepSlot): void {
    while (!this.#done && slot.busy < slot.step.numWorkers) {
      const resume = slot.resumes?.shift();
      if (resume) {
        slot.busy++;
        resume();
        continue;
      }
      const next = slot.queue?.shift();
      if (next === undefined) return;
      this.#execute(next);
    }
  }

  #enqueue(slot: StepSlot, event: Event, from?: StepExecution): void {
    // The event a restored execution returns gets an id made from that execution's, so every
    // resume of one saved run gives the same id to the same work and shares its ctx.once records.
    // Fresh runs keep numbered ids: no hash on the hot path.
    const id = typeof from?.id === "string" ? createHash("sha256").update(`${from.id}>${slot.step.name}`).digest("base64url").slice(0, 16) : ++this.#executions;
    const execution = newExecution(slot, event, id, undefined);
    if (this.#started && slot.busy < slot.step.numWorkers) this.#execute(execution);
    else (slot.queue ??= new ExecutionQueue()).push(execution);
  }

  /**
   * Gives `execution` a worker and starts its first attempt, in this time slice or a later one.
   * Not `async`, nor are the attempts: an async method's suspended frame (its promise, its
   * registers) cost as much as the rest of an execution's bookkeeping, and stays alive across
   * the whole step; a `then` on the step's promise costs a fraction of it.
   */
  #execute(execution: StepExecution): void {
    const slot = execution.slot;
    slot.inFlight.add(execution);
    slot.busy++;
    const ctx = contextEngine.forExecution(this.ctx, execution);
    if (sliceSpent()) this.#inNextSlice(execution, ctx);
    else this.#firstAttempt(execution, ctx);
  }

  /** A method of its own: a closure in `#execute` would cost every execution its variables' context. */
  #inNextSlice(execution: StepExecution, ctx: Context): void {
    inNextSlice(() => {
      if (!this.#done) this.#firstAttempt(execution, ctx);
    });
  }

  #firstAttempt(execution: StepExecution, ctx: Context): void {
    // Read only for steps that retry: a clock read per execution would cost the hot path.
    const startedAt = execution.slot.step.retry ? performance.now() : 0;
    this.#runAttempt(execution, ctx, 1, startedAt, currentSlice());
  }

  /**
   * Calls the step; its result (or failure) is handled in a later microtask, even when it
   * returns at once, so the stack never grows with the chain of steps. `startedAt`: when the
   * first attempt began, for retry policies; `slice`: the time slice it was counted in.
   */
  #runAttempt(execution: StepExecution, ctx: Context, attempts: number, startedAt: number, slice: number): void {
    const { slot, event } = execution;
    const { step } = slot;
    if (attempts > 1) {
      execution.retried = true;
      execution.waited = undefined; // a retry waits again: a save gives back only what this attempt took
    }
    this.settings.log?.(`Running step ${step.name}`);
    if (this.#lifecycle) this.#stepState(step, event, "started", attempts);
    const observed = this.#observation?.stepStarted({
      runId: this.id,
      step: step.name,
      attempt: attempts,
      inputEvent: eventTypeName(event.constructor as EventClass),
    });
    let output: unknown;
    try {
      if (observed) output = this.#invokeObserved(observed, step, ctx, event);
      else if (step.resources === undefined && step.timeout === null) output = step.handler(ctx, event, NO_RESOURCES);
      else output = this.#invoke(step, ctx, event);
    } catch (error) {
      return this.#failed(execution, ctx, error, attempts, startedAt, slice, observed);
    }
    void Promise.resolve(output).then(
      (value) => {
        workDone(slice);
        this.#finished(execution, value, attempts, observed);
      },
      (error: unknown) => this.#failed(execution, ctx, error, attempts, startedAt, slice, observed),
    );
  }

  /** An attempt threw: retry it (now or after a delay), hand it to a recovery step, or fail the run. */
  #failed(
    execution: StepExecution,
    ctx: Context,
    error: unknown,
    attempts: number,
    startedAt: number,
    slice: number,
    observed: StepObservation | undefined,
  ): void {
    if (this.#done) return observed?.ended({ ok: false, error, willRetry: false });
    const { slot, event } = execution;
    const { step } = slot;
    let delay: number | null;
    try {
      delay = retryDelay(step, attempts, error, (performance.now() - startedAt) / 1000);
    } catch (policyError) {
      observed?.ended({ ok: false, error, willRetry: false });
      return this.fail(policyError); // a retry function that throws or returns nonsense
    }
    observed?.ended({ ok: false, error, willRetry: delay !== null });
    if (this.#lifecycle) this.#stepState(step, event, "failed", attempts, { error: errorMessage(error), willRetry: delay !== null });
    if (delay === null && this.#recover(slot, event, execution, attempts, error)) return;
    if (delay === null)
      return this.fail(
        error instanceof Error
          ? error
          : new NonErrorThrownError(
              `Step "${step.name}" threw ${describeValue(error)}, not an Error. Throw an Error (throw new Error("what went wrong")) so the failure says what happened; the thrown value is this error's cause.`,
              step.name,
              error,
            ),
      );
    this.settings.log?.(`Step ${step.name} failed (attempt ${attempts}); retrying in ${delay} seconds`);
    if (delay === 0) return this.#runAttempt(execution, ctx, attempts + 1, startedAt, slice);
    void this.#sleep(delay).then(() => {
      if (!this.#done) this.#runAttempt(execution, ctx, attempts + 1, startedAt, slice);
    });
  }

  /** An attempt returned `output`: the execution ends, and its event (if any) goes on. */
  #finished(execution: StepExecution, output: unknown, attempts: number, observed: StepObservation | undefined): void {
    const { slot, event } = execution;
    const { step } = slot;
    observed?.ended(isEvent(output) ? { ok: true, outputEvent: eventTypeName(output.constructor as EventClass) } : { ok: true });
    slot.inFlight.delete(execution);
    execution.ended = true;
    // An execution that ends with a wait still pending (not awaited) gave its worker back already.
    if (execution.waits === 0) slot.busy--;
    if (this.#done) return;
    if (this.#lifecycle)
      this.#stepState(step, event, "finished", attempts, isEvent(output) ? { outputEvent: eventTypeName(output.constructor as EventClass) } : {});
    if (output !== undefined) {
      if (!isEvent(output)) {
        return this.fail(
          new WorkflowRuntimeError(`Step "${step.name}" returned ${describe(output)}, not an event. Return an Event instance, or nothing to send nothing.`),
        );
      }
      this.settings.log?.(`Step ${step.name} produced event ${eventTypeName(output.constructor as EventClass)}`);
      // A returned InputRequiredEvent is for the app, as in Python's workflows: it goes to the stream.
      // A step may also accept it (or a subclass of it).
      if (output instanceof InputRequiredEvent) {
        this.writeToStream(output);
        if (this.graph.routes.has(output.constructor as EventClass)) this.send(output);
      } else if (!this.#route(output, undefined, execution)) {
        // A HumanResponseEvent may answer a waitForEvent not asked yet; anything else would wait for the timeout.
        if (!(output instanceof HumanResponseEvent)) return this.fail(unhandled(step.name, output));
        this.#unclaimed.push(output);
      }
    } else {
      this.settings.log?.(`Step ${step.name} produced no event`);
    }
    if (slot.queue?.size || slot.resumes?.length) this.#pump(slot);
  }

  /**
   * Hands a step that failed for good to a recovery step, if one covers it and has recoveries
   * left: the failed execution ends as if it had returned nothing. False when none takes it.
   */
  #recover(slot: StepSlot, event: Event, execution: StepExecution, attempts: number, error: unknown): boolean {
    const step = slot.step;
    const recoverer = this.graph.recoverers.find((r) => r !== step && (r.catchErrors?.forSteps ?? [step.name]).includes(step.name));
    if (!recoverer) return false;
    const recoveries = (this.#recoveries ??= new Map());
    const used = recoveries.get(recoverer.name) ?? 0;
    if (used >= (recoverer.catchErrors?.maxRecoveries ?? 1)) return false;
    recoveries.set(recoverer.name, used + 1);
    slot.inFlight.delete(execution);
    execution.ended = true;
    if (execution.waits === 0) slot.busy--;
    this.settings.log?.(`Step ${step.name} failed; recovering with step ${recoverer.name}`);
    const failure = error instanceof Error ? { name: error.name, message: error.message } : { name: typeof error, message: describeValue(error) };
    this.send(
      new StepFailedEvent({ step: step.name, attempts, error: failure, inputEvent: eventTypeName(event.constructor as EventClass), input: { ...event } }),
      recoverer,
    );
    this.#pump(slot);
    return true;
  }

  #stepState(
    step: StepDefinition,
    event: Event,
    state: StepState,
    attempt: number,
    more: { outputEvent?: string; error?: string; willRetry?: boolean } = {},
  ): void {
    this.stream.push(
      new StepStateChangedEvent({ runId: this.id, step: step.name, state, attempt, inputEvent: eventTypeName(event.constructor as EventClass), ...more }),
    );
  }

  /** `#invoke` within the observer's span; a method of its own, so that its closure costs only observed runs. */
  #invokeObserved(observed: StepObservation, step: StepDefinition, ctx: Context, event: Event): unknown {
    return observed.run(() => this.#invoke(step, ctx, event));
  }

  /** Calls the step's handler with its resources and under its timeout, if it has them. */
  async #invoke(step: StepDefinition, ctx: Context, event: Event): Promise<unknown> {
    if (step.resources === undefined && step.timeout === null) return step.handler(ctx, event, NO_RESOURCES);
    const resources = step.resources ? await resolveResources(step.resources, (this.#resources ??= new Map()), this.graph.resourceCache) : NO_RESOURCES;
    return step.timeout === null ? step.handler(ctx, event, resources) : this.#withStepTimeout(step, ctx, event, resources);
  }

  #withStepTimeout(step: StepDefinition, ctx: Context, event: Event, resources: Record<string, unknown>): Promise<unknown> {
    const seconds = step.timeout as number;
    return new Promise((resolve, reject) => {
      const timers = (this.#timers ??= new Set());
      const cancel = startTimer(seconds, () => {
        timers.delete(cancel);
        reject(new WorkflowTimeoutError(`Step "${step.name}" timed out after ${seconds} seconds.`, [step.name]));
      });
      timers.add(cancel);
      const settle = () => {
        cancel();
        timers.delete(cancel);
      };
      // new Promise(...) turns a handler that throws synchronously into a rejection.
      new Promise((run) => run(step.handler(ctx, event, resources))).then(
        (output) => (settle(), resolve(output)),
        (error: unknown) => (settle(), reject(error)),
      );
    });
  }

  /** Waits `seconds`; never resolves if the run ends first (its timer is cleared then). */
  #sleep(seconds: number): Promise<void> {
    return new Promise((resolve) => {
      const timers = (this.#timers ??= new Set());
      const cancel = startTimer(seconds, () => {
        timers.delete(cancel);
        resolve();
      });
      timers.add(cancel);
    });
  }

  #finish(stop: StopEvent): void {
    this.stream.push(stop);
    this.#end({ ok: true, stop }, RUN_FINISHED);
  }

  #end(outcome: RunOutcome, reason: unknown): void {
    this.#done = true;
    this.#succeeded = outcome.ok;
    this.#cancelTimeout?.();
    if (this.#timers) for (const cancel of this.#timers) cancel();
    this.#timers = undefined;
    if (!outcome.ok || this.#anyStepExecuting()) {
      this.#abortReason = { reason };
      this.#controller?.abort(reason);
    }
    for (const waiter of this.#waiters) {
      waiter.cancelTimer?.();
      waiter.reject(reason);
    }
    this.#waiters = [];
    if (this.settings.lifecycleEvents) this.stream.push(runEnded(this.id, outcome));
    this.#observation?.runEnded(outcome.ok ? { status: "succeeded" } : { status: runStatus(outcome.error), error: outcome.error });
    this.stream.close();
    this.#settle(outcome);
  }
}

/** What `ctx.once` needs of one execution of a run: a class, so that a call makes one small object and no closures. */
/** A step execution not started yet. Every field set here, so that all executions share one shape. */
function newExecution(slot: StepSlot, event: Event, id: number | string, once: StepExecution["once"]): StepExecution {
  return { slot, event, id, once, waits: 0, ended: false, retried: false, taken: undefined, waited: undefined, previous: undefined, next: undefined };
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

/** Whether a wait's event is held by a `ctx.once` that was running when it was taken and has recorded its result. */
function heldByOnce(execution: StepExecution, waited: NonNullable<StepExecution["waited"]>[number]): boolean {
  return waited.during?.some((name) => execution.once?.get(name)?.state === "finished") ?? false;
}

class ExecutionOnceScope implements OnceScope {
  readonly records: Map<string, OnceRecord>;
  readonly codecs: Codecs;

  constructor(
    readonly run: Run,
    readonly execution: StepExecution,
    readonly journal: Journal,
  ) {
    this.records = execution.once ??= new Map();
    this.codecs = run.ctx.workflow.codecs;
  }

  key(name: string): string {
    return this.run.onceKey(this.execution, name);
  }

  shared(): boolean {
    return this.execution.shared === true || typeof this.execution.id === "string";
  }

  ended(): { readonly reason: unknown } | undefined {
    return this.run.endedBecause();
  }
}

// The abort reason of runs that finished while steps were still executing: one shared error,
// because capturing a stack trace per run was the largest cost of a short run.
const RUN_FINISHED = new WorkflowRuntimeError("The run has finished.");

function runEnded(runId: string, outcome: RunOutcome): RunEndedEvent {
  if (outcome.ok) return new RunEndedEvent({ runId, status: "succeeded" });
  const error = outcome.error;
  const status = runStatus(error);
  return new RunEndedEvent({ runId, status, error: { name: error instanceof Error ? error.name : typeof error, message: errorMessage(error) } });
}

function runStatus(error: unknown): RunStatus {
  return error instanceof WorkflowCancelledByUser ? "cancelled" : error instanceof WorkflowTimeoutError ? "timedOut" : "failed";
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : describeValue(error);
}

function unhandled(stepName: string, event: Event): UnhandledEventError {
  const type = eventTypeName(event.constructor as EventClass);
  return new UnhandledEventError(
    `Step "${stepName}" returned ${type}, but no step accepts ${type} and no waitForEvent is waiting for it, so the run could not go on. Add ${type} to the accepts of the step that should handle it (or send it with ctx.sendEvent, which keeps it for a later waitForEvent).`,
    stepName,
    type,
  );
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return `an object (${value.constructor?.name ?? "Object"})`;
  return `a ${typeof value}`;
}

/** " with {…}" for a timeout message; nothing when there are no requirements, or they cannot be shown. */
function describeRequirements(requirements: Readonly<Record<string, unknown>> | undefined): string {
  if (!requirements || Object.values(requirements).every((value) => value === undefined)) return "";
  try {
    return ` with ${JSON.stringify(requirements)}`;
  } catch {
    return ` with ${Object.keys(requirements).join(", ")} set`; // a BigInt or a cycle: JSON cannot show it
  }
}
