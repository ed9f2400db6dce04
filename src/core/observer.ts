/**
 * Run observers: how tracing (`stepflow/otel`) or metrics follow every run, step execution,
 * LLM call and tool call without the engine knowing any tracing library. Observers are kept
 * in a {@link RunObservers} object: each workflow follows its own (`observers` option), or by
 * default {@link sharedRunObservers}, which `addRunObserver` fills for the whole process as
 * OpenTelemetry instrumentations are. With none registered the engine pays one length check per
 * run and per step execution.
 */
import type { RunStatus } from "./lifecycle.ts";

/** A run as it starts (or resumes). @example `{ runId: "5f0c…", workflow: "FunctionCallingAgent", resumed: false }` */
export interface ObservedRun {
  readonly runId: string;
  readonly workflow: string;
  readonly resumed: boolean;
}

/** One attempt at one step execution. @example `{ runId: "5f0c…", step: "handleLlmInput", attempt: 1, inputEvent: "InputEvent" }` */
export interface ObservedStep {
  readonly runId: string;
  readonly step: string;
  readonly attempt: number;
  readonly inputEvent: string;
}

/**
 * How a step attempt ended: the event it returned, or what it threw and whether another
 * attempt follows. @example `{ ok: false, error: new Error("rate limited"), willRetry: true }`
 */
export type StepOutcome = { readonly ok: true; readonly outputEvent?: string } | { readonly ok: false; readonly error: unknown; readonly willRetry: boolean };

/** How a run ended. @example `{ status: "failed", error: new Error("boom") }` */
export interface RunEnd {
  readonly status: RunStatus;
  readonly error?: unknown;
}

/** Attribute values an operation reports, as OpenTelemetry takes them. @example `{ "gen_ai.tool.name": "add" }` */
export type ObservedAttributes = Readonly<Record<string, string | number | boolean | readonly string[] | undefined>>;

/**
 * An LLM call or a tool call, with attributes named after the OpenTelemetry GenAI semantic
 * conventions (`gen_ai.request.model`, `gen_ai.tool.name`, …).
 * @example `{ kind: "tool", name: "execute_tool add", attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add" } }`
 */
export interface ObservedOperation {
  readonly kind: "llm" | "tool";
  readonly name: string;
  readonly attributes: ObservedAttributes;
}

/** What an observer gets back about an operation it was told of. @example `op.end({ "gen_ai.usage.input_tokens": 42 })` */
export interface OperationObservation {
  /** The operation finished: `error` set when it failed, `attributes` learnt meanwhile (token usage, finish reason). */
  end(attributes?: ObservedAttributes, error?: unknown): void;
}

/** What an observer follows of one step attempt. @example `{ run: (work) => work(), ended: () => {} }` */
export interface StepObservation {
  /** Runs the step's handler: an observer may run it inside a context of its own (the step's span as the active one). */
  run<T>(work: () => T): T;
  ended(outcome: StepOutcome): void;
}

/** What an observer follows of one run. @example `{ stepStarted: () => undefined, idle: () => console.log("waiting"), runEnded: () => {} }` */
export interface RunObservation {
  stepStarted(step: ObservedStep): StepObservation | undefined;
  /** The run became idle: nothing queued or executing, it waits for an event from outside (once per idle period). */
  idle?(): void;
  runEnded(end: RunEnd): void;
}

/**
 * Follows runs and, inside their steps, LLM and tool calls. Register one with {@link addRunObserver}.
 * @example
 * const stop = addRunObserver({
 *   runStarted: (run) => (console.log("run", run.workflow), undefined),
 *   operationStarted: (op) => (console.log(op.name), undefined),
 * });
 */
export interface RunObserver {
  runStarted?(run: ObservedRun): RunObservation | undefined;
  operationStarted?(operation: ObservedOperation): OperationObservation | undefined;
}

/** The handle of an operation no observer follows. */
const NO_OPERATION: OperationObservation = { end: () => undefined };

/**
 * A set of run observers: the runs of the workflows given it (`new MyWorkflow({ observers })`)
 * tell them of each run, step attempt, LLM call and tool call. Workflows given none share
 * {@link sharedRunObservers}.
 * @example
 * const observers = new RunObservers();
 * const stop = observers.add({ runStarted: (run) => (console.log("run", run.workflow), undefined) });
 * await new MyWorkflow({ observers }).run({});
 * stop();
 */
export class RunObservers {
  readonly #observers: RunObserver[] = [];

  /** @example new RunObservers([metricsObserver]) */
  constructor(observers: readonly RunObserver[] = []) {
    this.#observers.push(...observers);
  }

  /**
   * Adds `observer` for every run started from now on by the workflows that follow this set;
   * returns the function that removes it.
   * @example
   * const stop = observers.add(myObserver);
   * stop();
   */
  add(observer: RunObserver): () => void {
    const observers = this.#observers;
    observers.push(observer);
    return () => {
      const at = observers.indexOf(observer);
      if (at >= 0) observers.splice(at, 1);
    };
  }

