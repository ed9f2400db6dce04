/**
 * `stepflow/compat/workflow-core`: the API of `@llamaindex/workflow-core` 1.3 (deprecated
 * upstream) on stepflow. Change the import; the code stays. See docs/migrating-from-llamaindex-workflow.md.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * const Start = workflowEvent<string>();
 * const Stop = workflowEvent<string>();
 * const workflow = createWorkflow();
 * workflow.handle([Start], (_ctx, start) => Stop.with(`Hello, ${start.data}!`));
 * const { stream, sendEvent } = workflow.createContext();
 * sendEvent(Start.with("world"));
 * console.log((await stream.until(Stop).toArray()).at(-1)?.data);
 */
export { workflowEvent, or, isWorkflowEvent, isWorkflowEventData, eventSource } from "./event.ts";
export type { AnyWorkflowEventData, WorkflowEvent, WorkflowEventData, WorkflowEventConfig, InferWorkflowEventData, OrEvent } from "./event.ts";
export { WorkflowStream } from "./stream.ts";
export type { StreamSink } from "./stream.ts";
export { extendContext, getContext } from "./context.ts";
export type { Handler, WorkflowContext, InheritanceTransformer, ContextOptions } from "./context.ts";
export { createWorkflow } from "./workflow.ts";
export type { Workflow, WorkflowOptions } from "./workflow.ts";
