/**
 * `@step`: marks a workflow method as a step and declares the events it accepts and emits.
 * One function serves both decorator conventions (TC39 standard decorators and TypeScript's
 * `experimentalDecorators`), told apart by their arguments, and `workflow.addStep()` is the
 * same thing without decorators for plain JavaScript.
 */
import type { Context } from "./context.ts";
import { Event, isSubclassOf } from "./event.ts";
import type { EventClass, EventOf, StopEvent } from "./event.ts";
import { ConfigurationError, WorkflowRuntimeError, WorkflowValidationError } from "./errors.ts";
import { checkTimeout } from "./timers.ts";
import { describeValue } from "./user-text.ts";
import type { ResourceMap, ResourceValues } from "./resource.ts";

/**
 * How a failed step is tried again: `{ maxAttempts, delay }` (delay in seconds), or a
 * function of the attempts made so far, the last error and the seconds elapsed since the
 * first attempt began, that returns the delay in seconds before the next attempt, or `null`
 * to give up. `exponentialBackoff()` makes one with growing waits, jitter, error classes and
 * a time limit.
 * @example
 * { maxAttempts: 3, delay: 0.5 }
 * (attempts, error, elapsed) => (attempts < 5 && elapsed < 60 && isTransient(error) ? 2 ** attempts : null)
 */
export type RetryPolicy =
  { readonly maxAttempts: number; readonly delay?: number } | ((attempts: number, error: unknown, elapsed: number) => number | null | undefined);

/** What a step declares. `timeout` is in seconds. */
export interface StepConfig<
  A extends readonly EventClass[] = readonly EventClass[],
  E extends readonly EventClass[] = readonly EventClass[],
  R extends ResourceMap = ResourceMap,
> {
  readonly accepts: A;
  readonly emits: E;
  /** Resources (`resource(factory)`) the step receives, made before it runs, as its third argument `{ name: value }`. */
  readonly resources?: R;
  /** How many executions of this step may run at once. Default 1. */
  readonly numWorkers?: number;
  readonly retry?: RetryPolicy;
  readonly timeout?: number | null;
  /**
   * Makes this a recovery step (it must accept `StepFailedEvent`): when one of `forSteps`
   * (default: every other step) fails after its last attempt, this step receives a
   * `StepFailedEvent` instead of the run failing, at most `maxRecoveries` times per run
   * (default 1); after that the run fails as it would without it.
   */
  readonly catchErrors?: { readonly forSteps?: readonly string[]; readonly maxRecoveries?: number };
}

// A method-shaped type: methods are checked bivariantly, so a step may narrow the StartEvent
// it accepts to `StartEvent<{ input: string }>`.
type StepMethod<This, A extends readonly EventClass[], E extends readonly EventClass[], R extends ResourceMap = {}, Result = ResultOf<This>> = {
  bivarianceHack(this: This, ctx: Context, ev: EventOf<A[number]>, resources: ResourceValues<R>): Promise<Emitted<E, Result> | void>;
}["bivarianceHack"];

/**
 * The result type `Result` of a workflow class `Workflow<In, Result>`, read from its `run()`
 * (a structural match keeps this module free of workflow.ts); `unknown` for anything else.
 */
type ResultOf<This> = This extends { run(...args: never[]): PromiseLike<infer Result> } ? Result : unknown;

/**
 * What a step declaring `emits: E` may return in a workflow whose result type is `Result`.
 * `await run()` gives a plain StopEvent's `result`, so that must be a `Result`; it gives a
 * StopEvent subclass's event itself, so that event must be a `Result`. Other events are as declared.
 */
type Emitted<E extends readonly EventClass[], Result> = { [K in keyof E]: EmittedBy<E[K], Result> }[number];
type EmittedBy<C, Result> =
  IsStopEventClass<C> extends true ? StoppedWith<Result> : EventOf<C> extends StopEvent ? (EventOf<C> extends Result ? EventOf<C> : never) : EventOf<C>;
// `new StopEvent()` is a `StopEvent<unknown>` (nothing to infer its result from): a workflow
// whose result is `void` or `undefined` takes it, as its result is never read.
type StoppedWith<Result> = [Result] extends [void] ? StopEvent : StopEvent<Result>;
type IsStopEventClass<C> = [C] extends [typeof StopEvent] ? ([typeof StopEvent] extends [C] ? true : false) : false;

/**
 * A step function for `workflow.addStep`, checked against `accepts`/`emits` (and given its
 * `resources`) like `@step` methods; with `Result`, a StopEvent it returns is checked against
 * the workflow's result type as well (`addStep` passes it).
 * @example
 * const double: StepFunction<[typeof StartEvent], [typeof StopEvent], {}, number> =
 *   async (_ctx, ev: StartEvent<{ n: number }>) => new StopEvent({ result: ev.n * 2 });
 */
