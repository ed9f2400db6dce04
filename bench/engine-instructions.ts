/**
 * Instructions per event of the engine benchmark's workloads, counted by valgrind's callgrind,
 * for this checkout and, optionally, another:
 * `node --import tsx bench/engine-instructions.ts [OTHER_CHECKOUT] [EVENTS] [RUNS]`.
 *
 * CPU time on a shared machine moves by ±15% between runs of the same code; the number of
 * instructions executed does not depend on the load. Each workload runs in a Node process under
 * `valgrind --tool=callgrind` twice: once run 1 time, once RUNS times (default 4), EVENTS events
 * each (default 50,000); the difference of the two totals over (RUNS − 1) × EVENTS events is
 * the cost of a warm event, with the process's start-up, the module loading and the JIT's first
 * compilations subtracted. Each checkout runs its own bench/engine.ts (ping-pong: `stepflow`,
 * the counted fan-out: `fanInCounter`, 10,000 events a run whatever EVENTS says; a checkout
 * without it prints "—"), and the floors of this checkout's engine-floors.ts (the await loop,
 * the promise pool, and the fan-out's own steps in a pool).
 *
 * Under valgrind, threads run one at a time and V8's compiler and garbage-collector threads
 * are counted too, and tiering happens at other moments than at full speed: a count is a
 * measure of work done, to compare two checkouts by, not a prediction of their time.
 * `BENCH_INSTR_WORKLOADS=ping-pong,fan-out` picks workloads (default: all seven).
 */
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { callgrindInstructions, requireValgrind } from "./callgrind.ts";
import { barePool, floor, stepsPool } from "./engine-floors.ts";
import { printTable } from "./measure.ts";

interface EngineBench {
  stepflow(events: number): Promise<number>;
  /** Optional: older checkouts' bench/engine.ts does not have it. */
  fanInCounter?(events: number): Promise<number>;
  timedSignal?(events: number): Promise<number>;
  timedQuiet?(events: number): Promise<number>;
}

interface Workload {
  readonly name: string;
  /** Events per run, given EVENTS. */
  readonly events: (events: number) => number;
  /** One run, or NaN when the checkout lacks the workload. */
  readonly run: (engine: EngineBench, events: number) => Promise<number>;
}

const workloads: Record<string, Workload> = {
  "ping-pong": { name: "ping-pong", events: (n) => n, run: (e, n) => e.stepflow(n) },
  "fan-out": {
    name: "fan-out of 10,000 through 8 workers, counted",
    events: () => 10_000,
    run: (e, n) => e.fanInCounter?.(n) ?? Promise.resolve(NaN),
  },
  "timed-signal": {
    name: "ping-pong of steps with a timeout, each reading ctx.signal",
    events: (n) => n,
    run: (e, n) => e.timedSignal?.(n) ?? Promise.resolve(NaN),
  },
  "timed-quiet": {
    name: "ping-pong of steps with a timeout, not reading ctx.signal",
    events: (n) => n,
    run: (e, n) => e.timedQuiet?.(n) ?? Promise.resolve(NaN),
  },
  "await-loop": { name: "bare await loop (floor of ping-pong)", events: (n) => n, run: (_e, n) => floor(n) },
  "promise-pool": { name: "bare promise pool, 10,000 items (floor of the fan-out)", events: () => 10_000, run: (_e, n) => barePool(n) },
  "steps-pool": { name: "the fan-out's own steps in a bare pool, 10,000 items (no engine)", events: () => 10_000, run: (_e, n) => stepsPool(n) },
};

/** In the child: `runs` runs of the workload; exits with 3 when the checkout lacks it. */
async function side(root: string, key: string, events: number, runs: number): Promise<void> {
  const engine = (await import(pathToFileURL(join(root, "bench/engine.ts")).href)) as EngineBench;
  const workload = workloads[key] as Workload;
  for (let i = 0; i < runs; i++) if (Number.isNaN(await workload.run(engine, workload.events(events)))) process.exit(3);
}

/**
 * `BENCH_INSTR_NODE_FLAGS="--single-threaded"` runs V8's compiler and collector on the main
 * thread: two counts of one code then differ by about 1% on the fan-out, against 16–20% with
 * their threads, whose work falls at other moments in each process.
 */
const nodeFlags = (process.env.BENCH_INSTR_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== "");

/** The child's command line: `runs` runs of workload `key` in checkout `root`. */
const sideArgs = (root: string, key: string, events: number, runs: number) => [
  ...nodeFlags,
  "--import",
  "tsx",
  fileURLToPath(import.meta.url),
  "--side",
  root,
  key,
  String(events),
  String(runs),
];

/** Total instructions callgrind counted for one child, all threads, or NaN when the workload is missing. */
async function countInstructions(root: string, key: string, events: number, runs: number): Promise<number> {
  try {
    return await callgrindInstructions(sideArgs(root, key, events, runs));
  } catch (error) {
    if ((error as { code?: unknown }).code === 3) return NaN;
    throw error;
  }
}

const [first, second, third, fourth, fifth] = process.argv.slice(2);
if (first === "--side") {
  await side(String(second), String(third), Number(fourth), Number(fifth));
} else {
  const events = Number(second ?? 50_000);
  const runs = Number(third ?? 4);
  if (!(runs >= 2)) throw new Error(`RUNS must be 2 or more (it was ${third}): one run is the start-up subtracted from the others.`);
  requireValgrind();
  const roots = first ? [resolve(first), resolve(import.meta.dirname, "..")] : [resolve(import.meta.dirname, "..")];
  const picked = (process.env.BENCH_INSTR_WORKLOADS ?? Object.keys(workloads).join(",")).split(",");
  for (const key of picked) if (!(key in workloads)) throw new Error(`Unknown workload "${key}": pick from ${Object.keys(workloads).join(", ")}.`);
  // tsx caches what it compiled on disk: without a first run to fill the cache, the first
  // counted child compiles and the second reads, and the start-up no longer cancels out.
  for (const root of roots) execFileSync(process.execPath, sideArgs(root, "ping-pong", events, 0), { stdio: "ignore" });
  const perEvent: number[][] = [];
  for (const key of picked) {
    // The children of one workload at once: each is single-threaded under valgrind, and counts do not depend on the load.
    const n = (workloads[key] as Workload).events(events);
    const counts = await Promise.all(roots.flatMap((root) => [countInstructions(root, key, events, 1), countInstructions(root, key, events, runs)]));
    perEvent.push(roots.map((_, r) => ((counts[2 * r + 1] as number) - (counts[2 * r] as number)) / ((runs - 1) * n)));
  }
  console.log(`callgrind, instructions per event: (total of ${runs} runs − total of 1 run) / (${runs - 1} runs' events)\n`);
  const format = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? "—" : Math.round(v).toLocaleString("en-US"));
  printTable(
    [
      "workload",
      ...roots.map((root, i) => (roots.length > 1 && i === 0 ? `other (${root})` : `this (${root})`)),
      ...(roots.length > 1 ? ["this / other"] : []),
    ],
    picked.map((key, w) => {
      const row = perEvent[w] as number[];
      return [(workloads[key] as Workload).name, ...row.map(format), ...(roots.length > 1 ? [((row[1] as number) / (row[0] as number)).toFixed(3)] : [])];
    }),
  );
}
