/**
 * The engine of this checkout against the engine of another:
 * `node --import tsx --expose-gc bench/engine-ab.ts OTHER_CHECKOUT [PROCESSES] [ROUNDS]`.
 * Each side runs in processes of its own (PROCESSES per side, default 6, the sides taking
 * turns), each warming up and then running, ROUNDS times (default 10), the engine benchmark's
 * workloads with that checkout's own bench/engine.ts: a ping-pong of 200,000 events, the same
 * with every event streamed to a reader, a fan-out of 10,000 events counted by a plain counter,
 * the same collected by collectEvents (one list; `{ count }`; 2,000 events with a fresh
 * `Array(n).fill(Done)` per call), and the floors, the same in both sides (this checkout's
 * engine-floors.ts): a bare await loop, a bare promise pool, and the fan-out's own steps run by
 * that pool with no engine. Prints each side's median microseconds per event (the median of its
 * processes' medians), their ratio, and each side's engine rows against their floors.
 *
 * A young-generation GC comes before each workload's run (`gc({ type: "minor" })`), as in
 * `npm run bench`: no run inherits the garbage of the one before (a 10,000-item pool takes
 * under a millisecond: one scavenge of another run's garbage would be most of its time). With
 * `BENCH_AB_GC=full`, a full GC instead: that measures each run cold, since a full GC with no run
 * alive lets V8 drop the hidden classes of the run's objects (and of the workflow's events), and
 * the engine's optimized code that depends on them is thrown away, so a short run after it
 * executes much of its engine code unoptimized (the floors have almost no code to lose). With
 * `BENCH_AB_GC=0`, none: the collector runs when it must.
 *
 * Not one process for both: two engines in one V8 heap share the JIT's feedback on builtins
 * (promises, arrays), and the same code measured against itself read 1.17–1.29 on ping-pong
 * and 0.87 on fan-out, depending on which side ran the script.
 */
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { barePool, floor, stepsPool } from "./engine-floors.ts";
import { printTable } from "./measure.ts";

interface EngineBench {
  /** Optional: a checkout from before they were exported measures NaN for them. */
  fanInCounter?(events: number): Promise<number>;
  fanInCount?(events: number): Promise<number>;
  fanInFresh?(events: number): Promise<number>;
  stepflow(events: number): Promise<number>;
  stepflowConsumed(events: number): Promise<number>;
  fanOut(events: number): Promise<number>;
}

interface Workload {
  readonly name: string;
  readonly events: number;
  readonly run: (engine: EngineBench) => Promise<number>;
}

const workloads: Workload[] = [
  { name: "ping-pong, 200,000 events", events: 200_000, run: (e) => e.stepflow(200_000) },
  { name: "ping-pong, 100,000 events streamed to a reader", events: 100_000, run: (e) => e.stepflowConsumed(100_000) },
  {
    name: "fan-out, 10,000 events through 8 workers, counted by a plain counter",
    events: 10_000,
    run: (e) => e.fanInCounter?.(10_000) ?? Promise.resolve(NaN),
  },
  { name: "the same fan-out collected: one list for every call", events: 10_000, run: (e) => e.fanOut(10_000) },
  { name: "the same fan-out collected: { count: 10,000 }", events: 10_000, run: (e) => e.fanInCount?.(10_000) ?? Promise.resolve(NaN) },
  { name: "fan-out of 2,000 collected: a fresh Array(2,000).fill(Done) per call", events: 2_000, run: (e) => e.fanInFresh?.(2_000) ?? Promise.resolve(NaN) },
  { name: "bare await loop, 200,000 events (floor of ping-pong)", events: 200_000, run: () => floor(200_000) },
  { name: "bare promise pool, 10,000 items, 8 workers (floor of the fan-out)", events: 10_000, run: () => barePool(10_000) },
  { name: "the fan-out's own steps in that pool, 10,000 items (no engine)", events: 10_000, run: () => stepsPool(10_000) },
];

/** Engine rows against their floors, by index in `workloads`: ping-pong / await loop, fan-out / pool, fan-ins / counter. */
const againstFloor: [number, number, string][] = [
  [0, 6, "ping-pong / bare await loop"],
  [2, 7, "fan-out (counted) / bare promise pool"],
  [8, 7, "the fan-out's own steps, no engine / bare promise pool"],
  [2, 8, "fan-out (counted) / its own steps, no engine"],
  [3, 2, "fan-in, one list / counter"],
  [4, 2, "fan-in, { count } / counter"],
];

