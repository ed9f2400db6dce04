/**
 * `Workflow`: a class whose `@step` methods (or `addStep` handlers) form an event graph, and
 * `run()` that starts one run of it.
 */
import { Context } from "./context.ts";
import { contextRoot } from "./context-engine.ts";
import { isEvent } from "./event.ts";
import type { Event, EventClass, StartEvent } from "./event.ts";
import { ConfigurationError, ContextStateError, WorkflowRuntimeError } from "./errors.ts";
import { buildGraph, toMermaid } from "./graph.ts";
import type { WorkflowGraph } from "./graph.ts";
import { WorkflowHandler } from "./handler.ts";
import { Run } from "./run.ts";
import { decoratedSteps, defineStep } from "./step.ts";
import { checkTimeout } from "./timers.ts";
import type { StepConfig, StepDefinition, StepFunction, StepHandler } from "./step.ts";
import type { StateSchema } from "./store.ts";
import type { ResourceMap } from "./resource.ts";
import type { FromOutside } from "./outside-events.ts";
import { Codecs } from "./serialize.ts";
import type { Codec } from "./serialize.ts";
import { sharedTimeSlices } from "./time-slices.ts";
import type { TimeSlices } from "./time-slices.ts";
import { sharedRunObservers } from "./observer.ts";
import type { RunObservers } from "./observer.ts";

/** Options of a workflow. */
export interface WorkflowOptions {
  /** Seconds before a run fails with `WorkflowTimeoutError`; `null` turns it off. Default 45. */
  readonly timeout?: number | null;
  /** Log each step start and the event it produced. */
  readonly verbose?: boolean;
  /** Where verbose lines go. Default `console.log`. */
  readonly log?: (line: string) => void;
  /**
   * Check the graph before the first run (default `true`). `false` skips the checks a run can
   * do without (events nobody accepts or emits, unreachable and dead-end steps, StopEvent
   * types), for workflows whose steps send events the declarations do not show; one
   * StartEvent type and distinct event type names are still required. `validate()` runs every check.
   */
  readonly validate?: boolean;
  /**
   * A schema for the context's state (a zod object): every new context of this workflow starts
   * with its defaults, and `ctx.store.set`/`edit` are checked against it. Annotate steps'
   * contexts as `Context<z.infer<typeof Schema>>` for typed `get`, `set` and `edit`.
   */
  readonly state?: StateSchema<object>;
  /**
   * How many runs of this workflow instance may be in progress at once; runs started over
   * the limit wait their turn, in order (their timeout starts when they start). Default: no limit.
   */
  readonly numConcurrentRuns?: number;
  /**
   * How `ctx.toJSON()` saves, and `Context.fromJSON()` restores, values of this workflow's
   * contexts that are not JSON (store values, event fields, `ctx.once` results), by a name saved
   * with each value: keep the names stable. `Date` is built in.
   * @example
   * new Shop({ codecs: { Money: { test: (v) => v instanceof Money, encode: (m) => m.cents, decode: (c) => new Money(c as number) } } });
   */
  readonly codecs?: Readonly<Record<string, Codec>>;
  /**
   * Who follows this workflow's runs, step attempts, LLM and tool calls (tracing, metrics).
   * Default: `sharedRunObservers`, which `addRunObserver` and `stepflow/otel`'s `instrument()`
   * fill for the whole process. A workflow given a set of its own follows only that set.
   * @example
   * const observers = new RunObservers([myObserver]);
   * new Shop({ observers });
   */
  readonly observers?: RunObservers;
  /**
   * The scheduler whose time slices this workflow's step executions (and `Sessions` loads and
   * saves of it) start in, so that many runs at once leave the event loop to timers and I/O.
   * Default: `sharedTimeSlices`, shared by every workflow of the process (the event loop is
   * the process's): give a workflow its own only when its runs need not make way for others.
   * @example new Shop({ timeSlices: new TimeSlices() });
   */
  readonly timeSlices?: TimeSlices;
}