  /** Whether any observer is in the set: the engine asks before it builds what observers read. @example `if (observers.observing()) observers.observeRun(run);` */
  observing(): boolean {
    return this.#observers.length > 0;
  }

  /**
   * The observations of a starting run, one per observer that follows it; `undefined` when none does (the common case).
   * @example const observation = observers.observing() ? observers.observeRun({ runId, workflow: "Shop", resumed: false }) : undefined;
   */
  observeRun(run: ObservedRun): RunObservation | undefined {
    const observers = this.#observers;
    if (observers.length === 0) return undefined;
    const observations = observers.map((o) => quietly(() => o.runStarted?.(run))).filter((o): o is RunObservation => o !== undefined);
    if (observations.length === 0) return undefined;
    if (observations.length === 1) return guardedRun(observations[0] as RunObservation);
    const guarded = observations.map(guardedRun);
    return {
      stepStarted: (step) => {
        const steps = guarded.map((o) => o.stepStarted(step)).filter((s): s is StepObservation => s !== undefined);
        if (steps.length === 0) return undefined;
        return {
          run: <T>(work: () => T): T => steps.reduceRight<() => T>((inner, s) => () => s.run(inner), work)(),
          ended: (outcome) => steps.forEach((s) => s.ended(outcome)),
        };
      },
      idle: () => guarded.forEach((o) => o.idle?.()),
      runEnded: (end) => guarded.forEach((o) => o.runEnded(end)),
    };
  }

  /**
   * Tells the observers an LLM or tool call starts; the handle it returns must be ended once.
   * @example
   * const op = observers.observeOperation({ kind: "tool", name: "execute_tool add", attributes: { "gen_ai.tool.name": "add" } });
   * try { result = await work(); op.end(); } catch (error) { op.end({}, error); throw error; }
   */
  observeOperation(operation: ObservedOperation): OperationObservation {
    const observers = this.#observers;
    if (observers.length === 0) return NO_OPERATION;
    const started = observers.map((o) => quietly(() => o.operationStarted?.(operation))).filter((o): o is OperationObservation => o !== undefined);
    if (started.length === 0) return NO_OPERATION;
    return { end: (attributes, error) => started.forEach((o) => quietly(() => o.end(attributes, error))) };
  }
}

/**
 * The observers of every workflow that was given no `observers` of its own: what
 * {@link addRunObserver} (and `stepflow/otel`'s `instrument()`) registers for the whole process.
 * @example const stop = sharedRunObservers.add(myObserver); // same as addRunObserver(myObserver)
 */
export const sharedRunObservers: RunObservers = new RunObservers();

/**
 * Registers `observer` for every run started from now on, in this process, by the workflows
 * that were given no `observers` of their own ({@link sharedRunObservers}); returns the function
 * that removes it. To follow some workflows only, give them a {@link RunObservers} of their own.
 * @example
 * const stop = addRunObserver(myObserver);
 * await agent.run({ input: "Hi" });
 * stop();
 */
export function addRunObserver(observer: RunObserver): () => void {
  return sharedRunObservers.add(observer);
}

/**
 * {@link RunObservers.observeRun} of {@link sharedRunObservers}.
 * @example const observation = observing() ? observeRun({ runId, workflow: "Shop", resumed: false }) : undefined;
 */
export function observeRun(run: ObservedRun): RunObservation | undefined {
  return sharedRunObservers.observeRun(run);
}

/**
 * {@link RunObservers.observeOperation} of {@link sharedRunObservers}: for an LLM or tool call
 * made without its workflow's observers at hand.
 * @example
 * const op = observeOperation({ kind: "tool", name: "execute_tool add", attributes: { "gen_ai.tool.name": "add" } });
 * try { result = await work(); op.end(); } catch (error) { op.end({}, error); throw error; }
 */
export function observeOperation(operation: ObservedOperation): OperationObservation {
  return sharedRunObservers.observeOperation(operation);
}

/** An observer's failure must never fail the run it watches. */
function quietly<T>(work: () => T): T | undefined {
  try {
    return work();
  } catch {
    return undefined;
  }
}

function guardedRun(observation: RunObservation): RunObservation {
  return {
    stepStarted: (step) => {
      const s = quietly(() => observation.stepStarted(step));
      if (!s) return undefined;
      return {
        // The handler's own errors pass through; only the observer's wrapping is its business.
        run: (work) => s.run(work),
        ended: (outcome) => quietly(() => s.ended(outcome)),
      };
    },
    idle: () => quietly(() => observation.idle?.()),
    runEnded: (end) => quietly(() => observation.runEnded(end)),
  };
}

/** Whether {@link sharedRunObservers} has an observer. @example `if (observing()) observeRun(run);` */
export function observing(): boolean {
  return sharedRunObservers.observing();
}
