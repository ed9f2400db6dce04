/**
 * `stepflow/compat/workflow-core/stream/consumer` (deprecated upstream: `stream.toArray()`).
 * Do not pass a context's raw stream: it never ends; cut it with `until` first.
 */

/**
 * Reads `stream` to its end, keeping nothing.
 * @example
 * import { nothing } from "stepflow/compat/workflow-core/stream/consumer";
 * await nothing(ReadableStream.from([1, 2]));
 */
export async function nothing(stream: ReadableStream<unknown>): Promise<void> {
  await stream.pipeTo(new WritableStream({ write: () => {} }));
}

/**
 * Reads `stream` to its end and returns its items.
 * @example
 * import { collect } from "stepflow/compat/workflow-core/stream/consumer";
 * console.log(await collect(ReadableStream.from([1, 2]))); // [1, 2]
 */
export async function collect<T>(stream: ReadableStream<T>): Promise<T[]> {
  const items: T[] = [];
  await stream.pipeTo(new WritableStream({ write: (item) => void items.push(item) }));
  return items;
}