/** Options of one run. */
export interface RunOptions {
  /** The context to run on; passing the same one again keeps its store. Default: a fresh one. */
  readonly ctx?: Context;
  /** Overrides the workflow's timeout for this run (seconds, or `null` for none). */
  readonly timeout?: number | null;
  /** Cancels the run when aborted (e.g. the HTTP request went away). */
  readonly signal?: AbortSignal;
  /**
   * Write lifecycle events to the stream: `RunStartedEvent` first, a `StepStateChangedEvent`
   * as each step execution starts, finishes or fails, and `RunEndedEvent` last, saying whether
   * the run succeeded, failed, timed out or was cancelled. Default `false`.
   */
  readonly lifecycleEvents?: boolean;
}

/** Any workflow, whatever its input and result types. */
export type AnyWorkflow = Workflow<object, unknown>;

/**
 * @example
 * class Joke extends Event<{ topic: string }> {}
 * class JokeFlow extends Workflow<{ topic: string }, string> {
 *   @step({ accepts: [StartEvent], emits: [Joke] })
 *   async start(_ctx: Context, ev: StartEvent<{ topic: string }>) { return new Joke({ topic: ev.topic }); }
 *   @step({ accepts: [Joke], emits: [StopEvent] })
 *   async tell(_ctx: Context, ev: Joke) { return new StopEvent({ result: `A joke about ${ev.topic}` }); }
 * }
 * await new JokeFlow().run({ topic: "cats" }); // "A joke about cats"
 */
export class Workflow<TInput extends object = Record<string, unknown>, TResult = unknown> {
  /**
   * Events a run accepts from outside (a server's clients) besides the `HumanResponseEvent`s
   * its steps name, and the event that answers its approval questions. Anything else a client
   * sends is refused: see `eventsFromOutside`.
   */
  static readonly fromOutside: FromOutside = {};
  readonly timeout: number | null;
  readonly verbose: boolean;
  readonly #log: (line: string) => void;
  readonly #addedSteps: StepDefinition[] = [];
  readonly #validate: boolean;
  #graph: WorkflowGraph | undefined;
  /** The schema of the state of this workflow's contexts, from `options.state`. */
  readonly stateSchema: StateSchema<object> | undefined;
  /** The codecs of this workflow's contexts: `options.codecs`, then `Date`, then any registered process-wide. */
  readonly codecs: Codecs;
  /** Who follows this workflow's runs: `options.observers`, else `sharedRunObservers`. */
  readonly observers: RunObservers;
  /** The scheduler this workflow's runs start their step executions in: `options.timeSlices`, else `sharedTimeSlices`. */
  readonly timeSlices: TimeSlices;
  readonly #maxRuns: number;
  #activeRuns = 0;
  /** Starts of runs waiting for a free place (FIFO), when `numConcurrentRuns` is set. */
  readonly #waitingRuns: (() => void)[] = [];

