/**
 * `@step`: marks a workflow method as a step and declares the events it accepts and emits.
 * One function serves both decorator conventions (TC39 standard decorators and TypeScript's
 * `experimentalDecorators`), told apart by their arguments, and `workflow.addStep()` is the
 * same thing without decorators for plain JavaScript.
 */
import type { Context } from "./context.ts";
import type { Event, EventClass, EventOf } from "./event.ts";
import { WorkflowValidationError } from "./errors.ts";

/**
 * How a failed step is tried again: `{ maxAttempts, delay }` (delay in seconds), or a
 * function of the attempts made so far and the last error that returns the delay in
 * seconds before the next attempt, or `null` to give up.
 * @example
 * { maxAttempts: 3, delay: 0.5 }
 * (attempts, error) => (attempts < 5 && isTransient(error) ? 2 ** attempts : null)
 */
export type RetryPolicy =
  | { readonly maxAttempts: number; readonly delay?: number }
  | ((attempts: number, error: unknown) => number | null | undefined);

/** What a step declares. `timeout` is in seconds. */
export interface StepConfig<A extends readonly EventClass[] = readonly EventClass[], E extends readonly EventClass[] = readonly EventClass[]> {
  readonly accepts: A;
  readonly emits: E;
  /** How many executions of this step may run at once. Default 1. */
  readonly numWorkers?: number;
  readonly retry?: RetryPolicy;
  readonly timeout?: number | null;
}

// A method-shaped type: methods are checked bivariantly, so a step may narrow the StartEvent
// it accepts to `StartEvent<{ input: string }>`.
type StepMethod<This, A extends readonly EventClass[], E extends readonly EventClass[]> = {
  bivarianceHack(this: This, ctx: Context, ev: EventOf<A[number]>): Promise<EventOf<E[number]> | void>;
}["bivarianceHack"];

/** A step function for `workflow.addStep`, checked against `accepts`/`emits` like `@step` methods. */
export type StepFunction<A extends readonly EventClass[], E extends readonly EventClass[]> = StepMethod<unknown, A, E>;

/** The function a step runs. */
export type StepHandler = (ctx: Context, ev: Event) => Promise<Event | void> | Event | void;

/** A step as the engine sees it. */
export interface StepDefinition {
  readonly name: string;
  readonly accepts: readonly EventClass[];
  readonly emits: readonly EventClass[];
  readonly numWorkers: number;
  readonly retry: RetryPolicy | undefined;
  readonly timeout: number | null;
  readonly handler: StepHandler;
}

/** The decorator returned by {@link step}; it type-checks the method under both conventions. */
export interface StepDecorator<A extends readonly EventClass[], E extends readonly EventClass[]> {
  <This, M extends StepMethod<This, A, E>>(method: M, context: ClassMethodDecoratorContext<This, M>): void;
  <M extends StepMethod<unknown, A, E>>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>): void;
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
export function step<const A extends readonly EventClass[], const E extends readonly EventClass[]>(config: StepConfig<A, E>): StepDecorator<A, E> {
  checkConfig("@step", config);
  function decorate(methodOrTarget: unknown, contextOrKey: unknown, descriptor?: PropertyDescriptor): void {
    const isStandard = typeof contextOrKey === "object" && contextOrKey !== null && "kind" in contextOrKey;
    const method = (isStandard ? methodOrTarget : descriptor?.value) as MarkedMethod | undefined;
    if (typeof method !== "function") {
      throw new WorkflowValidationError("@step can only decorate a method.");
    }
    // The config rides on the function itself, so both conventions leave the same mark and
    // the workflow finds its steps by walking its prototype chain.
    Object.defineProperty(method, STEP_CONFIG, { value: config });
  }
  return decorate as StepDecorator<A, E>;
}

/** The steps declared with `@step` on an instance's class and its ancestors. */
export function decoratedSteps(instance: object): StepDefinition[] {
  const found = new Map<string, StepDefinition>();
  for (let proto = Object.getPrototypeOf(instance); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key === "constructor" || found.has(key)) continue; // a subclass's override wins
      const value = Object.getOwnPropertyDescriptor(proto, key)?.value as MarkedMethod | undefined;
      const config = typeof value === "function" ? value[STEP_CONFIG] : undefined;
      if (config) found.set(key, defineStep(key, config, value as unknown as StepHandler, instance));
    }
  }
  return [...found.values()];
}

/** Builds a step from a name, its config and a handler (bound to `thisArg`). */
export function defineStep(name: string, config: StepConfig, handler: StepHandler, thisArg?: object): StepDefinition {
  checkConfig(`Step "${name}"`, config);
  return {
    name,
    accepts: config.accepts,
    emits: config.emits,
    numWorkers: config.numWorkers ?? 1,
    retry: config.retry,
    timeout: config.timeout ?? null,
    handler: thisArg ? handler.bind(thisArg) : handler,
  };
}

function checkConfig(where: string, config: StepConfig): void {
  if (!config || !Array.isArray(config.accepts) || !Array.isArray(config.emits)) {
    throw new WorkflowValidationError(`${where} needs { accepts: [EventClass, …], emits: [EventClass, …] }.`);
  }
  if (config.numWorkers !== undefined && !(Number.isInteger(config.numWorkers) && config.numWorkers >= 1)) {
    throw new WorkflowValidationError(`${where}: numWorkers must be a whole number ≥ 1, got ${String(config.numWorkers)}.`);
  }
  if (config.timeout != null && !(config.timeout > 0)) {
    throw new WorkflowValidationError(`${where}: timeout is in seconds and must be > 0, got ${String(config.timeout)}.`);
  }
  const retry = config.retry;
  if (retry && typeof retry !== "function" && !(Number.isInteger(retry.maxAttempts) && retry.maxAttempts >= 1)) {
    throw new WorkflowValidationError(`${where}: retry.maxAttempts must be a whole number ≥ 1, got ${String(retry.maxAttempts)}.`);
  }
}

/** The delay in seconds before attempt `attempts + 1`, or `null` when the policy gives up. */
export function retryDelay(policy: RetryPolicy | undefined, attempts: number, error: unknown): number | null {
  if (!policy) return null;
  if (typeof policy === "function") return policy(attempts, error) ?? null;
  return attempts < policy.maxAttempts ? (policy.delay ?? 0) : null;
}
