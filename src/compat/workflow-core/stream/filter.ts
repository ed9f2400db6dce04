/**
 * `stepflow/compat/workflow-core/stream/filter` (deprecated upstream: `stream.filter(...)`).
 */
import type { WorkflowEventData } from "../event.ts";
import { WorkflowStream } from "../stream.ts";

/**
 * The events of `stream` for which `cond` returns true.
 * @example
 * import { workflowEvent } from "stepflow/compat/workflow-core";
 * import { filter } from "stepflow/compat/workflow-core/stream/filter";
 * const Tick = workflowEvent<number>();
 * const source = ReadableStream.from([Tick.with(1), Tick.with(2)]);
 * console.log((await filter(source, (ev) => ev.data > 1).toArray()).length); // 1
 */
export function filter<T extends WorkflowEventData<unknown>>(stream: ReadableStream<T>, cond: (event: T) => boolean): WorkflowStream<T> {
  return WorkflowStream.fromReadableStream(stream).filter(cond);
}