export type StepFunction<A extends readonly EventClass[], E extends readonly EventClass[], R extends ResourceMap = {}, Result = unknown> = StepMethod<
  unknown,
  A,
  E,
  R,
  Result
>;

/** The function a step runs. */
export type StepHandler = (ctx: Context, ev: Event, resources: Record<string, unknown>) => Promise<Event | void> | Event | void;

/** A step as the engine sees it. */
export interface StepDefinition {
  readonly name: string;
  readonly accepts: readonly EventClass[];
  readonly emits: readonly EventClass[];
  readonly numWorkers: number;
  readonly retry: RetryPolicy | undefined;
  readonly timeout: number | null;
  readonly catchErrors: { readonly forSteps: readonly string[] | undefined; readonly maxRecoveries: number } | undefined;
  /** Undefined when the step has none, so that running it costs nothing more. */
  readonly resources: ResourceMap | undefined;
  readonly handler: StepHandler;
}

/** The decorator returned by {@link step}; it type-checks the method under both conventions. */
export interface StepDecorator<A extends readonly EventClass[], E extends readonly EventClass[], R extends ResourceMap = {}> {
  <This, M extends StepMethod<This, A, E, R>>(method: M, context: ClassMethodDecoratorContext<This, M>): void;
  // `target` is the class's prototype, typed as an instance: that is how the workflow's result type is reached.
  <This extends object, M extends StepMethod<This, A, E, R>>(target: This, key: string | symbol, descriptor: TypedPropertyDescriptor<M>): void;
}

const STEP_CONFIG = Symbol.for("stepflow.step");
type MarkedMethod = ((...args: never[]) => unknown) & { [STEP_CONFIG]?: StepConfig };

/**
 * Marks a workflow method as a step. TypeScript checks the method against `accepts`/`emits`.
 * @example
 * class Echo extends Workflow<{ input: string }, string> {
 *   @step({ accepts: [StartEvent], emits: [StopEvent] })
 *   async echo(_ctx: Context, ev: StartEvent<{ input: string }>) {
 *     return new StopEvent({ result: ev.input });
 *   }
 * }
 */
export function step<const A extends readonly EventClass[], const E extends readonly EventClass[], const R extends ResourceMap = {}>(
  config: StepConfig<A, E, R>,
): StepDecorator<A, E, R> {
  checkConfig("@step", config);
  function decorate(methodOrTarget: unknown, contextOrKey: unknown, descriptor?: PropertyDescriptor): void {
    const isStandard = typeof contextOrKey === "object" && contextOrKey !== null && "kind" in contextOrKey;
    const method = (isStandard ? methodOrTarget : descriptor?.value) as MarkedMethod | undefined;
    if (typeof method !== "function") {
      throw new WorkflowValidationError("@step can only decorate a method.");
    }
    // The workflow finds its steps by name on its prototype chain, where these are not.
    const where = isStandard
      ? (contextOrKey as ClassMethodDecoratorContext)
      : { name: contextOrKey as string | symbol, static: typeof methodOrTarget === "function", private: false };
    if (isStandard && (contextOrKey as ClassMemberDecoratorContext).kind !== "method") {
      throw new WorkflowValidationError(
        `@step can only decorate a method, not a ${(contextOrKey as ClassMemberDecoratorContext).kind} (${String(where.name)}).`,
      );
    }
    const what = where.private
      ? "a #private method"
      : where.static
        ? "a static method"
        : typeof where.name === "symbol"
          ? "a method named by a symbol"
          : undefined;
    if (what) throw new WorkflowValidationError(`@step cannot mark ${what} (${String(where.name)}): make it an ordinary instance method with a string name.`);
    // The config rides on the function itself, so both conventions leave the same mark and
    // the workflow finds its steps by walking its prototype chain.
    Object.defineProperty(method, STEP_CONFIG, { value: config });
  }
  return decorate as StepDecorator<A, E, R>;
}

/**
 * The steps declared with `@step` on an instance's class and its ancestors. A subclass that
 * overrides a step's method without repeating `@step` keeps the step (its accepts and emits)
 * and runs the override, as overriding any method would.
 */
export function decoratedSteps(instance: object): StepDefinition[] {
  const methods = new Map<string, unknown>(); // each name's most derived definition
  const configs = new Map<string, StepConfig>(); // each name's most derived @step config
  for (let proto = Object.getPrototypeOf(instance); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key === "constructor") continue;
      const value = Object.getOwnPropertyDescriptor(proto, key)?.value as MarkedMethod | undefined;
      if (!methods.has(key)) methods.set(key, value);
      const config = typeof value === "function" ? value[STEP_CONFIG] : undefined;
      if (config && !configs.has(key)) configs.set(key, config);
    }
  }
  return [...configs].map(([name, config]) => {
    // A class field assigned a function (`go = async () => …`) overrides like a method does.
    const own = Object.getOwnPropertyDescriptor(instance, name)?.value;
    const method = typeof own === "function" ? own : methods.get(name);
    if (typeof method !== "function") {
      throw new WorkflowValidationError(
        `Step "${name}" of ${instance.constructor.name} is overridden by something that is not a method; a step must stay a method.`,
      );
    }
    return defineStep(name, config, method as StepHandler, instance);
  });
}

