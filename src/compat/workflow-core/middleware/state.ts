/**
 * `stepflow/compat/workflow-core/middleware/state`: per-context state for handlers, and
 * snapshots that stop a run at a point (a human's answer awaited) and resume it later, in
 * another process, from JSON — upstream's `createStatefulMiddleware`.
 */
import { createHash } from "node:crypto";
import { extendContext, getContext, HOOKS, type ContextHooks, type Handler, type WorkflowContext } from "../context.ts";
import { eventSource, type WorkflowEvent, type WorkflowEventData } from "../event.ts";
import type { Workflow } from "../workflow.ts";

/**
 * A snapshot: the events still waiting for a handler (by the position of their type among the
 * workflow's registered types), the state as JSON, and a version of the handler registrations.
 * @example
 * import type { SnapshotData } from "stepflow/compat/workflow-core/middleware/state";
 * const saved: SnapshotData = { queue: [["hello", 1]], unrecoverableQueue: [], version: "v", state: "{}" };
 */
export interface SnapshotData {
  queue: [data: unknown, id: number][];
  /** Upstream: data of waiting events no handler accepts. Always empty here: such events are not kept. */
  unrecoverableQueue: unknown[];
  version: string;
  state?: string | undefined;
}

/**
 * Takes a snapshot: waits for the running handlers, then stops the context (no handler runs in it
 * any more) and returns what `resume` needs.
 * @example
 * import type { SnapshotFn } from "stepflow/compat/workflow-core/middleware/state";
 * const take: SnapshotFn = async () => ({ queue: [], unrecoverableQueue: [], version: "" });
 */
export type SnapshotFn = () => Promise<SnapshotData>;

/**
 * A context with `state` and `snapshot`.
 * @example
 * import type { StatefulContext } from "stepflow/compat/workflow-core/middleware/state";
 * const read = (context: StatefulContext<{ count: number }>) => context.state.count;
 */
export type StatefulContext<State = unknown, Context extends WorkflowContext = WorkflowContext> = Context & {
  get state(): State;
  snapshot: SnapshotFn;
};

/**
 * `handle` of a stateful workflow: handlers get a {@link StatefulContext}.
 * @example
 * import type { StatefulHandleFn } from "stepflow/compat/workflow-core/middleware/state";
 * type Handle = StatefulHandleFn<{ count: number }>;
 */
export type StatefulHandleFn<State> = <const AcceptEvents extends WorkflowEvent<unknown>[], Result extends WorkflowEventData<unknown> | void>(
  accept: AcceptEvents,
  handler: Handler<AcceptEvents, Result, StatefulContext<State>>,
) => void;

/**
 * Starts a new context from a snapshot.
 * @example
 * import type { ResumeFunction } from "stepflow/compat/workflow-core/middleware/state";
 * type Resume = ResumeFunction<{ count: number }>;
 */
export type ResumeFunction<State> = (serializable: Omit<SnapshotData, "unrecoverableQueue">) => StatefulContext<State>;

/**
 * A workflow with state: `createContext(input)` makes the state with the middleware's `init`.
 * @example
 * import { createWorkflow } from "stepflow/compat/workflow-core";
 * import { createStatefulMiddleware, type WorkflowWithState } from "stepflow/compat/workflow-core/middleware/state";
 * const { withState } = createStatefulMiddleware((input: { count: number }) => input);
 * const workflow = withState(createWorkflow());
 */
export type WorkflowWithState<State, Input> = [Input] extends [void | undefined]
  ? <W extends Workflow>(
      workflow: W,
    ) => Omit<W, "createContext" | "handle"> & { createContext(): StatefulContext<State>; handle: StatefulHandleFn<State>; resume: ResumeFunction<State> }
  : <W extends Workflow>(
      workflow: W,
    ) => Omit<W, "createContext" | "handle"> & {
      createContext(input: Input): StatefulContext<State>;
      handle: StatefulHandleFn<State>;
      resume: ResumeFunction<State>;
    };

/**
 * What {@link createStatefulMiddleware} returns.
 * @example
 * import { createStatefulMiddleware, type CreateState } from "stepflow/compat/workflow-core/middleware/state";
 * const middleware: CreateState<{ n: number }, void> = createStatefulMiddleware(() => ({ n: 0 }));
 */
export type CreateState<State, Input, Context extends WorkflowContext = WorkflowContext> = {
  getContext(): StatefulContext<State, Context>;
  withState: WorkflowWithState<State, Input>;
};

