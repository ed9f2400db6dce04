/**
 * The dispatcher behind `workflow.createContext()`: `sendEvent` hands an event to the streams
 * that watch it and runs, at once and in registration order, every handler it completes, as
 * upstream does. What it keeps is bounded by what can still be observed: events wait only when
 * a many-event handler (`handle([A, B], …)`) may still take them, and a finished handler is
 * forgotten unless someone still reads its stream.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ConfigurationError, WorkflowTimeoutError } from "../../index.ts";
import type { AnyWorkflowEventData, WorkflowEvent, WorkflowEventData } from "./event.ts";
import { StreamChannel, WorkflowStream } from "./stream.ts";

/**
 * A handler: gets the context, then one event per accepted type; may return the next event.
 * @example
 * import { workflowEvent, type Handler, type WorkflowEvent } from "stepflow/compat/workflow-core";
 * const Start = workflowEvent<string>();
 * const Done = workflowEvent<number>();
 * const length: Handler<[WorkflowEvent<string>], ReturnType<typeof Done.with>> = (_ctx, start) => Done.with(start.data.length);
 */
export type Handler<
  AcceptEvents extends WorkflowEvent<unknown>[],
  Result extends WorkflowEventData<unknown> | void,
  Context extends WorkflowContext = WorkflowContext,
> = (context: Context, ...events: { [K in keyof AcceptEvents]: ReturnType<AcceptEvents[K]["with"]> }) => Result | Promise<Result>;

/**
 * What a handler (and `createContext()`'s caller) works with: the events it caused, its abort
 * signal, and `sendEvent`.
 * @example
 * import { createWorkflow, workflowEvent, type WorkflowContext } from "stepflow/compat/workflow-core";
 * const Ping = workflowEvent();
 * const context: WorkflowContext = createWorkflow().createContext();
 * context.sendEvent(Ping.with());
 */
export type WorkflowContext = {
  /**
   * The events sent from this point on by this context and everything it caused (for the
   * context `createContext()` returns: every event of the run). The same stream each time.
   */
  get stream(): WorkflowStream<AnyWorkflowEventData>;
  /** Aborted with the error when a handler fails, or with a `WorkflowTimeoutError` at the run's timeout. */
  get signal(): AbortSignal;
  /** Sends events: each is streamed, then handed to the handlers it completes. */
  sendEvent: (...events: WorkflowEventData<unknown>[]) => void;
};

/**
 * Turns a property of the root context into the one a handler's context sees (see {@link extendContext}).
 * @example
 * import type { InheritanceTransformer } from "stepflow/compat/workflow-core";
 * const same: InheritanceTransformer = (_context, descriptor) => descriptor;
 */
export type InheritanceTransformer = (handlerContext: WorkflowContext, originalDescriptor: PropertyDescriptor) => PropertyDescriptor;

/**
 * Listeners registered with `workflow.handle`, by their list of accepted types (internal).
 * @example
 * const listeners: Listeners = new Map();
 */
export type Listeners = Map<readonly WorkflowEvent<unknown>[], Set<HandlerFn>>;

/**
 * Options of a context; `createWorkflow({ timeout })` sets them.
 * @example
 * import type { ContextOptions } from "stepflow/compat/workflow-core";
 * const options: ContextOptions = { timeout: 30_000 };
 */
export interface ContextOptions {
  /**
   * Whether `getContext()` works after an `await` in a handler (default true, as upstream).
   * It runs each handler in an `AsyncLocalStorage`, which on Node 20 and 22 switches on the
   * process's promise hooks: `false` saves that cost, and `getContext()` then works only in a
   * handler's synchronous part (use the handler's first argument after an `await`).
   */
  readonly asyncContext?: boolean;
  /**
   * Milliseconds a context may run before its signal aborts with a `WorkflowTimeoutError` and
   * its streams fail with it; counted from `createContext()` to the end of its root stream.
   * `null` (the default, as upstream): no limit.
   */
  readonly timeout?: number | null;
}

/** Upstream's name for a root context's transformers: middleware written for upstream reads it. */
const INHERITANCE = "__internal__property_inheritance_handlers";
/** Where middleware of this package (the state middleware's snapshots) watches a context. */
export const HOOKS = Symbol("stepflow.compat.hooks");

/** @internal What a context tells its middleware; each hook is off (null) unless set. */
export interface ContextHooks {
  /** An event was sent (before any handler sees it). */
  sent: ((event: WorkflowEventData<unknown>) => void) | null;
  /** A handler is about to take `inputs`; returning false skips it (a context locked by a snapshot). */
  admit: ((inputs: readonly WorkflowEventData<unknown>[]) => boolean) | null;
  /** An async handler started; `settled` resolves once it has finished and its result was sent. */
  started: ((settled: Promise<void>) => void) | null;
  /** The trace-events middleware: sees every handler call and every event's sender. */
  trace: TraceHook | null;
}

