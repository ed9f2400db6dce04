/**
 * A run as data: its steps' queues and in-flight executions, collect buffers, waiters, events
 * nobody took yet, `ctx.once` records and counters. The transitions (run-transitions.ts) change
 * it; the driver (run.ts) carries out what they ask; a save encodes it (run-save.ts).
 */
import type { Event, EventClass } from "./event.ts";
import type { WorkflowGraph } from "./graph.ts";
import type { Codecs, SavedEvent } from "./serialize.ts";
import type { StepDefinition } from "./step.ts";
import type { OnceRecords } from "./once-records.ts";
import type { StepQueue } from "./step-queue.ts";
import type { Fifo } from "./fifo.ts";
import { shortHash } from "./node-builtins.ts";

/**
 * Where a run is: `created` (nothing loaded), `scheduled` (first events loaded, steps not
 * started), `running`, or ended (`succeeded`, `failed`).
 */
export type RunPhase = "created" | "scheduled" | "running" | "succeeded" | "failed";

/** What a wait is answered with: the event it took, or why it will never get one. */
export type WaitAnswer = { readonly ok: true; readonly event: Event } | { readonly ok: false; readonly error: unknown };

/** A pending `waitForEvent`: what it waits for and, live, how to answer it. */
export interface Waiter {
  readonly type: EventClass;
  readonly requirements: Readonly<Record<string, unknown>> | undefined;
  /** Hands the answer to the waiting caller (the driver's promise). */
  readonly answer: (answer: WaitAnswer) => void;
  /** The step execution waiting, when a step called it: it gets its worker back before it continues. */
  readonly execution: StepExecution | undefined;
  /** The `waiterEvent` the wait was asked with: shown as a question while the wait lasts. */
  readonly question?: Event | undefined;
  /** The wait's own timeout, when it has one (a timer of the driver's). */
  cancelTimer?: () => void;
}

/** One execution of a step; made when it starts, or when its event is queued for the step (see {@link StepQueue}). */
export interface StepExecution {
  /**
   * An execution is its own `execute` command (see `Command` in run-io.ts): a command object
   * for it cost every step execution 40 bytes.
   */
  readonly kind: "execute";
  readonly slot: StepSlot;
  readonly event: Event;
  /** A number for this attempt at the run's executions (see {@link RunState.executions}), the saved id for restored ones. */
  readonly id: number | string;
  /** `ctx.once` records, made at the first call (most executions make none). */
  once: OnceRecords | undefined;
  /** The id a save gave it: that id has left this process, so its `ctx.once` work, and that of the executions it leads to, is claimed in the journal from then on. */
  shared?: string;
  /** Events this attempt sent with `ctx.sendEvent`, counted only once it has a saved id (their executions' ids are made from its attempt and the count). */
  sends?: number;
  /** The attempt under way (1 for the first), 0 before it starts. */
  attempt: number;
  /** What the last attempt that failed threw, for `ctx.stepExecution` in the attempts after it. */
  lastError?: unknown;
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
  waited: { readonly order: number; readonly event: Event; readonly during: readonly string[] | undefined }[] | undefined;
}

/** A set of events an execution's `collectEvents` took out of `buffer`. */
export interface CollectTaken {
  readonly buffer: CollectBuffer;
  readonly events: Event[];
}

/** What a list of types given to `collectEvents` asks for, worked out once per list. */
export interface CollectPlan {
  readonly length: number;
  /** The one class of a list that names only one (`Array(n).fill(Done)`, or a count): such a plan keeps no list. */
  readonly single: EventClass | undefined;
  /** The list, for a plan of several classes. */
  readonly types: readonly EventClass[] | undefined;
  readonly key: string;
  readonly members: ReadonlySet<EventClass>;
  readonly counts: ReadonlyMap<EventClass, number>;
  /** The default buffer of the step that used the plan last. */
  cached: { readonly stepName: string; readonly buffer: CollectBuffer } | undefined;
}

/** A `collectEvents` buffer: events by exact class, each list in arrival order. */
export interface CollectBuffer {
  readonly byType: Map<EventClass, Event[]>;
  size: number;
}

/** The plans of a run's `collectEvents` lists: by list, the last one (which an equal new array reuses), and by class and count. */
export interface CollectPlans {
  readonly byList: WeakMap<readonly EventClass[], CollectPlan>;
  last: CollectPlan | undefined;
  byCount: Map<EventClass, Map<number, CollectPlan>> | undefined;
}

/**
 * A step's executions started and not finished, in the order they started: a list linked
 * through the executions themselves, because an array emptied and refilled at every execution
 * gets a new backing store each time (V8 frees the store of an emptied array), which cost more
 * than the rest of a short step execution's bookkeeping.
 */
