/**
 * `stepflow/compat/workflow-core/middleware/trace-events`: upstream's `withTraceEvents` —
 * plugins that wrap every handler, handler decorators with per-context metadata (`runOnce`),
 * where an event came from (`getEventOrigins`) and the events one event caused (`substream`).
 *
 * Each handler call becomes a {@link HandlerContext} node: its inputs, the call that sent them
 * (`prev`), the calls still running or with running descendants (`next`). Unlike upstream, a
 * finished call leaves `next` once its own descendants have finished (all but the last call of
 * each handler under a running call or the root), so a long run does not keep every call it
 * made; `prev` chains are kept as long as their events are referenced.
 */
import { ConfigurationError } from "../../../index.ts";
import { getContext, HOOKS, type ContextHooks, type Handler, type HandlerFn, type WorkflowContext } from "../context.ts";
import type { AnyWorkflowEventData, WorkflowEvent, WorkflowEventData } from "../event.ts";
import type { WorkflowStream } from "../stream.ts";

/**
 * One handler call as trace plugins and decorators see it (upstream's `HandlerContext`).
 * @example
 * import type { HandlerContext } from "stepflow/compat/workflow-core/middleware/trace-events";
 * const describe = (call: HandlerContext) => `${call.inputs.length} inputs, ${call.async ? "async" : "sync"}`;
 */
export interface HandlerContext {
  /** The function the workflow registered (before plugins and decorators). */
  readonly handler: HandlerFn;
  /** The event types the handler accepts. */
  readonly inputEvents: readonly WorkflowEvent<unknown>[];
  /** The events it was called with. */
  readonly inputs: readonly AnyWorkflowEventData[];
  /** The events it sent, returned one included. */
  readonly outputs: AnyWorkflowEventData[];
  /** The call that sent its inputs; the root's `prev` is null. */
  readonly prev: HandlerContext | null;
  /** Calls it caused that are running or have running descendants, and, while it runs (always for the root), the last finished call of each handler. */
  readonly next: Set<HandlerContext>;
  /** The root of the context (events sent from outside any handler). */
  readonly root: HandlerContext;
  /** Whether the handler returned a promise. */
  async: boolean;
  /** That promise, while the handler runs; null for a synchronous handler. */
  pending: Promise<unknown> | null;
}

/**
 * What `handle` of a traced workflow returns: the handler it registered, after the plugins.
 * @example
 * import type { HandlerRef } from "stepflow/compat/workflow-core/middleware/trace-events";
 * const registered = (ref: HandlerRef<() => void>) => ref.handler;
 */
export interface HandlerRef<Fn> {
  get handler(): Fn;
}

/**
 * A plugin: takes a handler, returns the one to register in its place.
 * @example
 * import type { TracePlugin } from "stepflow/compat/workflow-core/middleware/trace-events";
 * const logged: TracePlugin = (handler) => (context, ...events) => {
 *   console.log("handling", events.map(String).join(", "));
 *   return handler(context, ...events);
 * };
 */
export type TracePlugin = (handler: HandlerFn) => HandlerFn;

/**
 * Options of {@link withTraceEvents}.
 * @example
 * import type { WithTraceEventsOptions } from "stepflow/compat/workflow-core/middleware/trace-events";
 * const options: WithTraceEventsOptions = { plugins: [(handler) => handler] };
 */
export interface WithTraceEventsOptions {
  /** Applied to every handler registered through the traced workflow, first to last. */
  readonly plugins?: readonly TracePlugin[];
}

interface Decorator {
  readonly handlers: WeakSet<object>;
  readonly getInitialValue: () => unknown;
  readonly onBeforeHandler: (handler: HandlerFn, handlerContext: HandlerContext, metadata: unknown) => HandlerFn;
  readonly onAfterHandler: (metadata: unknown) => unknown;
}

const decorators = new Map<string, Decorator>();
let decoratorCount = 0;