const gcMode = process.env.BENCH_AB_GC === "0" ? "none" : process.env.BENCH_AB_GC === "full" ? "full" : "minor";
const collect = (globalThis as { gc?: (options?: { type: "minor" }) => void }).gc;
/**
 * `BENCH_AB_CLOCK=cpu`: the process's CPU time (µs), not wall time. On a machine with many
 * more runnable processes than cores, a run of a few milliseconds is preempted at random and
 * its wall time says little; CPU time holds still, but counts V8's helper threads (garbage
 * collection, compilation) too.
 */
const cpuClock = process.env.BENCH_AB_CLOCK === "cpu";
const now = cpuClock
  ? () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    }
  : () => performance.now();

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/**
 * The floors first, then the engine's workloads. After the collected fan-ins, in the same
 * process, the pool took 4× its time (0.2 against 0.05 µs of CPU per item; no V8 protector was
 * invalidated, and why it slows is not known); `npm run bench` too measures each floor before
 * the engine rows set against it.
 */
const measuredOrder = [6, 7, 8, 0, 1, 2, 3, 4, 5];

/**
 * In a child: the median µs per event of each workload over `rounds` runs, after 3 runs of
 * warm-up, one workload after the other in `measuredOrder` (as `npm run bench` does).
 */
async function measureSide(root: string, rounds: number): Promise<number[]> {
  const engine = (await import(pathToFileURL(join(root, "bench/engine.ts")).href)) as EngineBench;
  const micros: number[][] = workloads.map(() => []);
  for (const w of measuredOrder) {
    const workload = workloads[w] as Workload;
    for (let round = -3; round < rounds; round++) {
      if (gcMode === "full") collect?.();
      else if (gcMode === "minor") collect?.({ type: "minor" });
      const started = now();
      const result = await workload.run(engine);
      // NaN: a workload this side's bench/engine.ts does not have.
      if (round >= 0) micros[w]?.push(Number.isNaN(result) ? NaN : ((now() - started) * 1000) / workload.events);
    }
  }
  return micros.map(median);
}

const [first, second, third] = process.argv.slice(2);
if (first === "--side") {
  console.log(JSON.stringify(await measureSide(String(second), Number(third))));
} else {
  if (!first) throw new Error("Usage: bench/engine-ab.ts OTHER_CHECKOUT [PROCESSES] [ROUNDS]");
  const processes = Number(second ?? 6);
  const rounds = Number(third ?? 10);
  const roots = [resolve(first), resolve(import.meta.dirname, "..")];
  const script = fileURLToPath(import.meta.url);
  const perProcess: number[][][] = roots.map(() => []);
  for (let p = 0; p < processes; p++) {
    for (let k = 0; k < roots.length; k++) {
      const s = (p + k) % roots.length; // which side goes first alternates
      const output = execFileSync(process.execPath, ["--import", "tsx", "--expose-gc", script, "--side", roots[s] as string, String(rounds)], {
        encoding: "utf8",
        maxBuffer: 2 ** 24,
      });
      // JSON writes NaN (a workload the side lacks) as null.
      perProcess[s]?.push((JSON.parse(output.trim().split("\n").at(-1) as string) as (number | null)[]).map((v) => v ?? NaN));
    }
  }
  const medians = perProcess.map((side) => workloads.map((_, w) => median(side.map((medians) => medians[w] as number))));
  const [other, self] = medians as [number[], number[]];
  const gcSaid = { minor: "a young-generation GC", full: "a full GC (BENCH_AB_GC=full)", none: "none (BENCH_AB_GC=0)" }[gcMode];
  console.log(`before each run: ${gcSaid}; clock: ${cpuClock ? "CPU time (BENCH_AB_CLOCK=cpu)" : "wall time"}\n`);
  printTable(
    ["workload", `other (${roots[0]}): µs per event`, `this (${roots[1]}): µs per event`, "this / other"],
    workloads.map((workload, w) => {
      const [a, b] = [other[w] as number, self[w] as number];
      return [workload.name, a.toFixed(3), b.toFixed(3), (b / a).toFixed(2)];
    }),
  );
  console.log("");
  printTable(
    ["engine row / its floor", "other", "this"],
    againstFloor.map(([row, base, name]) => [
      name,
      ((other[row] as number) / (other[base] as number)).toFixed(2),
      ((self[row] as number) / (self[base] as number)).toFixed(2),
    ]),
  );
}
