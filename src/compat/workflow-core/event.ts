/**
 * Event types of `@llamaindex/workflow-core`: `workflowEvent()` makes a type, `.with(data)` an
 * instance of it, which knows its type; no type keeps its instances alive.
 */

declare const opaque: unique symbol;

/**
 * One event flowing through a workflow: what `SomeEvent.with(data)` returns.
 * @example
 * import { workflowEvent, type WorkflowEventData } from "stepflow/compat/workflow-core";
 * const Greeting = workflowEvent<string>();
 * const ev: WorkflowEventData<string> = Greeting.with("hi");
 * console.log(ev.data); // "hi"
 */
export type WorkflowEventData<Data, DebugLabel extends string = string> = {
  get data(): Data;
} & { readonly [opaque]: DebugLabel };

/**
 * An event type: `.with(data)` makes instances, `.include(x)` tells whether `x` is one.
 * @example
 * import { workflowEvent } from "stepflow/compat/workflow-core";
 * const UserLogin = workflowEvent<{ userId: string }>({ debugLabel: "userLogin" });
 * const ev = UserLogin.with({ userId: "u1" });
 * if (UserLogin.include(ev)) console.log(ev.data.userId);
 */
export type WorkflowEvent<Data, DebugLabel extends string = string> = {
  /** A name for logs and `toString()`; assignable, as upstream. */
  debugLabel?: DebugLabel;
  /** An identifier for serialization (`toResponse` / `fromResponse`); set once, read-only. */
  readonly uniqueId: string;
  /** Makes an instance of this type carrying `data`. */
  with(data: Data): WorkflowEventData<Data, DebugLabel>;
  /** Whether `event` is an instance of this type (or, for `or(...)`, of one of its members). */
  include(event: unknown): event is WorkflowEventData<Data, DebugLabel>;
  /** Calls `callback` for each new instance; returns the function that stops it. */
  onInit(callback: (event: WorkflowEventData<unknown>) => void): () => void;
} & { readonly [opaque]: DebugLabel };

/**
 * Options of {@link workflowEvent}.
 * @example
 * import { workflowEvent, type WorkflowEventConfig } from "stepflow/compat/workflow-core";
 * const config: WorkflowEventConfig = { debugLabel: "start", uniqueId: "start" };
 * const Start = workflowEvent(config);
 */
export type WorkflowEventConfig<DebugLabel extends string = string> = {
  debugLabel?: DebugLabel;
  uniqueId?: string;
};

/**
 * The data type an event type or instance carries.
 * @example
 * import { workflowEvent, type InferWorkflowEventData } from "stepflow/compat/workflow-core";
 * const Count = workflowEvent<number>();
 * const n: InferWorkflowEventData<typeof Count> = 3;
 */
export type InferWorkflowEventData<T> = T extends WorkflowEventData<infer U> ? U : T extends WorkflowEvent<infer U> ? U : never;

/**
 * What `or(A, B)` returns: an event type that includes the instances of A and of B.
 * @example
 * import { or, workflowEvent, type OrEvent } from "stepflow/compat/workflow-core";
 * const A = workflowEvent<string>();
 * const B = workflowEvent<number>();
 * const AorB: OrEvent<[typeof A, typeof B]> = or(A, B);
 */
export type OrEvent<Events extends WorkflowEvent<unknown>[]> = WorkflowEvent<unknown> & { _type: "or"; events: Events };

/**
 * An event of any type, as a context's stream carries them. `any`, not `unknown`, on purpose:
 * it is upstream's type, and code written against upstream reads `events.at(-1).data.field`
 * without a cast; with `unknown` that code would stop compiling after the import change.
 * @example
 * import type { AnyWorkflowEventData } from "stepflow/compat/workflow-core";
 * const label = (ev: AnyWorkflowEventData) => String(ev);
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyWorkflowEventData = WorkflowEventData<any>;

type AnyEvent = WorkflowEvent<unknown>;

const eventTypes = new WeakSet<object>();
let typeCounter = 0;
let instanceCounter = 0;

/**
 * An event instance. A class rather than upstream's object literal registered in WeakSets:
 * creating one is a single allocation and the type check a private-field test, where weak
 * collections give the garbage collector work for every event.
 */
class EventInstance {
  readonly #type: AnyEvent;
  readonly #label: string | undefined;
  readonly #serial: number;

  constructor(
    type: AnyEvent,
    label: string | undefined,
    readonly data: unknown,
  ) {
    this.#type = type;
    this.#label = label;
    this.#serial = instanceCounter++;
  }

  static typeOf(instance: unknown): AnyEvent | undefined {
    return typeof instance === "object" && instance !== null && #type in instance ? (instance as EventInstance).#type : undefined;
  }