/**
 * Creates a handler decorator: wrapping a handler with it (`decorator(handler)`) marks it, and
 * in a workflow made by {@link withTraceEvents} every call of a marked handler goes through
 * `onBeforeHandler`, with metadata kept per context and handler, which `onAfterHandler`
 * updates when the call has finished.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { createHandlerDecorator, withTraceEvents } from "stepflow/compat/workflow-core/middleware/trace-events";
 * const counted = createHandlerDecorator<{ calls: number }>({
 *   getInitialValue: () => ({ calls: 0 }),
 *   onBeforeHandler: (handler, _call, metadata) => (context, ...events) => {
 *     metadata.calls++;
 *     return handler(context, ...events);
 *   },
 *   onAfterHandler: (metadata) => metadata,
 * });
 * const Start = workflowEvent();
 * const workflow = withTraceEvents(createWorkflow());
 * workflow.handle([Start], counted(() => {}));
 * workflow.createContext().sendEvent(Start.with());
 */
export function createHandlerDecorator<Metadata>(config: {
  debugLabel?: string;
  getInitialValue: () => Metadata;
  onBeforeHandler: (handler: HandlerFn, handlerContext: HandlerContext, metadata: Metadata) => HandlerFn;
  onAfterHandler: (metadata: Metadata) => Metadata;
}): <Fn extends (...args: never[]) => unknown>(handler: Fn) => Fn {
  const id = `decorator:${decoratorCount++}`;
  const decorator: Decorator = {
    handlers: new WeakSet(),
    getInitialValue: config.getInitialValue,
    onBeforeHandler: config.onBeforeHandler as Decorator["onBeforeHandler"],
    onAfterHandler: config.onAfterHandler as Decorator["onAfterHandler"],
  };
  decorators.set(id, decorator);
  return (handler) => {
    if (typeof handler !== "function") throw new ConfigurationError(`A handler decorator takes a handler function; got ${typeof handler}.`, "handler", handler);
    decorator.handlers.add(handler);
    return handler;
  };
}

const noop = () => {};

/**
 * Marks a handler to run once per context: later events it would take are ignored.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { runOnce, withTraceEvents } from "stepflow/compat/workflow-core/middleware/trace-events";
 * const Start = workflowEvent();
 * const workflow = withTraceEvents(createWorkflow());
 * workflow.handle([Start], runOnce(() => console.log("once")));
 * const { sendEvent } = workflow.createContext();
 * sendEvent(Start.with(), Start.with()); // prints "once" one time
 */
export const runOnce = createHandlerDecorator<boolean>({
  debugLabel: "onceHook",
  getInitialValue: () => false,
  onBeforeHandler: (handler, _call, ran) => (ran ? noop : handler),
  onAfterHandler: () => true,
});

/** The call that sent each event, then the call that took it (what `substream` follows). */
const eventCalls = new WeakMap<object, HandlerContext>();
/** The call each handler's context belongs to (what `getEventOrigins` starts from). */
const contextCalls = new WeakMap<object, HandlerContext>();

/**
 * The inputs of the call, made by the handler whose context is `context`, that led to
 * `eventData`: e.g. which of the branches a handler started a result came from.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { getEventOrigins, withTraceEvents } from "stepflow/compat/workflow-core/middleware/trace-events";
 * const Start = workflowEvent();
 * const Branch = workflowEvent<string>({ debugLabel: "branch" });
 * const Done = workflowEvent<string>();
 * const workflow = withTraceEvents(createWorkflow());
 * workflow.handle([Branch], (_context, branch) => Done.with(branch.data));
 * workflow.handle([Start], async (context) => {
 *   context.sendEvent(Branch.with("a"));
 *   const [done] = await context.stream.filter(Done).take(1).toArray();
 *   if (done) console.log(String(getEventOrigins(done, context)[0])); // "branch"
 * });
 */
export function getEventOrigins(
  eventData: WorkflowEventData<unknown>,
  context: WorkflowContext = getContext(),
): [AnyWorkflowEventData, ...AnyWorkflowEventData[]] {
  const from = contextCalls.get(context);
  let call = eventCalls.get(eventData);
  if (from === undefined || call === undefined)
    throw new Error(
      "getEventOrigins() needs an event and a context of a workflow made by withTraceEvents(), and the event must have been sent in that context.",
    );
  for (; call.prev !== null; call = call.prev) {
    if (call.prev === from) return call.inputs as [AnyWorkflowEventData, ...AnyWorkflowEventData[]];
  }
  throw new Error("The event was not caused by an event the given context sent: pass the context of the handler that started the chain of events.");
}

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> => value != null && typeof (value as { then?: unknown }).then === "function";

