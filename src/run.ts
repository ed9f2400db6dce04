/**
 * One run of a workflow: routes events to steps, caps each step's concurrent executions,
 * retries, enforces timeouts, and ends exactly once (result, error, timeout or cancel).
 *
 * All run state is plain data (queues of events, in-flight events, collect buffers,
 * waiters), so a context can be saved and restored. Each step execution resolves in its own
 * microtask, so the stack never grows with the chain length; and the loop gives the event
 * loop a turn every few milliseconds, so timers (the run's timeout among them) fire even
 * when every step resolves at once.
 */
import { eventTypeName, InputRequiredEvent, isEvent, StopEvent } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import { WorkflowCancelledByUser, WorkflowRuntimeError, WorkflowTimeoutError } from "./errors.ts";
import { EventStream } from "./event-stream.ts";
import type { WorkflowGraph } from "./graph.ts";
import { retryDelay } from "./step.ts";
import type { StepDefinition } from "./step.ts";
import type { Context } from "./context.ts";
import { decodeEvent, encodeEvent, encodeValue } from "./serialize.ts";
import type { Json, SavedEvent } from "./serialize.ts";
import { startTimer } from "./timers.ts";

/** The part of a saved context that describes a run in progress (plain JSON). */
export interface SavedRun {
  /** Events waiting for a worker, per step. */
  readonly queued: Record<string, SavedEvent[]>;
  /** Events whose step was executing; on resume the step runs again from this event. */
  readonly inFlight: Record<string, SavedEvent[]>;
  /** `collectEvents` buffers, keyed by the list of type names. */
  readonly collected: Record<string, SavedEvent[]>;
  /** Events sent that no step or waiter has taken yet. */
  readonly unclaimed: SavedEvent[];
  /** What `waitForEvent` calls were waiting for (informational: re-run steps wait again). */
  readonly waiters: { readonly type: string; readonly requirements: Json }[];
}

/** A saved run with its events decoded, ready to resume. */
export interface RestoredRun {
  readonly queued: Record<string, Event[]>;
  readonly inFlight: Record<string, Event[]>;
  readonly collected: Record<string, Event[]>;
  /** Still encoded when their class is not one the workflow's steps name: a `waitForEvent` for it decodes them. */
  readonly unclaimed: (Event | SavedEvent)[];
}

/** How a run ended. */
export type RunOutcome = { readonly ok: true; readonly stop: StopEvent } | { readonly ok: false; readonly error: unknown };

interface Waiter {
  readonly type: EventClass;
  readonly requirements: Readonly<Record<string, unknown>> | undefined;
  readonly resolve: (event: Event) => void;
  readonly reject: (error: unknown) => void;
  cancelTimer?: () => void;
}

/** A FIFO with O(1) shift: an array and a head index, compacted when half is spent. */
class EventQueue {
  items: Event[] = [];
  head = 0;
  get size(): number {
    return this.items.length - this.head;
  }
  push(event: Event): void {
    this.items.push(event);
  }
  shift(): Event | undefined {
    if (this.head === this.items.length) return undefined;
    const event = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return event;
  }
  toArray(): Event[] {
    return this.items.slice(this.head);
  }
}

interface StepSlot {
  readonly step: StepDefinition;
  readonly queue: EventQueue;
  /** Events whose execution has started and not finished (one entry per execution: the same event may be sent twice). */
  readonly inFlight: Event[];
}

/** Options of one run. */
export interface RunSettings {
  readonly workflowName: string;
  readonly timeout: number | null;
  readonly log: ((line: string) => void) | undefined;
}

const YIELD_EVERY_MS = 8;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The engine of one run. Created by `workflow.run()`; users meet it through the handler and the context. */
export class Run {
  readonly stream = new EventStream();
  readonly result: Promise<RunOutcome>;
  /** The context's view for this run: what its steps and its handler get. */
  readonly ctx: Context;
  readonly #controller = new AbortController();
  readonly #slots = new Map<string, StepSlot>();
  readonly #collected = new Map<string, Event[]>();
  #waiters: Waiter[] = [];
  /** Events that reached no step and no waiter yet: a later `waitForEvent` may claim them. */
  readonly #unclaimed: (Event | SavedEvent)[] = [];
  #settle!: (outcome: RunOutcome) => void;
  #done = false;
  #succeeded = false;
  /** Until the microtask that starts the run, events wait in their steps' queues. */
  #started = false;
  #cancelTimeout: (() => void) | undefined;
  /** Step timeouts and retry delays under way: cleared when the run ends, so they do not keep the process alive. */
  readonly #timers = new Set<() => void>();
  #ticks = 0;
  #nextYieldAt = 0;
  // Node creates an AbortSignal on first use, and creating and aborting one costs ~10 µs: a run
  // whose steps never read ctx.signal creates none. One first read after the run was aborted
  // comes already aborted, with the recorded reason.
  #signalGiven = false;
  #abortReason: { readonly reason: unknown } | undefined;

