/**
 * The engine of this checkout against the engine of another, in one process:
 * `node --import tsx --expose-gc bench/engine-ab.ts OTHER_CHECKOUT [ROUNDS]`. Each round runs, for
 * each side in turn (rotating which goes first), the engine benchmark's workloads with that
 * checkout's own bench/engine.ts (and so its own engine): a ping-pong of 200,000 events, the same
 * with every event streamed to a reader, and a fan-out of 10,000 events. Prints each side's
 * median microseconds per event, and their ratio.
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { printTable } from "./measure.ts";

const [otherRoot, roundsArg] = process.argv.slice(2);
if (!otherRoot) throw new Error("Usage: bench/engine-ab.ts OTHER_CHECKOUT [ROUNDS]");
const rounds = Number(roundsArg ?? 15);
const here = resolve(import.meta.dirname, "..");

interface Workload {
  readonly name: string;
  readonly events: number;
  readonly run: (engine: EngineBench) => Promise<number>;
}
interface EngineBench {
  stepflow(events: number): Promise<number>;
  stepflowConsumed(events: number): Promise<number>;
  fanOut(events: number): Promise<number>;
}

const workloads: Workload[] = [
  { name: "ping-pong, 200,000 events", events: 200_000, run: (e) => e.stepflow(200_000) },
  { name: "ping-pong, 100,000 events streamed to a reader", events: 100_000, run: (e) => e.stepflowConsumed(100_000) },
  { name: "fan-out, 10,000 events through 8 workers, collected", events: 10_000, run: (e) => e.fanOut(10_000) },
];

const sides = [
  (await import(pathToFileURL(join(otherRoot, "bench/engine.ts")).href)) as EngineBench,
  (await import(pathToFileURL(join(here, "bench/engine.ts")).href)) as EngineBench,
];
const names = [`other (${otherRoot})`, `this (${here})`];
const micros: number[][][] = sides.map(() => workloads.map(() => []));
for (let round = -3; round < rounds; round++) {
  for (let k = 0; k < sides.length; k++) {
    const s = (round + 3 + k) % sides.length;
    for (const [w, workload] of workloads.entries()) {
      (globalThis as { gc?: () => void }).gc?.();
      const started = performance.now();
      await workload.run(sides[s] as EngineBench);
      if (round >= 0) micros[s]?.[w]?.push(((performance.now() - started) * 1000) / workload.events); // the first 3 rounds warm up
    }
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
printTable(
  ["workload", ...names.map((n) => `${n}: µs per event`), "this / other"],
  workloads.map((workload, w) => {
    const [a, b] = micros.map((side) => median(side[w] as number[])) as [number, number];
    return [workload.name, a.toFixed(3), b.toFixed(3), (b / a).toFixed(2)];
  }),
);