function attach(call: HandlerContext, detached: WeakSet<HandlerContext>): void {
  for (let node = call; node.prev !== null && detached.has(node); node = node.prev) {
    detached.delete(node);
    node.prev.next.add(node);
  }
}

/**
 * A finished call without running descendants leaves its parent's `next`, and so may its parent;
 * except the last finished call of each handler under a parent still alive (running, or the
 * root): decorators written for upstream (a "no parallel" one) look for the previous call of
 * their handler there. So a context keeps one finished call per handler and parent, not every call.
 */
function prune(
  call: HandlerContext,
  finished: WeakSet<HandlerContext>,
  detached: WeakSet<HandlerContext>,
  lastOf: WeakMap<HandlerContext, Map<HandlerFn, HandlerContext>>,
): void {
  // Its finished children were kept only while it ran.
  for (const child of call.next) {
    if (finished.has(child) && child.next.size === 0) {
      call.next.delete(child);
      detached.add(child);
    }
  }
  lastOf.delete(call);
  for (let node: HandlerContext | null = call; node?.prev != null && finished.has(node) && node.next.size === 0; node = node.prev) {
    const parent: HandlerContext = node.prev;
    if (parent.prev === null || !finished.has(parent)) {
      let last = lastOf.get(parent);
      if (last === undefined) lastOf.set(parent, (last = new Map()));
      const previous = last.get(node.handler);
      last.set(node.handler, node);
      if (previous !== undefined && previous !== node && previous.next.size === 0) {
        parent.next.delete(previous);
        detached.add(previous);
      }
      return;
    }
    parent.next.delete(node);
    detached.add(node);
  }
}

/**
 * Adds tracing to a workflow: `plugins` wrap every handler registered through it, decorators
 * (see {@link createHandlerDecorator}) take effect, `handle` returns a {@link HandlerRef}, and
 * `substream(event, stream)` keeps the events `event` caused.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { withTraceEvents } from "stepflow/compat/workflow-core/middleware/trace-events";
 * const Start = workflowEvent<string>();
 * const Stop = workflowEvent<string>();
 * const workflow = withTraceEvents(createWorkflow(), {
 *   plugins: [(handler) => (context, ...events) => {
 *     console.log(`running a handler of ${events.map(String).join(", ")}`);
 *     return handler(context, ...events);
 *   }],
 * });
 * workflow.handle([Start], (_context, start) => Stop.with(start.data));
 * const { stream, sendEvent } = workflow.createContext();
 * sendEvent(Start.with("hi"));
 * console.log((await stream.untilEvent(Stop)).data);
 */
export function withTraceEvents<
  WorkflowLike extends {
    handle<const AcceptEvents extends WorkflowEvent<unknown>[], Result extends WorkflowEventData<unknown> | void>(
      accept: AcceptEvents,
      handler: Handler<AcceptEvents, Result>,
    ): void;
    createContext(...args: never[]): WorkflowContext;
  },
