/**
 * `createWorkflow()`: a registry of handlers by the event types they accept, and the factory of
 * contexts that run them.
 */
import { ConfigurationError } from "../../index.ts";
import { createContext, type ContextOptions, type Handler, type Listeners, type WorkflowContext } from "./context.ts";
import type { WorkflowEvent, WorkflowEventData } from "./event.ts";

/**
 * A workflow: register handlers with `handle`, run them in a context from `createContext`.
 * @example
 * import { createWorkflow, workflowEvent, type Workflow } from "stepflow/compat/workflow-core";
 * const Start = workflowEvent<string>();
 * const Stop = workflowEvent<string>();
 * const workflow: Workflow = createWorkflow();
 * workflow.handle([Start], (_ctx, start) => Stop.with(start.data.toUpperCase()));
 * const { stream, sendEvent } = workflow.createContext();
 * sendEvent(Start.with("hi"));
 * console.log((await stream.until(Stop).toArray()).at(-1)?.data); // "HI"
 */
export type Workflow = {
  /**
   * Runs `handler` whenever the events it accepts have arrived: at once for one type; for
   * several (`[A, B]`), when one of each is waiting (fan-in). A returned event is sent.
   */
  handle<const AcceptEvents extends WorkflowEvent<unknown>[], Result extends WorkflowEventData<unknown> | void>(
    accept: AcceptEvents,
    handler: Handler<AcceptEvents, Result>,
  ): void;
  /** A new, independent run: send events into it and read its stream. */
  createContext(): WorkflowContext;
};

/**
 * Options of {@link createWorkflow} (stepflow's addition: upstream takes none).
 * @example
 * import { createWorkflow, type WorkflowOptions } from "stepflow/compat/workflow-core";
 * const options: WorkflowOptions = { timeout: 60_000 };
 * const workflow = createWorkflow(options);
 */
export type WorkflowOptions = ContextOptions;

/**
 * Creates a workflow.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * const Start = workflowEvent<number>();
 * const Stop = workflowEvent<number>();
 * const workflow = createWorkflow({ timeout: 10_000 });
 * workflow.handle([Start], async (_ctx, start) => Stop.with(start.data + 1));
 * const { stream, sendEvent } = workflow.createContext();
 * sendEvent(Start.with(1));
 * console.log((await stream.until(Stop).toArray()).length); // 2
 */
export function createWorkflow(options: WorkflowOptions = {}): Workflow {
  if (options.timeout !== undefined && options.timeout !== null && (!Number.isFinite(options.timeout) || options.timeout <= 0)) {
    throw new ConfigurationError(
      `createWorkflow({ timeout }) takes a positive number of milliseconds, or null for none; got ${String(options.timeout)}.`,
      "timeout",
      options.timeout,
    );
  }
  const listeners: Listeners = new Map();
  return {
    handle(accept, handler) {
      if (!Array.isArray(accept) || accept.length === 0)
        throw new ConfigurationError(
          "workflow.handle() takes a non-empty array of event types first, for example workflow.handle([startEvent], handler).",
          "accept",
          accept,
        );
      const key = accept as readonly WorkflowEvent<unknown>[];
      let handlers = listeners.get(key);
      if (handlers === undefined) listeners.set(key, (handlers = new Set()));
      handlers.add(handler as unknown as (context: WorkflowContext, ...events: WorkflowEventData<unknown>[]) => unknown);
    },
    createContext() {
      return createContext({ listeners, timeout: options.timeout ?? null, asyncContext: options.asyncContext ?? true });
    },
  };
}
