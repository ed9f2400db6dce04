/**
 * The context of a workflow: a store that outlives runs (memory across turns) and, while a
 * run is in progress, the run's operations (send, stream, collect, wait, signal).
 */
import type { Event, EventClass, ReceivedEvent } from "./event.ts";
import { eventTypeName } from "./event.ts";
import { ConfigurationError, ContextStateError, WorkflowRuntimeError } from "./errors.ts";
import type { Run, StepExecution } from "./run.ts";
import { restoreRun } from "./saved-run.ts";
import { attachRun, beginAttempt, contextRoot, executionView, retireView, runOfContext } from "./context-engine.ts";
import { AttemptSignal, attemptStore } from "./timed-attempt.ts";
import { ContextRoot } from "./context-root.ts";
import { readContextJSON, CONTEXT_FORMAT_VERSION } from "./context-format.ts";
import type { ContextJSON } from "./context-format.ts";
import { ContextSerdeError, decodeValue, encodeValue } from "./serialize.ts";
import type { Json } from "./serialize.ts";
import { ContextStore } from "./store.ts";
import type { StateSchema } from "./store.ts";
import { checkTimeout } from "./timers.ts";
import { collect, collectCount } from "./collect-events.ts";
import { journalOf } from "./journal/context-journal.ts";
import type { OnceOptions, OnceResult } from "./step-once.ts";
import type { AnyWorkflow } from "./workflow.ts";

/** Options of {@link Context.waitForEvent}. */
/** What `ctx.stepExecution` tells a step about the execution it is in. @example `const info: StepExecutionInfo = { stepName: "fetch", attempt: 2, executionId: "1f0c2a9b.3", previousError: new Error("503") };` */
export interface StepExecutionInfo {
  readonly stepName: string;
  /** 1 for the first attempt, 2 for the first retry, … */
  readonly attempt: number;
  /** The execution's id: the same in every attempt, and in a run restored from a save. */
  readonly executionId: string;
  /** What the previous attempt threw; `undefined` on the first. */
  readonly previousError: unknown;
}

export interface WaitForEventOptions<E extends Event> {
  /** Fields the awaited event must have, each a value of its field's type (arrays and plain objects compared by content). */
  readonly requirements?: { readonly [K in keyof E & string]?: E[K] };
  /** Seconds to wait before failing with `WorkflowTimeoutError`. */
  readonly timeout?: number;
  /**
   * An event written to the stream when the wait begins, typically an `InputRequiredEvent`; not
   * written when a matching event was sent before (the question has its answer already).
   */
  readonly waiterEvent?: Event;
}

export { CONTEXT_FORMAT_VERSION } from "./context-format.ts";
export type { ContextJSON } from "./context-format.ts";

const NEVER_ABORTED = new AbortController().signal;

/**
 * The context of a workflow, by role (docs/architecture.md, "Context by role"):
 * - the context you make (`new Context(workflow)`, or `Context.fromJSON` in a restoring
 *   process) holds the store and, when restored mid-run, the run the next `run()` continues;
 * - `handler.ctx`, the caller's view of one run, sends events in and saves the run;
 * - each step execution gets a view of its own that also collects, waits and records `once`.
 *
 * Views share the store; each is bound to its run, so a step left running by a cancelled run
 * cannot write into the next run on the same context.
 * @example
 * const ctx = new Context(agent);
 * await agent.run({ input: "Hello! My name is Logan." }, { ctx });
 * await agent.run({ input: "What is my name?" }, { ctx }); // remembers
 */
export class Context<S extends object = Record<string, unknown>> {
  /** The key–value store; typed by `S` when the workflow has a `state` schema (see `Context<S>`). */
  readonly store: ContextStore<S>;
  /**
   * What the context the user made holds across runs (its current run, a run saved in it),
   * shared by the views of it that each run's handler and steps get.
   */
  #rootMade: ContextRoot | undefined;
  /** A view's run; `undefined` on the context the user made, whose run is its root's. */
  #boundRun: Run | undefined;
  /** In a step's view: the execution it was given to (which step, which waits). */
  #execution: StepExecution | undefined;
  /** In a step's view: why the engine gave up on the attempt that holds it, which runs on unseen. */
  #retired: string | undefined;
  /** In the view of a step with a timeout: the attempt under way, whose `signal` is its own. */
  #attempt: AttemptSignal | undefined;