>(
  workflow: WorkflowLike,
  options: WithTraceEventsOptions = {},
): Omit<WorkflowLike, "handle"> & {
  handle<const AcceptEvents extends WorkflowEvent<unknown>[], Result extends WorkflowEventData<unknown> | void, Fn extends Handler<AcceptEvents, Result>>(
    accept: AcceptEvents,
    handler: Fn,
  ): HandlerRef<Fn>;
  substream<T extends WorkflowEventData<unknown>>(eventData: WorkflowEventData<unknown>, stream: WorkflowStream<T>): WorkflowStream<T>;
} {
  const plugins = options.plugins ?? [];
  const createContext = (...args: never[]): WorkflowContext => {
    const context = workflow.createContext(...args);
    const hooks = (context as WorkflowContext & { [HOOKS]?: ContextHooks })[HOOKS];
    if (hooks === undefined)
      throw new ConfigurationError(
        "withTraceEvents() takes a workflow of stepflow/compat/workflow-core (createWorkflow(), or one wrapped by its middleware).",
        "workflow",
        workflow,
      );
    const root: HandlerContext = {
      handler: noop,
      inputEvents: [],
      inputs: [],
      outputs: [],
      prev: null,
      next: new Set(),
      root: null as unknown as HandlerContext,
      async: false,
      pending: null,
    };
    (root as { root: HandlerContext }).root = root;
    contextCalls.set(context, root);
    // Per handler registration (its accepted types, then its function): each decorator's metadata.
    const metadata = new WeakMap<object, WeakMap<HandlerFn, Map<string, unknown>>>();
    const finished = new WeakSet<HandlerContext>();
    const detached = new WeakSet<HandlerContext>();
    const lastOf = new WeakMap<HandlerContext, Map<HandlerFn, HandlerContext>>();
    hooks.trace = {
      root,
      sent(event, trace) {
        const call = trace as HandlerContext;
        if (call !== root) call.outputs.push(event as AnyWorkflowEventData);
        eventCalls.set(event, call);
      },
      call(handler, inputEvents, inputs, parent) {
        const prev = parent as HandlerContext;
        const call: HandlerContext = {
          handler,
          inputEvents,
          inputs: inputs as AnyWorkflowEventData[],
          outputs: [],
          prev,
          next: new Set(),
          root,
          async: false,
          pending: null,
        };
        attach(prev, detached);
        prev.next.add(call);
        for (const input of inputs) eventCalls.set(input, call);
        let byHandler = metadata.get(inputEvents);
        if (byHandler === undefined) metadata.set(inputEvents, (byHandler = new WeakMap()));
        let values = byHandler.get(handler);
        if (values === undefined) byHandler.set(handler, (values = new Map()));
        const before: ((next: HandlerFn) => HandlerFn)[] = [];
        const after: (() => void)[] = [];
        for (const [id, decorator] of decorators) {
          if (!decorator.handlers.has(handler)) continue;
          if (!values.has(id)) values.set(id, decorator.getInitialValue());
          const store = values;
          before.push((next) => decorator.onBeforeHandler(next, call, store.get(id)));
          after.push(() => store.set(id, decorator.onAfterHandler(store.get(id))));
        }
        const done = () => {
          call.pending = null;
          finished.add(call);
          prune(call, finished, detached, lastOf);
        };
        const run: HandlerFn = (handlerContext, ...events) => {
          contextCalls.set(handlerContext, call);
          const wrapped = before.reduce((next, wrap) => wrap(next), handler);
          let result: unknown;
          try {
            result = wrapped(handlerContext, ...events);
          } catch (error) {
            done();
            throw error;
          }
          if (!isPromiseLike(result)) {
            for (const update of after) update();
            done();
            return result;
          }
          call.async = true;
          const pending = Promise.resolve(result).then(
            (value) => {
              for (const update of after) update();
              done();
              return value;
            },
            (error: unknown) => {
              done();
              throw error;
            },
          );
          call.pending = pending;
          return pending;
        };
        return { run, trace: call };
      },
    };
    return context;
  };

  return {
    ...workflow,
    createContext,
    handle(accept, handler) {
      let registered = handler as unknown as HandlerFn;
      for (const plugin of plugins) registered = plugin(registered);
      workflow.handle(accept, registered as unknown as Handler<typeof accept, WorkflowEventData<unknown> | void>);
      return {
        get handler() {
          return registered as unknown as typeof handler;
        },
      };
    },
    substream(eventData, stream) {
      const origin = eventCalls.get(eventData);
      return stream.filter((event: unknown) => {
        for (
          let call = typeof event === "object" && event !== null ? eventCalls.get(event) : undefined;
          call !== undefined && call !== null;
          call = call.prev ?? undefined
        ) {
          if (call === origin) return true;
        }
        return false;
      });
    },
  } as Omit<WorkflowLike, "handle"> & {
    handle<const AcceptEvents extends WorkflowEvent<unknown>[], Result extends WorkflowEventData<unknown> | void, Fn extends Handler<AcceptEvents, Result>>(
      accept: AcceptEvents,
      handler: Fn,
    ): HandlerRef<Fn>;
    substream<T extends WorkflowEventData<unknown>>(eventData: WorkflowEventData<unknown>, stream: WorkflowStream<T>): WorkflowStream<T>;
  };
}