/** Builds a step from a name, its config and a handler (bound to `thisArg`). */
export function defineStep(name: string, config: StepConfig, handler: StepHandler, thisArg?: object): StepDefinition {
  checkConfig(`Step "${name}"`, config);
  if (typeof handler !== "function") throw new WorkflowValidationError(`Step "${name}" needs a function to run, got ${describeValue(handler)}.`);
  return {
    name,
    // Listing a class twice would run the step twice per event.
    accepts: [...new Set(config.accepts)],
    emits: [...new Set(config.emits)],
    numWorkers: config.numWorkers ?? 1,
    retry: config.retry,
    timeout: config.timeout ?? null,
    resources: config.resources && Object.keys(config.resources).length > 0 ? config.resources : undefined,
    catchErrors: config.catchErrors ? { forSteps: config.catchErrors.forSteps, maxRecoveries: config.catchErrors.maxRecoveries ?? 1 } : undefined,
    handler: thisArg ? handler.bind(thisArg) : handler,
  };
}

function checkConfig(where: string, config: StepConfig): void {
  if (!config || !Array.isArray(config.accepts) || !Array.isArray(config.emits)) {
    throw new WorkflowValidationError(`${where} needs { accepts: [EventClass, …], emits: [EventClass, …] }.`);
  }
  for (const list of ["accepts", "emits"] as const) {
    config[list].forEach((type: unknown, i) => {
      if (typeof type !== "function" || !isSubclassOf(type as EventClass, Event)) {
        const hint = type === undefined ? " (an import cycle can leave a class undefined where the step is declared)" : "";
        throw new WorkflowValidationError(`${where}: ${list}[${i}] is ${describeValue(type)}, not an Event class${hint}.`);
      }
    });
  }
  if (config.numWorkers !== undefined && !(Number.isInteger(config.numWorkers) && config.numWorkers >= 1)) {
    throw new ConfigurationError(`${where}: numWorkers must be a whole number ≥ 1, got ${String(config.numWorkers)}.`, "numWorkers", config.numWorkers);
  }
  if (config.timeout != null) checkTimeout(config.timeout, "timeout", "or null for none", `${where}: timeout`);
  const catchErrors = config.catchErrors;
  if (catchErrors !== undefined) {
    const max = catchErrors?.maxRecoveries;
    if (max !== undefined && !(Number.isInteger(max) && max >= 1))
      throw new ConfigurationError(`${where}: catchErrors.maxRecoveries must be a whole number ≥ 1, got ${String(max)}.`, "catchErrors.maxRecoveries", max);
    const steps = catchErrors?.forSteps;
    if (steps !== undefined && !(Array.isArray(steps) && steps.every((s) => typeof s === "string"))) {
      throw new ConfigurationError(`${where}: catchErrors.forSteps must be a list of step names, like ["fetch"].`, "catchErrors.forSteps", steps);
    }
  }
  const retry = config.retry;
  if (retry && typeof retry !== "function") {
    if (!(Number.isInteger(retry.maxAttempts) && retry.maxAttempts >= 1)) {
      throw new ConfigurationError(
        `${where}: retry.maxAttempts must be a whole number ≥ 1, got ${String(retry.maxAttempts)}.`,
        "retry.maxAttempts",
        retry.maxAttempts,
      );
    }
    if (retry.delay !== undefined && !isDelay(retry.delay)) {
      throw new ConfigurationError(
        `${where}: retry.delay is in seconds and must be a finite number ≥ 0, got ${String(retry.delay)}.`,
        "retry.delay",
        retry.delay,
      );
    }
  }
}

/**
 * The delay in seconds before attempt `attempts + 1` of `step` (`elapsed`: seconds since the first attempt began), or `null` when its retry
 * policy gives up. Throws `WorkflowRuntimeError` when a retry function returns something else.
 */
export function retryDelay(step: StepDefinition, attempts: number, error: unknown, elapsed: number): number | null {
  const policy = step.retry;
  if (!policy) return null;
  if (typeof policy !== "function") return attempts < policy.maxAttempts ? (policy.delay ?? 0) : null;
  const delay = policy(attempts, error, elapsed) ?? null;
  if (delay !== null && !isDelay(delay)) {
    throw new WorkflowRuntimeError(
      `The retry function of step "${step.name}" returned ${typeof delay === "string" ? JSON.stringify(delay) : String(delay)}. Return the seconds to wait before the next attempt (a finite number ≥ 0), or null to give up.`,
    );
  }
  return delay;
}

const isDelay = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0;
