/**
 * `stepflow/compat/workflow-core/stream/find`: read a stream up to the first event of a type.
 */
import type { WorkflowEvent, WorkflowEventData } from "../event.ts";

/**
 * Reads `stream` until an event of type `event` and returns it (the rest stays unread, and the
 * stream is released); rejects if the stream ends first.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { find } from "stepflow/compat/workflow-core/stream/find";
 * const Start = workflowEvent();
 * const Stop = workflowEvent<string>();
 * const workflow = createWorkflow();
 * workflow.handle([Start], () => Stop.with("done"));
 * const { stream, sendEvent } = workflow.createContext();
 * sendEvent(Start.with());
 * console.log((await find(stream, Stop)).data); // "done"
 */
export async function find<T>(stream: ReadableStream<WorkflowEventData<unknown>>, event: WorkflowEvent<T>): Promise<WorkflowEventData<T>> {
  const reader = stream.getReader();
  try {
    for (let result = await reader.read(); !result.done; result = await reader.read()) {
      if (event.include(result.value)) return result.value;
    }
  } finally {
    reader.releaseLock();
  }
  throw new Error(`Event ${event.toString()} not found`);
}
