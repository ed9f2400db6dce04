/**
 * The context of a workflow: a store that outlives runs (memory across turns) and, while a
 * run is in progress, the run's operations (send, stream, collect, wait, signal).
 */
import type { Event, EventClass, EventOf } from "./event.ts";
import { eventTypeName, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent } from "./event.ts";
import { ContextStateError, WorkflowRuntimeError } from "./errors.ts";
import type { RestoredRun, Run, SavedRun, StepExecution } from "./run.ts";
import { encodeRun } from "./run.ts";
import { ContextSerdeError, decodeEvent, decodeValue, encodeValue } from "./serialize.ts";
import type { Json, SavedEvent } from "./serialize.ts";
import { ContextStore } from "./store.ts";
import type { StateSchema } from "./store.ts";
import { badTimeout } from "./timers.ts";
import type { AnyWorkflow } from "./workflow.ts";

/** Options of {@link Context.waitForEvent}. */
export interface WaitForEventOptions<E extends Event> {
  /** Fields the awaited event must have (compared with `===`). */
  readonly requirements?: Partial<Record<keyof E & string, unknown>>;
  /** Seconds to wait before failing with `WorkflowTimeoutError`. */
  readonly timeout?: number;
  /**
   * An event written to the stream when the wait begins, typically an `InputRequiredEvent`; not
   * written when a matching event was sent before (the question has its answer already).
   */
  readonly waiterEvent?: Event;
}

const NEVER_ABORTED = new AbortController().signal;

/**
 * The format version `toJSON` writes; `fromJSON` reads this and older. Version 2 keeps
 * `collectEvents` buffers per step (`run.collected[step][bufferId]`).
 */
export const CONTEXT_FORMAT_VERSION = 2;

/** A saved context: plain JSON, safe to store anywhere. */
export interface ContextJSON {
  readonly version: number;
  /** The workflow class it was saved from. */
  readonly workflow: string;
  /** The store, with non-JSON values encoded by their codecs. */
  readonly store: { [key: string]: Json };
  /** Whether a run was in progress: passing the restored context to `run()` continues it. */
  readonly running: boolean;
  readonly run: SavedRun | null;
}

/**
 * @example
 * const ctx = new Context(agent);
 * await agent.run({ input: "Hello! My name is Logan." }, { ctx });
 * await agent.run({ input: "What is my name?" }, { ctx }); // remembers
 */
export class Context<S extends object = Record<string, unknown>> {
  /** The key–value store; typed by `S` when the workflow has a `state` schema (see `Context<S>`). */
  readonly store: ContextStore<S>;
  /**
   * The context the user made. Each run's steps get a view of it bound to that run (same
   * store), so a step left running by a cancelled run still sees its own run's aborted signal
   * and cannot write into the next run on the same context.
   */
  #root: Context<S> = this;
  /** The current or last run; for a run's view, that run. */
  #run: Run | undefined;
  /**
   * A run saved in progress, waiting for `run()` to continue it (kept on the root): restored
   * from JSON, or kept by `cancel()` (`json` then made when `toJSON` asks).
   */
  #saved: { json: SavedRun | undefined; events: RestoredRun; cancelled: boolean } | undefined;
  /** In a step's view: the execution it was given to (which step, which waits). */
  #execution: StepExecution | undefined;

  constructor(
    readonly workflow: AnyWorkflow,
    store?: ContextStore<S>,
  ) {
    // The workflow's state schema, when it has one, checks the state and gives its defaults.
    this.store = store ?? new ContextStore<S>({}, workflow.stateSchema as StateSchema<S> | undefined);
  }

  /** Whether a run is in progress on this context. */
  get running(): boolean {
    return this.#run !== undefined && !this.#run.done;
  }

  /**
   * Aborted when the run times out, is cancelled or fails, and when it finishes while steps are
   * still executing; not when it finishes with nothing left running. Pass it to LLM and tool calls.
   * @example
   * const res = await fetch(url, { signal: ctx.signal }); // closed if the run is cancelled
   */
  get signal(): AbortSignal {
    return this.#run?.signal ?? NEVER_ABORTED;
  }

  /**
   * Sends an event into the running workflow, to every step that accepts it, or to one step.
   * @example
   * ctx.sendEvent(new QueryEvent({ query }), { step: "search" });
   * handler.ctx.sendEvent(new HumanResponseEvent({ response: "yes" })); // from outside
   */
  sendEvent(event: Event, options: { step?: string } = {}): void {
    const run = this.#activeRun("sendEvent");
    if (options.step === undefined) return run.send(event);
    const target = run.graph.steps.get(options.step);
    if (!target) {
      throw new WorkflowRuntimeError(`sendEvent: there is no step named "${options.step}". Steps: ${[...run.graph.steps.keys()].join(", ")}.`);
    }
    if (!target.accepts.includes(event.constructor as EventClass)) {
      throw new WorkflowRuntimeError(`sendEvent: step "${options.step}" does not accept ${eventTypeName(event.constructor as EventClass)}; it accepts ${target.accepts.map(eventTypeName).join(", ")}.`);
    }
    run.send(event, target);
  }