/** @internal A handler as the dispatcher calls it. */
export type HandlerFn = (context: WorkflowContext, ...events: WorkflowEventData<unknown>[]) => unknown;

/** @internal How the trace-events middleware follows a context: what it attaches to a call is given back with what the call sends. */
export interface TraceHook {
  /** A handler is about to take `inputs`, sent by the call traced as `parent` (the root's trace: from outside any handler); returns the function to run instead and this call's trace. */
  call(
    handler: HandlerFn,
    inputEvents: readonly WorkflowEvent<unknown>[],
    inputs: WorkflowEventData<unknown>[],
    parent: unknown,
  ): { run: HandlerFn; trace: unknown };
  /** `event` was sent by the call traced as `trace`. */
  sent(event: WorkflowEventData<unknown>, trace: unknown): void;
  /** The root's trace, asked once when the hook is set. */
  readonly root: unknown;
}

interface RootInternals {
  [INHERITANCE]?: Map<string, InheritanceTransformer>;
  [HOOKS]: ContextHooks;
}

/** One handler run (or the root): what observes the events it sends. */
interface Scope {
  /** The nearest ancestor that can still observe events: running, or read by a stream. */
  parent: Scope | null;
  running: boolean;
  listeners: Set<(event: WorkflowEventData<unknown>) => void> | null;
  controller: AbortController | null;
  channel: StreamChannel<WorkflowEventData<unknown>> | null;
  stream: WorkflowStream<WorkflowEventData<unknown>> | null;
  /** What the trace-events middleware attached to this call (undefined without it). */
  trace: unknown;
}

/**
 * The context of the handler whose synchronous code is running: the fast path, and the only
 * one for workflows created with `asyncContext: false`.
 */
let current: WorkflowContext | null = null;
/**
 * The context of the handler a continuation (after an `await`) belongs to. Created on first
 * use: only a process that runs a compat workflow pays for Node's promise hooks.
 */
let storage: AsyncLocalStorage<WorkflowContext> | null = null;

/**
 * The context of the handler running now (deprecated upstream: prefer the handler's first
 * argument). Works anywhere inside a handler, also after an `await` (unless the workflow was
 * created with `asyncContext: false`: then only before the first `await`), and in the
 * middleware that runs it; elsewhere it throws, naming the fix.
 * @example
 * import { createWorkflow, getContext, workflowEvent } from "stepflow/compat/workflow-core";
 * const Start = workflowEvent();
 * const Stop = workflowEvent();
 * const workflow = createWorkflow();
 * workflow.handle([Start], async () => {
 *   await Promise.resolve();
 *   getContext().sendEvent(Stop.with());
 * });
 */
export function getContext(): WorkflowContext {
  const context = current ?? storage?.getStore();
  if (context === undefined || context === null) {
    throw new Error(
      "No current context found: getContext() works only while a workflow handler runs (and, in a workflow created with createWorkflow({ asyncContext: false }), only before its first await). Use the context passed to the handler as its first argument, e.g. workflow.handle([ev], (context, event) => context.sendEvent(...)).",
    );
  }
  return context;
}

/**
 * Adds properties to a root context (what middleware's `createContext` does); handler contexts
 * inherit them. A transformer, per property, rewrites what each handler's context sees.
 * @example
 * import { createWorkflow, extendContext } from "stepflow/compat/workflow-core";
 * const context = createWorkflow().createContext();
 * extendContext(context, { userId: "u1" });
 */
export function extendContext(
  context: WorkflowContext,
  properties: Record<string, unknown>,
  inheritanceTransformers?: Record<string, InheritanceTransformer>,
): void {
  Object.assign(context, properties);
  if (!inheritanceTransformers) return;
  const internals = context as WorkflowContext & RootInternals;
  if (internals[INHERITANCE] === undefined)
    Object.defineProperty(internals, INHERITANCE, { value: new Map(), enumerable: false, configurable: true, writable: true });
  for (const [key, transformer] of Object.entries(inheritanceTransformers)) {
    internals[INHERITANCE]?.set(key, transformer);
    const descriptor = Object.getOwnPropertyDescriptor(context, key);
    if (descriptor) Object.defineProperty(context, key, transformer(context, descriptor));
  }
}

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> => value != null && typeof (value as { then?: unknown }).then === "function";
const isEventData = (value: unknown): value is WorkflowEventData<unknown> => value != null && typeof value === "object" && "data" in value;

