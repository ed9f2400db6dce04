/** Helpers shared by the benchmarks: timing, heap, and table printing. */

/** Collects garbage when node runs with --expose-gc (npm run bench does). */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * Collects the young generation only (a scavenge), when node runs with --expose-gc: a timed run
 * after it inherits no garbage from the runs before it, and keeps its optimized code. A full
 * GC with no run alive frees the hidden classes of the engine's objects, V8 throws away the
 * optimized functions that depend on them, and a short run after it is measured cold.
 */
export function collectYoungGarbage(): void {
  (globalThis as { gc?: (options: { type: "minor" }) => void }).gc?.({ type: "minor" });
}

export interface Measurement {
  readonly name: string;
  readonly events: number;
  readonly ms: number;
  /** Heap used at the end of the run minus before it, garbage included (an upper bound on what the run held). */
  readonly heapGrowthMB: number;
  /** Heap still used after a full GC: what the run retained. */
  readonly retainedMB: number;
  readonly note?: string;
}

/** Runs `body` once for `events` events and measures wall time and retained heap growth. */
export async function measure(name: string, events: number, body: () => Promise<unknown>, note?: string): Promise<Measurement> {
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const kept = await body();
  const ms = performance.now() - started;
  const heapGrowthMB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  collectGarbage();
  const retainedMB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  void kept; // held until here so that what the run retains is counted
  return { name, events, ms, heapGrowthMB, retainedMB, note };
}

export const perEventMicros = (m: Measurement) => (m.ms * 1000) / m.events;

/** Prints rows as a Markdown table (pasteable into the README). */
export function printTable(headers: string[], rows: (string | number)[][]): void {
  console.log(`| ${headers.join(" | ")} |`);
  console.log(`|${headers.map(() => "---").join("|")}|`);
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
}