  get [Symbol.toStringTag](): string {
    return this.toString();
  }

  toString(): string {
    return this.#label ?? `WorkflowEvent(${this.#type.uniqueId}.${this.#serial})`;
  }

  toJSON(): { type: string; data: unknown } {
    return { type: this.#label ?? this.#type.uniqueId, data: this.data };
  }
}

/**
 * Creates an event type.
 * @example
 * import { workflowEvent } from "stepflow/compat/workflow-core";
 * const Start = workflowEvent<string>({ debugLabel: "start" });
 * console.log(Start.with("go").data); // "go"
 */
export const workflowEvent = <Data = void, DebugLabel extends string = string>(config?: WorkflowEventConfig<DebugLabel>): WorkflowEvent<Data, DebugLabel> =>
  createEventType<Data, DebugLabel>(config, `${typeCounter++}`);

function createEventType<Data, DebugLabel extends string>(
  config: WorkflowEventConfig<DebugLabel> | undefined,
  id: string,
  alsoIncludes?: (instance: object) => boolean,
): WorkflowEvent<Data, DebugLabel> {
  const label = config?.debugLabel;
  const initCallbacks = new Set<(event: WorkflowEventData<unknown>) => void>();
  let uniqueId = config?.uniqueId;
  const event = {
    debugLabel: label ?? id,
    include:
      alsoIncludes === undefined
        ? (instance: unknown) => EventInstance.typeOf(instance) === self
        : (instance: unknown) => EventInstance.typeOf(instance) === self || (typeof instance === "object" && instance !== null && alsoIncludes(instance)),
    with: (data: Data) => {
      const instance = new EventInstance(self, label, data);
      if (initCallbacks.size > 0) for (const callback of initCallbacks) callback(instance as unknown as WorkflowEventData<unknown>);
      return instance;
    },
    onInit: (callback: (event: WorkflowEventData<unknown>) => void) => {
      initCallbacks.add(callback);
      return () => {
        initCallbacks.delete(callback);
      };
    },
    toString: () => label ?? `WorkflowEvent<${id}>`,
  };
  Object.defineProperty(event, "uniqueId", {
    get: () => (uniqueId ??= id),
    set: () => {
      throw new TypeError("uniqueId is read-only: pass it to workflowEvent({ uniqueId }) instead.");
    },
  });
  Object.defineProperty(event, Symbol.toStringTag, { get: () => event.debugLabel ?? `WorkflowEvent<${id}>` });
  Object.defineProperty(event, "displayName", { value: label ?? `WorkflowEvent<${id}>` });
  const self = event as unknown as AnyEvent;
  eventTypes.add(event);
  return event as unknown as WorkflowEvent<Data, DebugLabel>;
}

/**
 * An event type matching instances of any of `events` (and its own instances): a handler of
 * `[or(A, B)]` runs once for each A and each B.
 * @example
 * import { or, workflowEvent } from "stepflow/compat/workflow-core";
 * const A = workflowEvent<string>();
 * const B = workflowEvent<number>();
 * console.log(or(A, B).include(B.with(1))); // true
 */
export const or = <const Events extends WorkflowEvent<unknown>[]>(...events: Events): OrEvent<Events> => {
  const label = `or(${events.map((e) => e.debugLabel || e.uniqueId).join(", ")})`;
  const type = createEventType<unknown, string>({ debugLabel: label }, `or_${typeCounter++}`, (instance) => events.some((e) => e.include(instance)));
  return Object.assign(type, { _type: "or" as const, events });
};

/**
 * Whether `instance` is an event type made by {@link workflowEvent} or {@link or}.
 * @example
 * import { isWorkflowEvent, workflowEvent } from "stepflow/compat/workflow-core";
 * console.log(isWorkflowEvent(workflowEvent())); // true
 */
export const isWorkflowEvent = (instance: unknown): instance is WorkflowEvent<unknown> =>
  typeof instance === "object" && instance !== null && eventTypes.has(instance);

/**
 * Whether `instance` is an event made by some type's `.with()`.
 * @example
 * import { isWorkflowEventData, workflowEvent } from "stepflow/compat/workflow-core";
 * console.log(isWorkflowEventData(workflowEvent().with())); // true
 */
export const isWorkflowEventData = (instance: unknown): instance is WorkflowEventData<unknown> => EventInstance.typeOf(instance) !== undefined;

/**
 * The event type an event was made by, or undefined.
 * @example
 * import { eventSource, workflowEvent } from "stepflow/compat/workflow-core";
 * const Start = workflowEvent();
 * console.log(eventSource(Start.with()) === Start); // true
 */
export const eventSource = (instance: unknown): WorkflowEvent<unknown> | undefined => EventInstance.typeOf(instance);