export class InFlight {
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

/**
 * What continues first when a worker of its step frees: a waiting execution whose answer came
 * while every worker was busy, or the retry of an execution that gave its worker back to wait
 * and failed (its step timed out) while every worker was busy (`start`, the driver's, begins it).
 */
export type Resume =
  | { readonly waiter: Waiter; readonly answer: WaitAnswer; readonly start?: undefined }
  | { readonly execution: StepExecution; readonly start: () => void; readonly waiter?: undefined };

/** One step's part of the run. */
export interface StepSlot {
  readonly step: StepDefinition;
  /** Executions waiting for a worker; made at the first (most steps never queue one, their worker being free). */
  queue: StepQueue | undefined;
  /** Executions started and not finished. */
  readonly inFlight: InFlight;
  /** Executions holding a worker: started and not finished, less those waiting in `waitForEvent`. */
  busy: number;
  /** Waiting executions whose answer came while every worker was busy: they continue first when one frees. */
  resumes: Fifo<Resume> | undefined;
}

/** The whole state of one run. */
export interface RunState {
  readonly graph: WorkflowGraph;
  /** The graph's steps in slot order, and the slots each event class goes to. */
  readonly steps: StepList;
  readonly codecs: Codecs;
  phase: RunPhase;
  /** One per step, in the graph's order (see {@link stepsOf}): an array, cheaper to make per run than a Map. */
  readonly slots: StepSlot[];
  /** `collectEvents` buffers: step name → buffer id → buffer; made on first use (most runs need none). */
  collected: Map<string, Map<string, CollectBuffer>> | undefined;
  /** What the lists given to `collectEvents` ask for, worked out once per list; made on first use. */
  collectPlans: CollectPlans | undefined;
  waiters: Waiter[];
  /** Events that reached no step and no waiter yet: a later `waitForEvent` may claim them (still encoded when restored before their class was known). */
  readonly unclaimed: (Event | SavedEvent)[];
  /** How many events `waitForEvent` calls of step executions have taken: their order, for a save to give them back in. */
  waitedCount: number;
  /** Executions made by this attempt at the run, numbered from 1. */
  executions: number;
  /** Recoveries made, per recovery step (counted per run: a resumed run starts again from 0). */
  recoveries: Map<string, number> | undefined;
  /** How many times the run, observed, became idle: an idle check tells only of the latest, so each idle period once. */
  idlePeriod: number;
}

/**
 * A graph's steps as a list, the index of each name in it (the order of a run's slots), and
 * the indexes of the steps each event class goes to: one lookup per routed event, not one per
 * step by name.
 */
export interface StepList {
  readonly list: readonly StepDefinition[];
  readonly indexes: ReadonlyMap<string, number>;
  readonly routes: ReadonlyMap<EventClass, readonly number[]>;
}
// Derived from the graph, which never changes once built: a cache, not state.
const stepLists = new WeakMap<WorkflowGraph, StepList>();
function stepsOf(graph: WorkflowGraph): StepList {
  let steps = stepLists.get(graph);
  if (!steps) {
    const list = [...graph.steps.values()];
    const indexes = new Map(list.map((step, i) => [step.name, i]));
    const routes = new Map([...graph.routes].map(([type, to]) => [type, to.map((step) => indexes.get(step.name) as number)]));
    steps = { list, indexes, routes };
    stepLists.set(graph, steps);
  }
  return steps;
}

/**
 * The state of a run of `graph` that has not begun.
 * @example const state = newRunState(flow.graph, flow.codecs);
 */
export function newRunState(graph: WorkflowGraph, codecs: Codecs): RunState {
  const steps = stepsOf(graph);
  return {
    graph,
    steps,
    codecs,
    phase: "created",
    slots: steps.list.map((step) => ({ step, queue: undefined, inFlight: new InFlight(), busy: 0, resumes: undefined })),
    collected: undefined,
    collectPlans: undefined,
    waiters: [],
    unclaimed: [],
    waitedCount: 0,
    executions: 0,
    recoveries: undefined,
    idlePeriod: 0,
  };
}

/**
 * The slot of the step named `name`, if the workflow has one.
 * @example const slot = slotOf(state, "search");
 */
export function slotOf(state: RunState, name: string): StepSlot | undefined {
  const index = state.steps.indexes.get(name);
  return index === undefined ? undefined : state.slots[index];
}

/**
 * A step execution not started yet.
 * @example const execution = newExecution(slot, event, ++state.executions, undefined);
 */
export function newExecution(slot: StepSlot, event: Event, id: number | string, once: StepExecution["once"]): StepExecution {
  return new Execution(slot, event, id, once);
}

/**
 * The id `execution` has outside this process, if any: its saved id (restored, or made from a
 * restored execution's), or the one a save gave it. Another attempt at the run can know it.
 * @example const parent = savedIdOf(execution); // "1f0c2a9b.3", or undefined
 */
export function savedIdOf(execution: StepExecution): string | undefined {
  return typeof execution.id === "string" ? execution.id : execution.shared;
}

/**
 * The id of an execution of `slot`'s step for an event that `from` returned, or sent (`sent`).
 * Made from `from`'s saved id when it has one: every resume of the save, and the run that saved
 * it if it goes on, give the same id to the same work and share its `ctx.once` keys (an attempt
 * sends its events in the same order each time). Else numbered: no hash on the hot path.
 * @example const id = executionIdFor(state, slot, execution, false); // 7, or "Zk2cXH0qL1Y9wQ8a"
 */
export function executionIdFor(state: RunState, slot: StepSlot, from: StepExecution | undefined, sent: boolean): number | string {
  const parent = from === undefined ? undefined : savedIdOf(from);
  if (from === undefined || parent === undefined) return ++state.executions;
  // An event sent: by its attempt and place among those the attempt sent (a retry sends its own, and ids stay unique in the run).
  return shortHash(sent ? `${parent}>${slot.step.name}#${from.attempt}.${(from.sends = (from.sends ?? 0) + 1)}` : `${parent}>${slot.step.name}`);
}

/**
 * Whether `value` is a step execution (not, say, an event).
 * @example if (isExecution(entry)) return entry;
 */
export function isExecution(value: unknown): value is StepExecution {
  return value instanceof Execution;
}

/**
 * Every field set in the class, so that all executions share one shape. A class, not an object
 * literal: V8 tracks where each literal is made, and a fan-out queues thousands of executions
 * that outlive a scavenge, so it allocated them straight in the old generation ("pretenured")
 * from then on, for every run. That made their allocation 22% of a warm fan-out's CPU profile
 * and left them for full GCs to free; V8 makes that decision for a literal's allocation site,
 * not for `new` of a class.
 */
class Execution implements StepExecution {
  readonly kind = "execute";
  attempt = 0;
  waits = 0;
  ended = false;
  retried = false;
  taken: CollectTaken[] | undefined = undefined;
  waited: StepExecution["waited"] = undefined;
  previous: StepExecution | undefined = undefined;
  next: StepExecution | undefined = undefined;
  constructor(
    readonly slot: StepSlot,
    readonly event: Event,
    readonly id: number | string,
    public once: StepExecution["once"],
  ) {}
}

/**
 * `execution` takes a worker of its step and begins its first attempt.
 * @example startExecution(slot, newExecution(slot, event, ++state.executions, undefined));
 */
export function startExecution(slot: StepSlot, execution: StepExecution): void {
  execution.attempt = 1;
  slot.inFlight.add(execution);
  slot.busy++;
}

/**
 * `execution` ends (returned, or failed for good): it leaves its step's executions and gives its worker back.
 * @example finishExecution(execution);
 */
export function finishExecution(execution: StepExecution): void {
  const slot = execution.slot;
  slot.inFlight.delete(execution);
  execution.ended = true;
  // An execution that ends with a wait still pending (not awaited) gave its worker back already.
  if (execution.waits === 0) slot.busy--;
}

/**
 * Whether the run has ended (succeeded or failed).
 * @example if (ended(state)) return;
 */
export function ended(state: RunState): boolean {
  return state.phase === "succeeded" || state.phase === "failed";
}

/**
 * Names of the steps executing right now.
 * @example activeSteps(state) // ["search"]
 */
export function activeSteps(state: RunState): string[] {
  return state.slots.filter((s) => s.inFlight.size > 0).map((s) => s.step.name);
}

/**
 * Whether the run is idle: running, with no step execution queued, executing or about to
 * continue, so that only an event from outside can move it on (Python's `_check_idle_state`).
 * A step waiting in `waitForEvent` holds no worker, so it does not count as executing.
 * @example if (idle(state)) console.log("waiting for input");
 */
export function idle(state: RunState): boolean {
  if (state.phase !== "running") return false;
  for (const slot of state.slots) if (slot.busy > 0 || slot.queue?.size || slot.resumes?.size) return false;
  return true;
}

/**
 * Whether any step execution has started and not finished.
 * @example if (anyStepExecuting(state)) controller.abort();
 */
export function anyStepExecuting(state: RunState): boolean {
  for (const slot of state.slots) if (slot.inFlight.size > 0) return true;
  return false;
}
