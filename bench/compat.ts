/**
 * Compat benchmark: the same ping-pong (start → ping ↔ pong → stop, async handlers, the run read
 * with `stream.until(stop).toArray()`) on `stepflow/compat/workflow-core`, on stepflow's engine
 * (native `@step`s) and on @llamaindex/workflow-core, in one process.
 */
import * as compat from "../src/compat/workflow-core/index.ts";
import { stepflow, stepflowConsumed, workflowCore } from "./engine.ts";
import { measure, perEventMicros, printTable } from "./measure.ts";
import type { Measurement } from "./measure.ts";

/** The upstream benchmark's code with only the import changed. */
async function compatPingPong(events: number): Promise<number> {
  const { createWorkflow, workflowEvent } = compat;
  const start = workflowEvent<number>();
  const ping = workflowEvent<number>();
  const pong = workflowEvent<number>();
  const stop = workflowEvent<number>();
  const wf = createWorkflow();
  wf.handle([start], async (_ctx, ev) => ping.with(ev.data + 1));
  wf.handle([ping], async (_ctx, ev) => pong.with(ev.data + 1));
  wf.handle([pong], async (_ctx, ev) => (ev.data >= events ? stop.with(ev.data) : ping.with(ev.data + 1)));
  const { stream, sendEvent } = wf.createContext();
  sendEvent(start.with(0));
  const all = await stream.until(stop).toArray();
  return (all.at(-1) as { data: number }).data;
}

/**
 * The same, read with `untilEvent(stop)`: nothing collected, so what stays is what the run kept.
 * `asyncContext: false` measures what `getContext()` after an `await` (AsyncLocalStorage) costs.
 */
async function compatUntilEvent(events: number, asyncContext = true): Promise<number> {
  const { createWorkflow, workflowEvent } = compat;
  const start = workflowEvent<number>();
  const ping = workflowEvent<number>();
  const pong = workflowEvent<number>();
  const stop = workflowEvent<number>();
  const wf = createWorkflow({ asyncContext });
  wf.handle([start], async (_ctx, ev) => ping.with(ev.data + 1));
  wf.handle([ping], async (_ctx, ev) => pong.with(ev.data + 1));
  wf.handle([pong], async (_ctx, ev) => (ev.data >= events ? stop.with(ev.data) : ping.with(ev.data + 1)));
  const { stream, sendEvent } = wf.createContext();
  sendEvent(start.with(0));
  return (await stream.untilEvent(stop)).data as number;
}

/** Runs the compat table. */
export async function benchCompat(events = 1_000_000): Promise<Measurement[]> {
  const rows: Measurement[] = [];
  // Warmed up and measured first with asyncContext: false, while Node's promise hooks are still
  // off: the first AsyncLocalStorage run switches them on for the rest of the process.
  for (let i = 0; i < 3; i++) {
    await stepflow(20_000);
    await compatUntilEvent(20_000, false);
  }
  rows.push(await measure("stepflow native (@step classes)", events, () => stepflow(events)));
  rows.push(await measure("stepflow native + streamEvents() reader", events, () => stepflowConsumed(events)));
  rows.push(await measure("compat: untilEvent, createWorkflow({ asyncContext: false })", events, () => compatUntilEvent(events, false)));
  await compatPingPong(20_000);
  rows.push(await measure("compat: stream.until(stop).toArray()", events, () => compatPingPong(events)));
  rows.push(await measure("compat: stream.untilEvent(stop)", events, () => compatUntilEvent(events)));
  for (const n of [2_000, 10_000]) rows.push(await measure(`@llamaindex/workflow-core 1.3.4, N=${n.toLocaleString("en")}`, n, () => workflowCore(n)));
  const native = rows[1] as Measurement;
  printTable(
    ["run", "events", "µs/event", "× native with reader", "heap growth, before GC (MB)", "retained after GC (MB)"],
    rows.map((r) => [
      r.name,
      r.events.toLocaleString("en"),
      perEventMicros(r).toFixed(3),
      (perEventMicros(r) / perEventMicros(native)).toFixed(2),
      r.heapGrowthMB.toFixed(1),
      r.retainedMB.toFixed(1),
    ]),
  );
  return rows;
}
