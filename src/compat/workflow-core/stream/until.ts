/**
 * `stepflow/compat/workflow-core/stream/until`: cut a stream after the first matching event
 * (deprecated upstream: `stream.until(...)` does the same).
 */
import { isWorkflowEvent, type WorkflowEvent, type WorkflowEventData } from "../event.ts";
import { WorkflowStream } from "../stream.ts";

/**
 * The events of `stream` up to and including the first that is of type `cond` or for which
 * `cond` returns (or resolves to) true.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { until } from "stepflow/compat/workflow-core/stream/until";
 * const Start = workflowEvent();
 * const Stop = workflowEvent();
 * const workflow = createWorkflow();
 * workflow.handle([Start], () => Stop.with());
 * const { stream, sendEvent } = workflow.createContext();
 * sendEvent(Start.with());
 * console.log((await until(stream, Stop).toArray()).length); // 2
 */
export function until<T extends WorkflowEventData<unknown>>(
  stream: ReadableStream<T>,
  cond: WorkflowEvent<unknown> | ((event: T) => boolean | Promise<boolean>),
): WorkflowStream<T> {
  const reader = stream.getReader();
  return WorkflowStream.fromReadableStream(
    new ReadableStream<T>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          reader.releaseLock();
          return controller.close();
        }
        controller.enqueue(value);
        const matched = isWorkflowEvent(cond) ? cond.include(value) : await cond(value);
        if (matched) {
          reader.releaseLock();
          controller.close();
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    }),
  );
}