  /** Makes this the run of `ctx` (which throws if the context is running another). */
  constructor(
    ctx: Context,
    readonly graph: WorkflowGraph,
    readonly settings: RunSettings,
  ) {
    this.ctx = ctx.attach(this);
    this.result = new Promise((resolve) => (this.#settle = resolve));
    for (const step of graph.steps.values()) this.#slots.set(step.name, { step, queue: new EventQueue(), inFlight: [] });
  }

  /**
   * Aborted when the run times out, is cancelled or fails, and when it finishes while steps are
   * still executing (their work is no longer needed). A run that finishes with nothing executing
   * leaves it alone: LLM requests that listen to it (the OpenAI SDK never removes its listener)
   * are finished, and aborting each of them again costs a DOMException apiece.
   */
  get signal(): AbortSignal {
    const signal = this.#controller.signal;
    if (!this.#signalGiven) {
      this.#signalGiven = true;
      if (this.#abortReason) this.#controller.abort(this.#abortReason.reason);
    }
    return signal;
  }

  get done(): boolean {
    return this.#done;
  }

  /** Names of the steps executing right now. */
  activeSteps(): string[] {
    return [...this.#slots.values()].filter((s) => s.inFlight.length > 0).map((s) => s.step.name);
  }

  /**
   * Loads the run's first events now and starts executing them in a microtask, as Python's
   * `run()` schedules its task: a run cancelled right away runs no step, and a context saved
   * before then holds everything, events sent meanwhile included. `first`: the StartEvent, or
   * the run saved in the context, which the context keeps until the run starts (a run
   * cancelled before leaves it saved).
   */
  schedule(first: { readonly event: Event } | { readonly restored: RestoredRun }): void {
    if ("event" in first) this.send(first.event);
    else this.#load(first.restored);
    queueMicrotask(() => {
      // Started, or finished by a StopEvent sent from outside: the saved run is done with.
      if ("restored" in first && (!this.#done || this.#succeeded)) this.ctx.settleSavedRun(this);
      if (!this.#done) this.#start();
    });
  }

  #load(restored: RestoredRun): void {
    for (const [key, events] of Object.entries(restored.collected)) this.#collected.set(key, [...events]);
    this.#unclaimed.push(...restored.unclaimed);
    // In-flight events first: they were taken before the queued ones.
    for (const source of [restored.inFlight, restored.queued]) {
      for (const [name, events] of Object.entries(source)) {
        const slot = this.#slots.get(name);
        if (!slot) return this.fail(new WorkflowRuntimeError(`The saved run has events for a step "${name}" that this workflow does not have.`));
        for (const event of events) slot.queue.push(event);
      }
    }
  }

  #start(): void {
    this.#started = true;
    const timeout = this.settings.timeout;
    if (timeout !== null) {
      this.#cancelTimeout = startTimer(timeout, () => {
        const active = this.activeSteps();
        // A run that times out waiting for a human should say for what: the answer it never got.
        const waiting = this.#waiters.map((w) => `${eventTypeName(w.type)}${describeRequirements(w.requirements)}`);
        const waitingFor = waiting.length > 0 ? ` Waiting for: ${waiting.join(", ")} (send it with handler.ctx.sendEvent).` : "";
        this.fail(new WorkflowTimeoutError(`Workflow "${this.settings.workflowName}" timed out after ${timeout} seconds. Active steps: ${active.join(", ") || "none"}.${waitingFor}`, active));
      });
    }
    this.#nextYieldAt = performance.now() + YIELD_EVERY_MS;
    for (const slot of this.#slots.values()) {
      while (!this.#done && slot.inFlight.length < slot.step.numWorkers && slot.queue.size > 0) void this.#execute(slot, slot.queue.shift() as Event);
    }
  }

  /** Routes an event: to `target` only, or to every step accepting its exact class and to matching waiters. */
  send(event: Event, target?: StepDefinition): void {
    if (this.#done) return;
    if (event instanceof StopEvent) return this.#finish(event);
    let delivered = this.#waiters.length > 0 && this.#deliverToWaiter(event);
    const steps = target ? [target] : this.graph.routes.get(event.constructor as EventClass);
    if (steps) {
      for (const step of steps) this.#enqueue(this.#slots.get(step.name) as StepSlot, event);
      delivered = true;
    }
    if (!delivered) this.#unclaimed.push(event);
  }

  writeToStream(event: Event): void {
    if (!this.#done) this.stream.push(event);
  }

  collect<T extends readonly EventClass[]>(event: Event, types: T): Event[] | null {
    const key = types.map(eventTypeName).join("|");
    const buffer = this.#collected.get(key) ?? [];
    if (types.includes(event.constructor as EventClass)) buffer.push(event);
    this.#collected.set(key, buffer);
    const picked: number[] = [];
    for (const type of types) {
      const index = buffer.findIndex((ev, i) => ev.constructor === type && !picked.includes(i));
      if (index < 0) return null;
      picked.push(index);
    }
    const events = picked.map((i) => buffer[i] as Event);
    this.#collected.set(key, buffer.filter((_, i) => !picked.includes(i)));
    return events;
  }

  /** The first unclaimed event that matches, else a wait for one; `waiterEvent` goes to the stream only when the run must wait. */
  waitFor(type: EventClass, requirements: Readonly<Record<string, unknown>> | undefined, timeout: number | undefined, waiterEvent: Event | undefined): Promise<Event> {
    const matches = (ev: Event) => ev instanceof type && (!requirements || Object.entries(requirements).every(([k, v]) => (ev as Record<string, unknown>)[k] === v));
    for (let i = 0; i < this.#unclaimed.length; i++) {
      let event = this.#unclaimed[i] as Event | SavedEvent;
      if (!isEvent(event)) {
        // Restored before anything knew its class (only the waiting step names it): decoded now.
        const saved = event as unknown as SavedEvent;
        if (saved.type !== eventTypeName(type)) continue;
        try {
          event = this.#unclaimed[i] = decodeEvent(saved, new Map([[saved.type, type]]), `unclaimed event[${i}]`);
        } catch {
          continue; // saved in a shape the class no longer takes (an older version): it answers nothing, and the question is asked again
        }
      }
      if (matches(event as Event)) return Promise.resolve(this.#unclaimed.splice(i, 1)[0] as Event);
    }
    if (this.#done) return Promise.reject(new WorkflowRuntimeError(`waitForEvent(${eventTypeName(type)}) was called after the run ended.`));
    const waiting = new Promise<Event>((resolve, reject) => {
      const waiter: Waiter = { type, requirements, resolve, reject };
      if (timeout !== undefined) {
        waiter.cancelTimer = startTimer(timeout, () => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          reject(new WorkflowTimeoutError(`waitForEvent(${eventTypeName(type)}) timed out after ${timeout} seconds.`));
        });
      }
      this.#waiters.push(waiter);
    });
    if (waiterEvent) this.writeToStream(waiterEvent);
    return waiting;
  }

  cancel(): void {
    this.fail(new WorkflowCancelledByUser("The run was cancelled."));
  }

  fail(error: unknown): void {
    if (this.#done) return;
    this.#end({ ok: false, error }, error);
  }

  /** What is pending, as plain JSON, for `ctx.toJSON()`. */
  save(): SavedRun {
    const events = (list: Iterable<Event>, where: string) => [...list].map((ev, i) => encodeEvent(ev, `${where}[${i}]`));
    const queued: Record<string, SavedEvent[]> = {};
    const inFlight: Record<string, SavedEvent[]> = {};
    for (const [name, slot] of this.#slots) {
      if (slot.queue.size) queued[name] = events(slot.queue.toArray(), `queued event of step "${name}"`);
      if (slot.inFlight.length) inFlight[name] = events(slot.inFlight, `in-flight event of step "${name}"`);
    }
    const collected = Object.fromEntries([...this.#collected].filter(([, list]) => list.length > 0).map(([key, list]) => [key, events(list, `collected event "${key}"`)]));
    const waiters = this.#waiters.map((w) => ({ type: eventTypeName(w.type), requirements: encodeValue(w.requirements ?? null, `requirements of waitForEvent(${eventTypeName(w.type)})`) }));
    const unclaimed = this.#unclaimed.map((ev, i) => (isEvent(ev) ? encodeEvent(ev, `unclaimed event[${i}]`) : (ev as SavedEvent)));
    return { queued, inFlight, collected, unclaimed, waiters };
  }

  #anyStepExecuting(): boolean {
    for (const slot of this.#slots.values()) if (slot.inFlight.length > 0) return true;
    return false;
  }

  #deliverToWaiter(event: Event): boolean {
    const index = this.#waiters.findIndex((w) => event instanceof w.type && (!w.requirements || Object.entries(w.requirements).every(([k, v]) => (event as Record<string, unknown>)[k] === v)));
    if (index < 0) return false;
    const [waiter] = this.#waiters.splice(index, 1) as [Waiter];
    waiter.cancelTimer?.();
    waiter.resolve(event);
    return true;
  }

  #enqueue(slot: StepSlot, event: Event): void {
    if (this.#started && slot.inFlight.length < slot.step.numWorkers) void this.#execute(slot, event);
    else slot.queue.push(event);
  }

  async #execute(slot: StepSlot, event: Event): Promise<void> {
    const { step } = slot;
    slot.inFlight.push(event);
    if ((++this.#ticks & 255) === 0 && performance.now() >= this.#nextYieldAt) {
      await yieldToEventLoop();
      this.#nextYieldAt = performance.now() + YIELD_EVERY_MS;
      if (this.#done) return;
    }
    let output: unknown;
    for (let attempts = 1; ; attempts++) {
      this.settings.log?.(`Running step ${step.name}`);
      try {
        output = step.timeout === null ? await step.handler(this.ctx, event) : await this.#withStepTimeout(step, event);
        break;
      } catch (error) {
        if (this.#done) return;
        let delay: number | null;
        try {
          delay = retryDelay(step, attempts, error);
        } catch (policyError) {
          return this.fail(policyError); // a retry function that throws or returns nonsense
        }
        if (delay === null) return this.fail(error);
        this.settings.log?.(`Step ${step.name} failed (attempt ${attempts}); retrying in ${delay} seconds`);
        if (delay > 0) await this.#sleep(delay);
        if (this.#done) return;
      }
    }
    slot.inFlight.splice(slot.inFlight.indexOf(event), 1);
    if (this.#done) return;
    if (output !== undefined) {
      if (!isEvent(output)) {
        return this.fail(new WorkflowRuntimeError(`Step "${step.name}" returned ${describe(output)}, not an event. Return an Event instance, or nothing to send nothing.`));
      }
      this.settings.log?.(`Step ${step.name} produced event ${eventTypeName(output.constructor as EventClass)}`);
      // A returned InputRequiredEvent is for the app, as in Python's workflows: it goes to the stream.
      // A step may also accept it (or a subclass of it).
      if (output instanceof InputRequiredEvent) {
        this.writeToStream(output);
        if (this.graph.routes.has(output.constructor as EventClass)) this.send(output);
      } else this.send(output);
    } else {
      this.settings.log?.(`Step ${step.name} produced no event`);
    }
    const next = slot.queue.shift();
    if (next !== undefined && !this.#done) void this.#execute(slot, next);
  }

  #withStepTimeout(step: StepDefinition, event: Event): Promise<unknown> {
    const seconds = step.timeout as number;
    return new Promise((resolve, reject) => {
      const cancel = startTimer(seconds, () => {
        this.#timers.delete(cancel);
        reject(new WorkflowTimeoutError(`Step "${step.name}" timed out after ${seconds} seconds.`, [step.name]));
      });
      this.#timers.add(cancel);
      const settle = () => {
        cancel();
        this.#timers.delete(cancel);
      };
      // new Promise(...) turns a handler that throws synchronously into a rejection.
      new Promise((run) => run(step.handler(this.ctx, event))).then(
        (output) => (settle(), resolve(output)),
        (error: unknown) => (settle(), reject(error)),
      );
    });
  }

  /** Waits `seconds`; never resolves if the run ends first (its timer is cleared then). */
  #sleep(seconds: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = startTimer(seconds, () => {
        this.#timers.delete(cancel);
        resolve();
      });
      this.#timers.add(cancel);
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
    for (const cancel of this.#timers) cancel();
    this.#timers.clear();
    if (!outcome.ok || this.#anyStepExecuting()) {
      this.#abortReason = { reason };
      if (this.#signalGiven) this.#controller.abort(reason);
    }
    for (const waiter of this.#waiters) {
      waiter.cancelTimer?.();
      waiter.reject(reason);
    }
    this.#waiters = [];
    this.stream.close();
    this.#settle(outcome);
  }
}

// The abort reason of runs that finished while steps were still executing: one shared error,
// because capturing a stack trace per run was the largest cost of a short run.
const RUN_FINISHED = new WorkflowRuntimeError("The run has finished.");

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