  constructor(
    readonly workflow: AnyWorkflow,
    store?: ContextStore<S>,
  ) {
    // The workflow's state schema, when it has one, checks the state and gives its defaults.
    this.store = store ?? new ContextStore<S>({}, workflow.stateSchema as StateSchema<S> | undefined);
  }

  /**
   * Made on first use: a view is given its context's, and would waste one made in the constructor. A
   * method, as is `#runOf`: V8 (Node 20) reads a private getter through a runtime call, never inlined.
   */
  #rootOf(): ContextRoot {
    return (this.#rootMade ??= new ContextRoot(this.workflow));
  }

  /** The current or last run; for a run's view, that run. */
  #runOf(): Run | undefined {
    return this.#boundRun ?? this.#rootOf().run;
  }

  /** Whether a run is in progress on this context. */
  get running(): boolean {
    const run = this.#runOf();
    return run !== undefined && !run.done;
  }

  /**
   * Aborted when the run times out, is cancelled or fails, and when it finishes while steps are
   * still executing; not when it finishes with nothing left running. Pass it to LLM and tool calls.
   * In a step with a `timeout`, each attempt has its own, also aborted (with the step's
   * `WorkflowTimeoutError` as its `reason`) when that attempt times out.
   * @example
   * const res = await fetch(url, { signal: ctx.signal }); // closed if the run is cancelled
   */
  get signal(): AbortSignal {
    if (this.#attempt !== undefined) return this.#attempt.signal;
    return this.#runOf()?.signal ?? NEVER_ABORTED;
  }

  /**
   * Sends an event into the running workflow, to every step that accepts it, or to one step.
   * @example
   * ctx.sendEvent(new QueryEvent({ query }), { step: "search" });
   * handler.ctx.sendEvent(new HumanResponseEvent({ response: "yes" })); // from outside
   */
  sendEvent(event: Event, options?: { step?: string }): void {
    const run = this.#activeRun("sendEvent");
    // A context that is not a step's is the caller's: what it sends comes from outside the run (no sender).
    // No `= {}` default: an object per event sent, on the fan-out's hot path.
    if (options?.step === undefined) return run.send(event, undefined, this.#execution);
    const target = run.graph.steps.get(options.step);
    if (!target) {
      throw new WorkflowRuntimeError(`sendEvent: there is no step named "${options.step}". Steps: ${[...run.graph.steps.keys()].join(", ")}.`);
    }
    if (!target.accepts.includes(event.constructor as EventClass)) {
      throw new WorkflowRuntimeError(
        `sendEvent: step "${options.step}" does not accept ${eventTypeName(event.constructor as EventClass)}; it accepts ${target.accepts.map(eventTypeName).join(", ")}.`,
      );
    }
    run.send(event, target, this.#execution);
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
   * list of types, or per `bufferId` when given. To collect `n` events of one class, pass the
   * class and `{ count: n }`: the same as `Array(n).fill(Done)` (the same buffer too), at
   * constant cost per call; a list is read whole at each call unless it is the same array.
   * @example
   * const ready = ctx.collectEvents(ev, [ResultA, ResultB]);
   * if (!ready) return;
   * const [a, b] = ready;
   * const pages = ctx.collectEvents(ev, Fetched, { count: urls.length }); // Fetched[] | null
   */
  collectEvents<const T extends readonly EventClass[]>(
    event: Event,
    types: T,
    options?: { readonly bufferId?: string },
  ): { -readonly [K in keyof T]: ReceivedEvent<T[K]> } | null;
  collectEvents<C extends EventClass>(event: Event, type: C, options: { readonly count: number; readonly bufferId?: string }): ReceivedEvent<C>[] | null;
  collectEvents(event: Event, types: readonly EventClass[] | EventClass, options?: { readonly bufferId?: string; readonly count?: number }): Event[] | null {
    const run = this.#activeRun("collectEvents");
    if (!this.#execution) throw new ContextStateError("collectEvents: call it from a step (with the ctx the step was given); it buffers events per step.");
    if (typeof types !== "function") return collect(run.state, this.#execution, event, types, options?.bufferId);
    const count = options?.count;
    if (typeof count !== "number" || !Number.isInteger(count) || count < 0) {
      throw new ConfigurationError(
        `collectEvents(ev, ${eventTypeName(types)}, { count }): count must be a whole number ≥ 0, got ${String(count)}. Pass how many ${eventTypeName(types)} events to wait for, or a list of classes instead of one class.`,
        "count",
        count,
      );
    }
    return collectCount(run.state, this.#execution, event, types, count, options?.bufferId);
  }

  /**
   * Waits for an event of `type` (sent by a step or from outside), optionally one whose
   * fields match `requirements`.
   * @example
   * const answer = await ctx.waitForEvent(HumanResponseEvent, {
   *   waiterEvent: new InputRequiredEvent({ prefix: "Fire Lawson? (yes/no)" }),
   * });
   */
  waitForEvent<C extends EventClass>(type: C, options: WaitForEventOptions<ReceivedEvent<C>> = {}): Promise<ReceivedEvent<C>> {
    const run = this.#activeRun("waitForEvent");
    if (options.timeout !== undefined)
      checkTimeout(options.timeout, "timeout", "or leave it out to wait forever", `waitForEvent(${eventTypeName(type)}): timeout`);
    return run.waitFor(type, options.requirements, options.timeout, options.waiterEvent, this.#execution) as Promise<ReceivedEvent<C>>;
  }

  /**
   * Does `work` (a side effect: a payment, an e-mail, a tool call) at most once for this step
   * execution, however often the run is saved, restored and resumed, and returns what happened:
   * - `{ status: "ran", value }`: it ran now;
   * - `{ status: "recorded", value }`: it ran before (an earlier attempt at this execution, or
   *   an earlier call with this name in it), and this is its result;
   * - `{ status: "unknown" }`: an earlier attempt started it and recorded no result (the process
   *   stopped, or the context was saved while it ran), so it may or may not have taken effect;
   *   it is not run again unless `options.rerunUnfinished` says it is safe to.
   *
   * `name` only has to be unique within the step: the engine scopes it to the run and to this
   * execution of the step, which a restored run continues under the same id. The result must
   * be JSON (or a value with a codec): it is saved with the context by `ctx.toJSON()`, so a
   * restored context finds it without any database. When the context has a journal
   * (`useJournal(ctx, journal)`; `Sessions` gives its store's), the work is claimed there first,
   * so two resumes of the same saved run, in two processes, never both do it. A `work` that
   * throws stays started (it may have taken effect), and the error is thrown on; a retry of the
   * step then gets `unknown`.
   * @example
   * @step({ accepts: [OrderEvent], emits: [StopEvent] })
   * async charge(ctx: Context, ev: OrderEvent) {
   *   const charge = await ctx.once("charge", () => payments.charge(ev.order));
   *   if (charge.status === "unknown") return new StopEvent({ result: "Check the charge by hand." });
   *   return new StopEvent({ result: charge.value.id });
   * }
   */
  once<T>(
    name: string,
    work: () => T | Promise<T>,
    options: OnceOptions & { readonly rerunUnfinished: true },
  ): Promise<Exclude<OnceResult<T>, { readonly status: "unknown" }>>;
  once<T>(name: string, work: () => T | Promise<T>, options?: OnceOptions): Promise<OnceResult<T>>;
  once<T>(name: string, work: () => T | Promise<T>, options?: OnceOptions): Promise<OnceResult<T>> {
    const run = this.#activeRun("once");
    const execution = this.#execution;
    if (!execution)
      return Promise.reject(
        new ContextStateError(`ctx.once("${String(name)}"): call it from a step, with the ctx the step was given; it records work per step execution.`),
      );
    return run.once(execution, name, work, options, journalOf(this));
  }

  /**
   * The step execution this `ctx` was given to (Python Workflows' step context): its step's
   * name, the attempt under way (1 for the first, as the step's retry policy counts), the
   * execution's id (kept by a run restored from a save, as its `ctx.once` records are), and
   * what the previous attempt threw (`undefined` on the first). `undefined` outside a step.
   * @example
   * const { attempt, previousError } = ctx.stepExecution!;
   * if (attempt > 1) log.warn(`retrying after ${String(previousError)}`);
   */
  get stepExecution(): StepExecutionInfo | undefined {
    const execution = this.#execution;
    const run = this.#runOf();
    if (!execution || !run) return undefined;
    const attempt = Math.max(execution.attempt, 1);
    return {
      stepName: execution.slot.step.name,
      attempt,
      executionId: run.executionIdOf(execution),
      previousError: attempt > 1 ? execution.lastError : undefined,
    };
  }

  /**
   * The id of the current (or last) run on this context: stable for the run, and kept by a run
   * restored from a context saved during it. `undefined` before the first run.
   * @example
   * log.info("charging", { runId: ctx.runId });
   */
  get runId(): string | undefined {
    return this.#runOf()?.id;
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
    const entries = this.store.entries();
    // Keys, not Object.entries: a pair array per key is garbage at every save.
    for (const key of Object.keys(entries)) {
      const value = entries[key];
      if (value !== undefined) store[key] = encodeValue(value, `store key "${key}"`, this.workflow.codecs);
    }
    const root = this.#rootOf();
    const run = root.running ? (root.run as Run).save() : (root.savedJSON(this.workflow.codecs) ?? null);
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
    const graph = workflow.graph;
    const data = readContextJSON(json, {
      name: workflow.constructor.name,
      steps: [...graph.steps.values()].map((s) => ({ name: s.name, accepts: s.accepts.map(eventTypeName) })),
    });
    if (data.workflow !== workflow.constructor.name) {
      const why = `it was saved from workflow ${data.workflow}, not ${workflow.constructor.name}`;
      const fix = "Restore it with the workflow it was saved from, or start with a new Context.";
      throw new ContextSerdeError(`Cannot restore the context: ${why}. ${fix}`, { path: "workflow" });
    }
    const store = decodeValue(data.store, "store", workflow.codecs) as Record<string, unknown>;
    const ctx = new Context(workflow, new ContextStore(store, workflow.stateSchema as StateSchema<Record<string, unknown>> | undefined));
    if (data.run) ctx.#rootOf().restore(data.run, restoreRun(data.run, workflow));
    return ctx;
  }

  /** Whether this context holds a run saved in progress that `run()` will continue. */
  get hasSavedRun(): boolean {
    return this.#rootOf().hasSavedRun;
  }

  /** For the engine (context-engine.ts): the run this context belongs to (its current or last run; in a step, the step's run). */
  [runOfContext](): Run | undefined {
    return this.#runOf();
  }

  /** For the engine: what this context holds across runs (a run saved in it, its current run). */
  get [contextRoot](): ContextRoot {
    return this.#rootOf();
  }

  /**
   * For the engine: makes `run` this context's run (one at a time) and returns the view of the
   * context that its handler gets.
   */
  [attachRun](run: Run): Context<S> {
    const root = this.#rootOf();
    root.attach(run);
    const view = new Context(root.workflow, this.store);
    view.#rootMade = root;
    view.#boundRun = run;
    return view;
  }

  /** For the engine: the view a step execution gets, bound to this view's run and to the execution (for `collectEvents`, `waitForEvent`, `once`). */
  [executionView](execution: StepExecution): Context<S> {
    const root = this.#rootOf();
    // Only a step with a timeout can be given up on while it runs: only its views refuse store writes then.
    const view = execution.slot.step.timeout === null ? new Context(root.workflow, this.store) : Context.#timedView(root.workflow, this.store);
    view.#rootMade = root;
    view.#boundRun = this.#boundRun ?? root.run;
    view.#execution = execution;
    return view;
  }

  /**
   * A view whose store refuses writes once it is retired. A method of its own: the closure here,
   * in `[executionView]`, made every step execution allocate its variables' context.
   */
  static #timedView<S extends object>(workflow: AnyWorkflow, store: ContextStore<S>): Context<S> {
    const view: Context<S> = new Context(
      workflow,
      attemptStore(store, (operation) => view.#refusal(operation)),
    );
    return view;
  }

  /** For the engine: see {@link retireView}. */
  [retireView](why?: string): boolean {
    if (why !== undefined) this.#retired ??= why;
    return this.#retired !== undefined;
  }

  /** For the engine: see {@link beginAttempt}. */
  [beginAttempt](): AttemptSignal {
    return (this.#attempt = new AttemptSignal((this.#runOf() as Run).aborts));
  }

  /** Why `operation` is refused to this view, if it is: the attempt holding it was given up on. */
  #refusal(operation: string): ContextStateError | undefined {
    // Python cancels a step's task when it gives up on it; a promise cannot be, so what it does is refused.
    return this.#retired === undefined ? undefined : new ContextStateError(`${operation}: ${this.#retired}`);
  }

  #activeRun(operation: string): Run {
    if (this.#retired !== undefined) throw this.#refusal(operation);
    const run = this.#runOf();
    if (!run || run.done) {
      throw new ContextStateError(`${operation}: no run is in progress on this context. Call it from a step, or through handler.ctx while the run is going.`);
    }
    return run;
  }
}