  /**
   * Writes an event to the run's stream, for `handler.streamEvents()` consumers.
   * @example ctx.writeEventToStream(new StreamEvent({ delta }));
   */
  writeEventToStream(event: Event): void {
    this.#activeRun("writeEventToStream").writeToStream(event);
  }

  /**
   * Buffers `event` and returns the events of `types`, in that order, once one of each has
   * arrived; until then `null`. Call it from a step: each step has its own buffers, one per
   * list of types, or per `bufferId` when given. When collecting many events, pass the same
   * array each time (a constant): it is read once, not at every call.
   * @example
   * const ready = ctx.collectEvents(ev, [ResultA, ResultB]);
   * if (!ready) return;
   * const [a, b] = ready;
   */
  collectEvents<const T extends readonly EventClass[]>(event: Event, types: T, options: { readonly bufferId?: string } = {}): { -readonly [K in keyof T]: EventOf<T[K]> } | null {
    const run = this.#activeRun("collectEvents");
    if (!this.#execution) throw new ContextStateError("collectEvents: call it from a step (with the ctx the step was given); it buffers events per step.");
    return run.collect(event, types, this.#execution.slot.step.name, options.bufferId, this.#execution) as { -readonly [K in keyof T]: EventOf<T[K]> } | null;
  }

  /**
   * Waits for an event of `type` (sent by a step or from outside), optionally one whose
   * fields match `requirements`.
   * @example
   * const answer = await ctx.waitForEvent(HumanResponseEvent, {
   *   waiterEvent: new InputRequiredEvent({ prefix: "Fire Lawson? (yes/no)" }),
   * });
   */
  waitForEvent<C extends EventClass>(type: C, options: WaitForEventOptions<EventOf<C>> = {}): Promise<EventOf<C>> {
    const run = this.#activeRun("waitForEvent");
    const problem = options.timeout === undefined ? undefined : badTimeout(`waitForEvent(${eventTypeName(type)}): timeout`, options.timeout, "or leave it out to wait forever");
    if (problem) throw new WorkflowRuntimeError(problem);
    return run.waitFor(type, options.requirements, options.timeout, options.waiterEvent, this.#execution) as Promise<EventOf<C>>;
  }

  /**
   * Saves the context as plain JSON: the store and, if a run is in progress, its pending
   * events. Throws `ContextSerdeError` naming the store key of a value that cannot be saved.
   * @example
   * const saved = JSON.stringify(ctx.toJSON());
   * // … later, in another process:
   * const ctx = Context.fromJSON(agent, saved);
   */
  toJSON(): ContextJSON {
    const store: { [key: string]: Json } = {};
    for (const [key, value] of Object.entries(this.store.entries())) {
      if (value !== undefined) store[key] = encodeValue(value, `store key "${key}"`);
    }
    const root = this.#root;
    const saved = root.#saved;
    if (saved && !saved.json) saved.json = encodeRun(saved.events);
    const run = root.running ? (root.#run as Run).save() : (saved?.json ?? null);
    return { version: CONTEXT_FORMAT_VERSION, workflow: this.workflow.constructor.name, store, running: run !== null, run };
  }

  /**
   * Restores a context saved with `toJSON()` (the object or its JSON text). A context saved
   * during a run continues it at the next `workflow.run(undefined, { ctx })`: steps that were
   * executing run again from their input event; steps that had finished do not.
   * @example
   * const ctx = Context.fromJSON(agent, await fs.readFile("ctx.json", "utf8"));
   * await agent.run({ input: "What is my name?" }, { ctx });
   */
  static fromJSON(workflow: AnyWorkflow, json: ContextJSON | string): Context {
    const data = parseContextJSON(json);
    const where = (what: string) => `Cannot restore the context: ${what}`;
    if (data.workflow !== workflow.constructor.name) {
      throw new ContextSerdeError(where(`it was saved from a ${String(data.workflow)}, not a ${workflow.constructor.name}.`));
    }
    if (Object.hasOwn(data.store, "__proto__")) throw new ContextSerdeError(where('store key "__proto__" cannot be restored (it would replace the store\'s prototype).'));
    const store = decodeValue(data.store, "store") as Record<string, unknown>;
    const ctx = new Context(workflow, new ContextStore(store, workflow.stateSchema as StateSchema<Record<string, unknown>> | undefined));
    if (data.running && data.run) {
      const types = new Map(workflow.graph.eventTypes);
      for (const type of [StartEvent, StopEvent, InputRequiredEvent, HumanResponseEvent] as EventClass[]) if (!types.has(eventTypeName(type))) types.set(eventTypeName(type), type);
      let run = data.run;
      if (data.version <= 1) run = { ...run, collected: collectedByStep(run.collected, workflow, where) };
      if (data.version <= 2) run = withoutRecollected(run);
      const decodeAll = (group: unknown, what: string): Record<string, Event[]> => {
        if (typeof group !== "object" || group === null) throw new ContextSerdeError(where(`run.${what} should be an object.`));
        return Object.fromEntries(
          Object.entries(group).map(([key, list]) => {
            if (!Array.isArray(list)) throw new ContextSerdeError(where(`run.${what}["${key}"] should be a list of events.`));
            return [key, list.map((ev: SavedEvent, i) => decodeEvent(ev, types, `run.${what}["${key}"][${i}]`))];
          }),
        );
      };
      if (!Array.isArray(run.unclaimed)) throw new ContextSerdeError(where("run.unclaimed should be a list of events."));
      const events: RestoredRun = {
        ...(typeof run.runId === "string" && run.runId.length > 0 ? { runId: run.runId } : {}),
        queued: decodeAll(run.queued, "queued"),
        inFlight: decodeAll(run.inFlight, "inFlight"),
        collected: decodeCollected(run.collected, (group, step) => decodeAll(group, `collected["${step}"]`), where),
        // An event sent for a waitForEvent of a class no step names stays encoded until the wait asks for it.
        unclaimed: run.unclaimed.map((ev, i) => (isSavedEvent(ev) && !types.has(ev.type) ? ev : decodeEvent(ev, types, `run.unclaimed[${i}]`))),
      };
      for (const name of [...Object.keys(events.queued), ...Object.keys(events.inFlight), ...Object.keys(events.collected)]) {
        if (!workflow.graph.steps.has(name)) throw new ContextSerdeError(where(`the saved run has events for a step "${name}" that ${workflow.constructor.name} does not have.`));
      }
      ctx.#saved = { json: run, events, cancelled: false };
    }
    return ctx;
  }

  /** @internal The events of the run saved in progress, for the run that continues it. */
  get savedRun(): RestoredRun | undefined {
    return this.#root.#saved?.events;
  }

  /** @internal Forgets the saved run once `run`, still this context's run, has continued it. */
  settleSavedRun(run: Run): void {
    const root = this.#root;
    if (root.#run === run) root.#saved = undefined;
  }

  /** Whether this context holds a run saved in progress that `run()` will continue. */
  get hasSavedRun(): boolean {
    return this.#root.#saved !== undefined;
  }

  /** @internal Whether the saved run is one `cancel()` kept (a new run with input replaces it) rather than one restored from JSON. */
  get savedRunWasCancelled(): boolean {
    return this.#root.#saved?.cancelled === true;
  }

  /** @internal Keeps what `run` (cancelled) had pending, so `toJSON()` saves it and `run(undefined, { ctx })` continues it. */
  keepCancelledRun(run: Run, events: RestoredRun): void {
    const root = this.#root;
    if (root.#run === run) root.#saved = { json: undefined, events, cancelled: true };
  }

  /** @internal Drops a run kept by `cancel()`, for a new run started with input. */
  dropCancelledRun(): void {
    if (this.#root.#saved?.cancelled) this.#root.#saved = undefined;
  }

  /** @internal The view a step execution gets: bound to its run, and to the execution for `collectEvents` and `waitForEvent`. */
  forExecution(execution: StepExecution): Context<S> {
    const view = new Context(this.#root.workflow, this.store);
    view.#root = this.#root;
    view.#run = this.#run;
    view.#execution = execution;
    return view;
  }

  /**
   * @internal Makes `run` this context's run (one at a time) and returns the view of the
   * context that its steps and its handler get.
   */
  attach(run: Run): Context<S> {
    const root = this.#root;
    if (root.running) {
      throw new ContextStateError("This context is already running a workflow. Await the current run (or cancel it) before starting another on the same context.");
    }
    root.#run = run;
    const view = new Context(root.workflow, root.store);
    view.#root = root;
    view.#run = run;
    return view;
  }

  /** @internal The current or last run; in a step, the step's own run. */
  get currentRun(): Run | undefined {
    return this.#run;
  }

  #activeRun(operation: string): Run {
    const run = this.#run;
    if (!run || run.done) {
      throw new ContextStateError(`${operation}: no run is in progress on this context. Call it from a step, or through handler.ctx while the run is going.`);
    }
    return run;
  }
}

/**
 * Format 1 kept one `collectEvents` buffer per list of types for the whole run, `{ [types]:
 * events }`; format 2 keeps them per step, `{ [step]: { [bufferId]: events } }`. Each old buffer
 * goes to the one step that accepts every type it lists (the step that collected it); when
 * several steps could have, it cannot be told.
 */
function collectedByStep(collected: unknown, workflow: AnyWorkflow, where: (what: string) => string): SavedRun["collected"] {
  if (typeof collected !== "object" || collected === null) throw new ContextSerdeError(where("run.collected should be an object."));
  const byStep: Record<string, Record<string, SavedEvent[]>> = {};
  for (const [key, events] of Object.entries(collected)) {
    if (!Array.isArray(events) || events.length === 0) continue;
    const types = key.split("|");
    const steps = [...workflow.graph.steps.values()].filter((s) => types.every((type) => s.accepts.some((accepted) => eventTypeName(accepted) === type)));
    if (steps.length !== 1) {
      throw new ContextSerdeError(
        where(`it holds events collected by collectEvents (${key}) in the format of an older stepflow, which kept one buffer for all steps, and ${steps.length === 0 ? "no step" : `${steps.length} steps (${steps.map((s) => s.name).join(", ")})`} of ${workflow.constructor.name} could have collected them. Finish that run with the version that saved it, or start the run again with a new Context.`),
      );
    }
    (byStep[(steps[0] as { name: string }).name] ??= {})[key] = events as SavedEvent[];
  }
  return byStep;
}

/** `run.collected`: `{ [step]: { [bufferId]: events } }`. */
function decodeCollected(group: unknown, decodeStep: (buffers: unknown, step: string) => Record<string, Event[]>, where: (what: string) => string): Record<string, Record<string, Event[]>> {
  if (typeof group !== "object" || group === null) throw new ContextSerdeError(where("run.collected should be an object."));
  return Object.fromEntries(Object.entries(group).map(([step, buffers]) => [step, decodeStep(buffers, step)]));
}

/**
 * Formats 1 and 2 saved a step's event both as in flight and in the step's collect buffer when
 * the step had collected it and not yet returned; run again after restore, the step collected
 * it a second time. One copy per in-flight event leaves the buffer.
 */
function withoutRecollected(run: SavedRun): SavedRun {
  if (typeof run.collected !== "object" || run.collected === null || typeof run.inFlight !== "object" || run.inFlight === null) return run;
  const collected: Record<string, unknown> = { ...run.collected };
  for (const [step, events] of Object.entries(run.inFlight)) {
    const buffers = collected[step];
    if (!Array.isArray(events) || typeof buffers !== "object" || buffers === null || Array.isArray(buffers)) continue;
    const copy: Record<string, unknown> = { ...buffers };
    for (const event of events) {
      const text = JSON.stringify(event);
      for (const [id, list] of Object.entries(copy)) {
        if (!Array.isArray(list)) continue;
        const at = list.findIndex((saved) => JSON.stringify(saved) === text);
        if (at >= 0) {
          copy[id] = list.filter((_, i) => i !== at);
          break;
        }
      }
    }
    collected[step] = copy;
  }
  return { ...run, collected: collected as SavedRun["collected"] };
}

function isSavedEvent(value: unknown): value is SavedEvent {
  return typeof value === "object" && value !== null && typeof (value as SavedEvent).type === "string" && "data" in value;
}

function parseContextJSON(json: ContextJSON | string): ContextJSON {
  let data: unknown = json;
  if (typeof json === "string") {
    try {
      data = JSON.parse(json);
    } catch (error) {
      throw new ContextSerdeError(`Cannot restore the context: the saved text is not valid JSON (${(error as Error).message}).`);
    }
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new ContextSerdeError(`Cannot restore the context: expected the object ctx.toJSON() returns, got ${Array.isArray(data) ? "an array" : data === null ? "null" : typeof data}.`);
  }
  const record = data as Record<string, unknown>;
  if (typeof record.version !== "number") throw new ContextSerdeError(`Cannot restore the context: "version" is missing; this is not a saved stepflow context.`);
  if (record.version > CONTEXT_FORMAT_VERSION) {
    throw new ContextSerdeError(`Cannot restore the context: it was saved in format version ${record.version} by a newer stepflow; this one reads up to version ${CONTEXT_FORMAT_VERSION}. Upgrade stepflow.`);
  }
  if (typeof record.store !== "object" || record.store === null || Array.isArray(record.store)) throw new ContextSerdeError(`Cannot restore the context: "store" should be an object.`);
  if (record.running === true && (typeof record.run !== "object" || record.run === null)) throw new ContextSerdeError(`Cannot restore the context: "running" is true but "run" is missing.`);
  return record as unknown as ContextJSON;
}
