/**
 * The context of a workflow: a store that outlives runs (memory across turns) and, while a
 * run is in progress, the run's operations (send, stream, collect, wait, signal).
 */
import type { Event, EventClass, EventOf } from "./event.ts";
import { eventTypeName } from "./event.ts";
import { ContextStateError, WorkflowRuntimeError } from "./errors.ts";
import type { Run } from "./run.ts";
import { ContextStore } from "./store.ts";
import type { AnyWorkflow } from "./workflow.ts";

/** Options of {@link Context.waitForEvent}. */
export interface WaitForEventOptions<E extends Event> {
  /** Fields the awaited event must have (compared with `===`). */
  readonly requirements?: Partial<Record<keyof E & string, unknown>>;
  /** Seconds to wait before failing with `WorkflowTimeoutError`. */
  readonly timeout?: number;
  /** An event written to the stream once the wait begins, typically an `InputRequiredEvent`. */
  readonly waiterEvent?: Event;
}

const NEVER_ABORTED = new AbortController().signal;

/**
 * @example
 * const ctx = new Context(agent);
 * await agent.run({ input: "Hello! My name is Logan." }, { ctx });
 * await agent.run({ input: "What is my name?" }, { ctx }); // remembers
 */
export class Context {
  readonly store: ContextStore;
  #run: Run | undefined;

  constructor(
    readonly workflow: AnyWorkflow,
    store: ContextStore = new ContextStore(),
  ) {
    this.store = store;
  }

  /** Whether a run is in progress on this context. */
  get running(): boolean {
    return this.#run !== undefined && !this.#run.done;
  }

  /** Aborted when the run times out, is cancelled, fails or finishes: pass it to LLM and tool calls. */
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
   * arrived; until then `null`. Buffers are keyed by the list of types.
   * @example
   * const ready = ctx.collectEvents(ev, [ResultA, ResultB]);
   * if (!ready) return;
   * const [a, b] = ready;
   */
  collectEvents<const T extends readonly EventClass[]>(event: Event, types: T): { -readonly [K in keyof T]: EventOf<T[K]> } | null {
    return this.#activeRun("collectEvents").collect(event, types) as { -readonly [K in keyof T]: EventOf<T[K]> } | null;
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
    const waiting = run.waitFor(type, options.requirements, options.timeout) as Promise<EventOf<C>>;
    if (options.waiterEvent) run.writeToStream(options.waiterEvent);
    return waiting;
  }

  /** @internal Binds a new run to this context; one run at a time. */
  attach(run: Run): void {
    if (this.running) {
      throw new ContextStateError("This context is already running a workflow. Await the current run (or cancel it) before starting another on the same context.");
    }
    this.#run = run;
  }

  /** @internal The current or last run. */
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