  constructor(options: WorkflowOptions = {}) {
    const timeout = options.timeout === undefined ? 45 : options.timeout;
    if (timeout !== null) checkTimeout(timeout, "timeout", "or null for none");
    this.timeout = timeout;
    this.verbose = options.verbose ?? false;
    this.#log = options.log ?? ((line) => console.log(line));
    this.#validate = options.validate ?? true;
    this.stateSchema = options.state;
    const limit = options.numConcurrentRuns;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) {
      throw new ConfigurationError(
        `numConcurrentRuns must be a whole number ≥ 1 (or left out for no limit), got ${String(limit)}.`,
        "numConcurrentRuns",
        limit,
      );
    }
    this.#maxRuns = limit ?? Infinity;
    this.codecs = new Codecs(checkCodecs(options.codecs));
    this.observers = options.observers ?? sharedRunObservers;
    this.timeSlices = options.timeSlices ?? sharedTimeSlices;
  }

  /**
   * Adds a step without decorators (for plain JavaScript). Call before the first run.
   * @example
   * const flow = new Workflow<{ n: number }, number>();
   * flow.addStep("double", { accepts: [StartEvent], emits: [StopEvent] },
   *   async (_ctx, ev: StartEvent<{ n: number }>) => new StopEvent({ result: ev.n * 2 }));
   */
  addStep<const A extends readonly EventClass[], const E extends readonly EventClass[], const R extends ResourceMap = {}>(
    name: string,
    config: StepConfig<A, E, R>,
    handler: StepFunction<A, E, R, TResult>,
  ): this {
    if (this.#graph)
      throw new WorkflowRuntimeError(
        `addStep("${name}"): steps must be added before the workflow's graph is built (by the first run(), toMermaid() or graph).`,
      );
    if (this.#addedSteps.some((s) => s.name === name) || decoratedSteps(this).some((s) => s.name === name)) {
      throw new WorkflowRuntimeError(`addStep: a step named "${name}" already exists. Give the new step another name.`);
    }
    this.#addedSteps.push(defineStep(name, config, handler as StepHandler));
    return this;
  }

  /**
   * Writes a line to the verbose log; does nothing unless `verbose`. For steps' own trace.
   * @example this.trace(`Invoking: \`${call.name}\` with \`${JSON.stringify(call.input)}\``);
   */
  protected trace(line: string): void {
    if (this.verbose) this.#log(line);
  }

  /** The event classes this workflow's class declares it accepts from outside (no step need emit them). */
  #fromOutside(): readonly EventClass[] {
    return (this.constructor as typeof Workflow).fromOutside?.events ?? [];
  }

  /** The validated graph (built at the first run). Throws `WorkflowValidationError`. */
  get graph(): WorkflowGraph {
    this.#graph ??= buildGraph(this.constructor.name, [...decoratedSteps(this), ...this.#addedSteps], {
      validate: this.#validate,
      fromOutside: this.#fromOutside(),
    });
    return this.#graph;
  }

  /**
   * Runs every graph check, even on a workflow created with `{ validate: false }`: returns
   * normally, or throws the `WorkflowValidationError` listing each problem.
   * @example
   * const flow = new DynamicFlow({ validate: false });
   * try { flow.validate(); } catch (e) { console.log((e as Error).message); } // what the checks would say
   */
  validate(): void {
    buildGraph(this.constructor.name, [...decoratedSteps(this), ...this.#addedSteps], { fromOutside: this.#fromOutside() });
  }

  /** The workflow as a Mermaid flowchart. @example console.log(agent.toMermaid()) */
  toMermaid(): string {
    return toMermaid(this.graph);
  }

  /**
   * Starts a run with the StartEvent's fields (or a StartEvent). Await the handler for the
   * result, or iterate `handler.streamEvents()`.
   * @example
   * const result = await flow.run({ topic: "cats" }, { timeout: 10 });
   */
  run(input: TInput | StartEvent<TInput> | undefined, options: RunOptions = {}): WorkflowHandler<TResult> {
    const graph = this.graph;
    const ctx = options.ctx ?? new Context(this);
    // A run kept by cancel() is continued by run(undefined, { ctx }); a new question starts over, as before the cancel.
    if (input !== undefined) ctx[contextRoot].dropCancelledRun();
    if (ctx.hasSavedRun && input !== undefined) {
      throw new ContextStateError(
        "This context was saved in the middle of a run. Continue it with workflow.run(undefined, { ctx }), or start over with a new Context.",
      );
    }
    if (!ctx.hasSavedRun && input === undefined) {
      throw new WorkflowRuntimeError(
        `run() needs the StartEvent's fields, like run({ input: "Hello!" }); only a context saved mid-run continues without them.`,
      );
    }
    if (ctx.workflow !== this && ctx.workflow.constructor !== this.constructor) {
      throw new ContextStateError(
        `This context belongs to a ${ctx.workflow.constructor.name}, not a ${this.constructor.name}. Create it with new Context(workflow).`,
      );
    }
    const timeout = options.timeout === undefined ? this.timeout : options.timeout;
    if (options.timeout != null) checkTimeout(options.timeout, "timeout", "or null for none", "run({ timeout })");
    const first = ctx.hasSavedRun ? undefined : toStartEvent(graph.startEvent, input as TInput | StartEvent<TInput>);
    const run = new Run(ctx, graph, {
      workflowName: this.constructor.name,
      timeout,
      log: this.verbose ? this.#log : undefined,
      lifecycleEvents: options.lifecycleEvents === true,
      observers: this.observers,
      timeSlices: this.timeSlices,
    });
    const handler = new WorkflowHandler<TResult>(run);
    if (options.signal) cancelOnAbort(run, options.signal);
    // No closure in this method: it would cost every run the context of the variables it captures.
    if (this.#maxRuns === Infinity) schedule(run, ctx, first);
    else this.#admit(run, ctx, first);
    return handler;
  }

  /** Starts `run` now if fewer than `numConcurrentRuns` are in progress, else when one ends. */
  #admit(run: Run, ctx: Context, first: Event | undefined): void {
    let admitted = false;
    const enter = () => {
      admitted = true;
      this.#activeRuns++;
      schedule(run, ctx, first);
    };
    void run.result.then(() => {
      if (!admitted) return; // cancelled while waiting: it held no place
      this.#activeRuns--;
      const next = this.#waitingRuns.shift();
      next?.();
    });
    if (this.#activeRuns < this.#maxRuns) return enter();
    // A run cancelled while waiting has ended already: it is skipped when its turn comes.
    this.#waitingRuns.push(() => (run.done ? this.#waitingRuns.shift()?.() : enter()));
  }
}

/** Cancels `run` when `signal` aborts (at once if it has). */
function cancelOnAbort(run: Run, signal: AbortSignal): void {
  if (signal.aborted) return run.cancel();
  const onAbort = () => run.cancel();
  signal.addEventListener("abort", onAbort, { once: true });
  void run.result.then(() => signal.removeEventListener("abort", onAbort));
}

/** Loads the run's first events: the run saved in `ctx` (it may have been saved while the run waited its turn), else `first`. */
function schedule(run: Run, ctx: Context, first: Event | undefined): void {
  const saved = ctx[contextRoot].savedRun;
  run.schedule(saved ? { restored: saved } : { event: first as Event });
}

function checkCodecs(codecs: WorkflowOptions["codecs"]): Readonly<Record<string, Codec>> {
  if (codecs === undefined) return {};
  if (typeof codecs !== "object" || codecs === null || Array.isArray(codecs)) {
    throw new WorkflowRuntimeError(
      `codecs takes an object of codecs by name, like { Money: { test, encode, decode } }; got ${Array.isArray(codecs) ? "an array" : String(codecs)}.`,
    );
  }
  for (const [name, codec] of Object.entries(codecs)) {
    const missing = (["test", "encode", "decode"] as const).filter((fn) => typeof (codec as Partial<Codec> | null)?.[fn] !== "function");
    if (name.length === 0 || missing.length > 0) {
      throw new WorkflowRuntimeError(
        `codecs["${name}"] ${name.length === 0 ? "needs a name" : `lacks ${missing.join(", ")}`}: a codec is { test: (value) => boolean, encode: (value) => json, decode: (json) => value } under a stable, non-empty name.`,
      );
    }
  }
  return codecs;
}

function toStartEvent(startEvent: EventClass, input: object): Event {
  if (isEvent(input)) {
    if (input.constructor !== startEvent) {
      throw new WorkflowRuntimeError(`run() was given a ${input.constructor.name}; pass the fields of ${startEvent.name} or an instance of it.`);
    }
    return input;
  }
  if (typeof input !== "object" || input === null) {
    throw new WorkflowRuntimeError(`run() takes an object of StartEvent fields, like run({ input: "Hello!" }); got ${input === null ? "null" : typeof input}.`);
  }
  return new (startEvent as unknown as new (fields: object) => Event)(input);
}