function observes(scope: Scope): boolean {
  return scope.running || (scope.listeners !== null && scope.listeners.size > 0);
}

/**
 * Creates a running context over `listeners`: what `workflow.createContext()` calls (internal
 * to the package, as upstream's).
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * const { sendEvent } = createWorkflow().createContext(); // calls createContext({ listeners })
 * sendEvent(workflowEvent().with());
 */
export function createContext({ listeners, timeout = null, asyncContext = true }: { listeners: Listeners } & ContextOptions): WorkflowContext {
  const store = asyncContext ? (storage ??= new AsyncLocalStorage()) : null;
  const channels = new Set<StreamChannel<WorkflowEventData<unknown>>>();
  // Events a many-event handler may still take; nothing else waits.
  const waiting: WorkflowEventData<unknown>[] = [];
  let failure: { readonly reason: unknown } | null = null;
  const rootController = new AbortController();
  const rootScope: Scope = { parent: null, running: true, listeners: null, controller: rootController, channel: null, stream: null, trace: undefined };

  const publish = (origin: Scope, event: WorkflowEventData<unknown>) => {
    for (let scope: Scope | null = origin; scope !== null; scope = scope.parent) {
      if (scope.listeners !== null) for (const listener of scope.listeners) listener(event);
    }
  };

  const fail = (scope: Scope, error: unknown) => {
    (scope.controller ?? rootController).abort(error);
    if (failure !== null) return;
    failure = { reason: error };
    for (const channel of [...channels]) channel.fail(error);
    rootScope.channel?.fail(error);
  };

  const settle = (scope: Scope, result: unknown) => {
    scope.running = false;
    if (isEventData(result)) send(scope, result);
  };

  const hooks: ContextHooks = { sent: null, admit: null, started: null, trace: null };

  const runHandler = (handler: HandlerFn, inputEvents: readonly WorkflowEvent<unknown>[], inputs: WorkflowEventData<unknown>[], sender: Scope) => {
    if (hooks.admit !== null && !hooks.admit(inputs)) return;
    let parent: Scope = sender;
    while (parent.parent !== null && !observes(parent)) parent = parent.parent;
    const scope: Scope = { parent, running: true, listeners: null, controller: null, channel: null, stream: null, trace: undefined };
    if (hooks.trace !== null) {
      if (rootScope.trace === undefined) rootScope.trace = hooks.trace.root;
      const traced = hooks.trace.call(handler, inputEvents, inputs, sender.trace ?? rootScope.trace);
      handler = traced.run;
      scope.trace = traced.trace;
    }
    const context = handlerContext(scope);
    let result: unknown;
    const outer = current;
    current = context;
    try {
      result = store === null ? handler(context, ...inputs) : store.run(context, handler, context, ...inputs);
    } catch (error) {
      scope.running = false;
      return fail(scope, error);
    } finally {
      current = outer;
    }
    if (isPromiseLike(result)) {
      const settled = Promise.resolve(result).then(
        (value) => settle(scope, value),
        (error: unknown) => {
          scope.running = false;
          fail(scope, error);
        },
      );
      if (hooks.started !== null) hooks.started(settled);
    } else settle(scope, result);
  };

  const dispatch = (event: WorkflowEventData<unknown>, sender: Scope) => {
    let fanIn = false;
    for (const [accepts, handlers] of listeners) {
      if (accepts.length === 1) {
        if ((accepts[0] as WorkflowEvent<unknown>).include(event)) for (const handler of handlers) runHandler(handler, accepts, [event], sender);
      } else if (!fanIn && accepts.some((type) => type.include(event))) {
        fanIn = true;
      }
    }
    if (!fanIn) return;
    waiting.push(event);
    for (const [accepts, handlers] of listeners) {
      if (accepts.length < 2) continue;
      const inputs = collect(accepts, waiting);
      if (inputs === null) continue;
      for (const input of inputs) waiting.splice(waiting.indexOf(input), 1);
      for (const handler of handlers) runHandler(handler, accepts, inputs, sender);
    }
  };

  const send = (sender: Scope, event: WorkflowEventData<unknown>) => {
    if (hooks.sent !== null) hooks.sent(event);
    if (hooks.trace !== null) hooks.trace.sent(event, sender.trace ?? (rootScope.trace ??= hooks.trace.root));
    publish(sender, event);
    dispatch(event, sender);
  };

  const streamOf = (scope: Scope): WorkflowStream<WorkflowEventData<unknown>> => {
    if (scope.stream !== null) return scope.stream;
    const listener = (event: WorkflowEventData<unknown>) => channel.push(event);
    const open = () => {
      (scope.listeners ??= new Set()).add(listener);
      channels.add(channel);
    };
    const channel: StreamChannel<WorkflowEventData<unknown>> = new StreamChannel(open, () => {
      scope.listeners?.delete(listener);
      channels.delete(channel);
      if (scope === rootScope) clearTimer();
    });
    open();
    // A stream asked for after the run failed fails at once, rather than wait for events that will not come.
    if (failure !== null) channel.fail(failure.reason);
    scope.channel = channel;
    const tap = (l: (event: WorkflowEventData<unknown>) => void) => {
      (scope.listeners ??= new Set()).add(l);
      return () => {
        scope.listeners?.delete(l);
      };
    };
    scope.stream = new WorkflowStream(channel.attach, tap, true);
    return scope.stream;
  };

  const signalOf = (scope: Scope): AbortSignal => {
    if (scope.controller !== null) return scope.controller.signal;
    const controller = new AbortController();
    scope.controller = controller;
    // A handler's own signal also aborts when the run does (a timeout, another handler's failure).
    if (rootController.signal.aborted) controller.abort(rootController.signal.reason);
    else rootController.signal.addEventListener("abort", () => controller.abort(rootController.signal.reason), { once: true });
    return controller.signal;
  };

  const senderOf =
    (scope: Scope) =>
    (...events: WorkflowEventData<unknown>[]) => {
      for (const event of events) send(scope, event);
    };

  const root = {
    get stream() {
      return streamOf(rootScope);
    },
    get signal() {
      return rootController.signal;
    },
    sendEvent: senderOf(rootScope),
  } as WorkflowContext & RootInternals;
  Object.defineProperty(root, HOOKS, { value: hooks });

  const SCOPE = Symbol("scope");
  type ScopedContext = WorkflowContext & { [SCOPE]: Scope; sendEventFn?: WorkflowContext["sendEvent"] };
  // One prototype per context for every handler context: a handler's context is then one
  // small object, and what middleware added to the root stays visible through the prototype.
  const handlerPrototype = Object.create(root, {
    stream: {
      get(this: ScopedContext) {
        return streamOf(this[SCOPE]);
      },
      enumerable: true,
      configurable: true,
    },
    signal: {
      get(this: ScopedContext) {
        return signalOf(this[SCOPE]);
      },
      enumerable: true,
      configurable: true,
    },
    sendEvent: {
      get(this: ScopedContext) {
        const scope = this[SCOPE];
        return senderOf(scope);
      },
      enumerable: true,
      configurable: true,
    },
  }) as WorkflowContext;

  const handlerContext = (scope: Scope): WorkflowContext => {
    const context = Object.create(handlerPrototype) as ScopedContext;
    context[SCOPE] = scope;
    const transformers = root[INHERITANCE];
    if (transformers !== undefined) {
      for (const [key, transformer] of transformers) {
        const descriptor = Object.getOwnPropertyDescriptor(handlerPrototype, key);
        if (descriptor) Object.defineProperty(context, key, transformer(context, descriptor));
      }
    }
    return context;
  };

  let timer: ReturnType<typeof setTimeout> | null = null;
  const clearTimer = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  if (timeout !== null) {
    if (!Number.isFinite(timeout) || timeout <= 0)
      throw new ConfigurationError(`The timeout must be a positive number of milliseconds, or null for none; got ${timeout}.`, "timeout", timeout);
    timer = setTimeout(() => {
      timer = null;
      fail(
        rootScope,
        new WorkflowTimeoutError(
          `The workflow context ran longer than its timeout of ${timeout} ms. Raise createWorkflow({ timeout }), or look for a handler that never sends the event its reader waits for.`,
        ),
      );
    }, timeout);
    rootController.signal.addEventListener("abort", clearTimer, { once: true });
  }

  return root;
}

/** Upstream's matching: each waiting event fills the first still-empty slot whose type includes it. */
function collect(accepts: readonly WorkflowEvent<unknown>[], waiting: readonly WorkflowEventData<unknown>[]): WorkflowEventData<unknown>[] | null {
  const slots = new Array<WorkflowEventData<unknown> | undefined>(accepts.length);
  let filled = 0;
  for (const event of waiting) {
    for (let i = 0; i < accepts.length; i++) {
      if (slots[i] === undefined && (accepts[i] as WorkflowEvent<unknown>).include(event)) {
        slots[i] = event;
        filled++;
        break;
      }
    }
    if (filled === accepts.length) return slots as WorkflowEventData<unknown>[];
  }
  return null;
}
