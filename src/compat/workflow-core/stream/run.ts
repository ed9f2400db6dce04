/**
 * `stepflow/compat/workflow-core/stream/run`: one-call ways to run a workflow, as upstream's
 * `@llamaindex/workflow-core/stream/run`.
 */
import type { AnyWorkflowEventData, WorkflowEvent, WorkflowEventData } from "../event.ts";
import type { WorkflowStream } from "../stream.ts";
import type { Workflow } from "../workflow.ts";

/** Any workflow with `createContext()` (also one wrapped by middleware). */
type Runnable = Pick<Workflow, "createContext">;

/**
 * Sends `events` into a new context of `workflow` and returns its stream (which never ends by
 * itself: cut it with `until` or `take`).
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { run } from "stepflow/compat/workflow-core/stream/run";
 * const Start = workflowEvent<string>();
 * const Stop = workflowEvent<string>();
 * const workflow = createWorkflow();
 * workflow.handle([Start], (_ctx, start) => Stop.with(start.data));
 * const events = await run(workflow, Start.with("42")).until(Stop).toArray();
 */
export function run(workflow: Runnable, events: WorkflowEventData<unknown> | WorkflowEventData<unknown>[]): WorkflowStream<AnyWorkflowEventData> {
  const { stream, sendEvent } = workflow.createContext();
  sendEvent(...(Array.isArray(events) ? events : [events]));
  return stream;
}

/**
 * Runs `workflow` from `inputEvent` and returns the first `outputEvent` (deprecated upstream:
 * `run(...).until(outputEvent).toArray()` says the same).
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { runWorkflow } from "stepflow/compat/workflow-core/stream/run";
 * const Start = workflowEvent<number>();
 * const Stop = workflowEvent<number>();
 * const workflow = createWorkflow();
 * workflow.handle([Start], (_ctx, start) => Stop.with(start.data * 2));
 * console.log((await runWorkflow(workflow, Start.with(21), Stop)).data); // 42
 */
export async function runWorkflow<Data>(
  workflow: Runnable,
  inputEvent: WorkflowEventData<unknown>,
  outputEvent: WorkflowEvent<Data>,
): Promise<WorkflowEventData<Data>> {
  const result = (await run(workflow, inputEvent).until(outputEvent).toArray()).at(-1);
  if (!result || !outputEvent.include(result)) throw new Error("No output event received");
  return result;
}

/**
 * Runs `workflow` from `inputEvent` and returns every event up to and including the first `outputEvent`.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { runAndCollect } from "stepflow/compat/workflow-core/stream/run";
 * const Start = workflowEvent<number>();
 * const Stop = workflowEvent<number>();
 * const workflow = createWorkflow();
 * workflow.handle([Start], (_ctx, start) => Stop.with(start.data));
 * console.log((await runAndCollect(workflow, Start.with(1), Stop)).length); // 2
 */
export async function runAndCollect(
  workflow: Runnable,
  inputEvent: WorkflowEventData<unknown>,
  outputEvent: WorkflowEvent<unknown>,
): Promise<AnyWorkflowEventData[]> {
  return run(workflow, inputEvent).until(outputEvent).toArray();
}

/**
 * Runs `workflow` from `inputEvent`; iterate the result to read each event as it comes, up to
 * and including the first `outputEvent`.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { runStream } from "stepflow/compat/workflow-core/stream/run";
 * const Start = workflowEvent<number>();
 * const Stop = workflowEvent<number>();
 * const workflow = createWorkflow();
 * workflow.handle([Start], (_ctx, start) => Stop.with(start.data));
 * for await (const event of runStream(workflow, Start.with(1), Stop)) console.log(event.data);
 */
export function runStream(
  workflow: Runnable,
  inputEvent: WorkflowEventData<unknown>,
  outputEvent: WorkflowEvent<unknown>,
): AsyncIterableIterator<AnyWorkflowEventData> {
  return run(workflow, inputEvent).until(outputEvent).values();
}