/**
 * Creates the state middleware; `init` turns `createContext(input)`'s input into the state.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { createStatefulMiddleware } from "stepflow/compat/workflow-core/middleware/state";
 * const Start = workflowEvent();
 * const Stop = workflowEvent<number>();
 * const { withState } = createStatefulMiddleware((input: { count: number }) => input);
 * const workflow = withState(createWorkflow());
 * workflow.handle([Start], (context) => Stop.with(++context.state.count));
 * const { stream, sendEvent } = workflow.createContext({ count: 41 });
 * sendEvent(Start.with());
 * console.log((await stream.untilEvent(Stop)).data); // 42
 */
export function createStatefulMiddleware<State, Input = void, Context extends WorkflowContext = WorkflowContext>(
  init?: (input: Input) => State,
): CreateState<State, Input, Context> {
  const withState = (workflow: Workflow) => {
    // Event types get a number in the order the workflow registers them: a snapshot names
    // types by it, so the resuming process must register the same handlers in the same order.
    const typeIds = new Map<WorkflowEvent<unknown>, number>();
    const typesById: WorkflowEvent<unknown>[] = [];
    const registrations: string[] = [];

    const createStatefulContext = (state: State): StatefulContext<State> => {
      const context = workflow.createContext();
      const hooks = (context as WorkflowContext & { [HOOKS]: ContextHooks })[HOOKS];
      // Sent and not yet taken by a handler: what a snapshot saves.
      const waiting = new Set<WorkflowEventData<unknown>>();
      const running = new Set<Promise<void>>();
      let locked = false;
      let taken = false;
      hooks.sent = (event) => {
        // An event sent once the snapshot was taken (by a timer a handler set) is in neither
        // the snapshot nor any run: say so, in upstream's words.
        if (taken) console.warn("snapshot is already ready, sendEvent after snapshot is not allowed");
        // Only events a handler may take can be resumed; keeping others would only grow.
        const type = eventSource(event);
        if (type !== undefined && typeIds.has(type)) waiting.add(event);
      };
      hooks.admit = (inputs) => {
        if (locked) return false;
        for (const input of inputs) waiting.delete(input);
        return true;
      };
      hooks.started = (settled) => {
        running.add(settled);
        void settled.then(() => running.delete(settled));
      };
      const snapshot: SnapshotFn = async () => {
        if (locked) throw new Error("Context is already locked, you cannot snapshot a same context twice");
        locked = true;
        while (running.size > 0) await Promise.all([...running]);
        const queue: [unknown, number][] = [];
        for (const event of waiting) queue.push([event.data, typeIds.get(eventSource(event) as WorkflowEvent<unknown>) as number]);
        taken = true;
        return {
          queue,
          unrecoverableQueue: [],
          version: createHash("sha256").update(registrations.join("\n")).digest("hex").slice(0, 16),
          state: state === undefined ? undefined : JSON.stringify(state),
        };
      };
      extendContext(context, {
        get state() {
          return state;
        },
        snapshot,
      });
      return context as StatefulContext<State>;
    };

    return {
      ...workflow,
      handle(accept: WorkflowEvent<unknown>[], handler: Handler<WorkflowEvent<unknown>[], WorkflowEventData<unknown> | void, StatefulContext<State>>) {
        const ids = accept.map((type) => {
          let id = typeIds.get(type);
          if (id === undefined) {
            id = typesById.length;
            typeIds.set(type, id);
            typesById.push(type);
          }
          return id;
        });
        registrations.push(`${ids.join(",")}:${handler.toString()}`);
        workflow.handle(accept, handler as Handler<WorkflowEvent<unknown>[], WorkflowEventData<unknown> | void>);
      },
      createContext(input?: Input): StatefulContext<State> {
        return createStatefulContext(init?.(input as Input) as State);
      },
      resume(serializable: Omit<SnapshotData, "unrecoverableQueue">): StatefulContext<State> {
        const state = serializable.state === undefined ? undefined : (JSON.parse(serializable.state) as State);
        const events = serializable.queue.map(([data, id]) => {
          const type = typesById[id];
          if (type === undefined)
            throw new Error(
              `The snapshot names event type #${id}, which this workflow does not register. Register the same handlers, in the same order, as the workflow that took the snapshot.`,
            );
          return type.with(data);
        });
        const context = createStatefulContext(state as State);
        void context.stream; // the stream exists before the events are sent, so a reader sees them
        context.sendEvent(...events);
        return context;
      },
    };
  };
  return {
    getContext: getContext as () => StatefulContext<State, Context>,
    withState: withState as unknown as WorkflowWithState<State, Input>,
  };
}
