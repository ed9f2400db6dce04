/**
 * Sessions of this checkout against another's, each side in processes of its own:
 * `node --import tsx --expose-gc bench/sessions-process-ab.ts OTHER_CHECKOUT [PAIRS] [ROUNDS]`
 * (say `/tmp/base 10 8`; `BENCH_AB_WORKLOADS=burst` or `long` runs one workload;
 * `BENCH_AB_RAW=FILE` writes every round as JSON). For each workload, PAIRS times (default 8): a
 * process per side starts, loads its checkout's own modules (`checkoutModules`) and warms up; then
 * the two take turns, ROUNDS rounds each (default 8, a GC before each), which side goes first
 * alternating, so that each round of one side runs next in time to a round of the other:
 *
 * - `burst`: 1,000 new sessions at once (`BENCH_AB_SESSIONS`), one agent turn each (3 calls to a
 *   scripted LLM answering in 50 ms, 2 tool calls) on the in-memory store: the workload of
 *   bench/burst-ab.ts. 3 bursts warm up.
 * - `long`: 50 turns one after the other on a session of 10,000 stored turns, on SQLite, with a
 *   model of a 128,000-token window that answers at once: the workload of bench/sessions.ts. 20
 *   turns warm up (the first reads the window; the others run from the window cache).
 *
 * Prints per workload and figure each side's median (over its processes, of their median round);
 * this / other, as the median over pairs of each pair's median round-by-round ratio; a bootstrap
 * interval of that median; and the lowest and highest pair. CPU is per turn: the process's
 * (`process.cpuUsage`, every thread: V8's helpers, the SQLite worker), and the main thread's
 * alone (`/proc/self/task/PID/schedstat`, nanoseconds; Linux only). CPU time moves less with the
 * machine's load than wall time does, but it moves: on 2 shared cores at a load average of 6, the
 * same code against itself read 0.98–1.02 over 10 pairs, single pairs 0.84–1.24
 * (docs/benchmarks.md): trust a difference of 5–10% only when the intervals say so.
 *
 * With `BENCH_AB_BUILD=1`, each side runs what its own `npm run build` compiled (run it in both
 * checkouts first), through its own bench/use-build.mjs: the code users install, without tsx's
 * helpers (`__name`, and the private-member helpers of decorated classes).
 *
 * Not one process for both sides (as bench/burst-ab.ts and bench/sessions-ab.ts do): two
 * checkouts in one V8 heap share the JIT's feedback and each other's garbage.
 */
import { spawn } from "node:child_process";
import type { ChildProcessByStdio } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { printTable } from "./measure.ts";
import { agentTurn, checkoutModules, storedMessage } from "./session-workload.ts";

const WORKLOADS = ["burst", "long"] as const;
type WorkloadName = (typeof WORKLOADS)[number];

/** One measured round, per turn except wall and stall. */
interface Round {
  readonly cpuMs: number;
  readonly mainCpuMs: number;
  readonly wallMs: number;
  readonly stallMs: number;
}

const FIGURES: { key: keyof Round; name: string; digits: number }[] = [
  { key: "cpuMs", name: "CPU ms per turn (all threads)", digits: 4 },
  { key: "mainCpuMs", name: "main thread CPU ms per turn", digits: 4 },
  { key: "wallMs", name: "wall ms (the round)", digits: 1 },
  { key: "stallMs", name: "longest event-loop stall, ms", digits: 1 },
];

/** CPU ms of the main thread: schedstat's first field is its time on a CPU, in ns. */
function mainThreadMs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "latin1").split(" ")[0]) / 1e6;
  } catch {
    return NaN;
  }
}

const collect = () => (globalThis as { gc?: () => void }).gc?.();
/** The middle value; of an even count, the mean of the two middle ones (10 pairs' ratios: the upper one alone leans). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

/** Runs `turns` turns with `body` and measures them. */
async function measured(turns: number, body: () => Promise<unknown>): Promise<Round> {
  collect();
  await new Promise((done) => setTimeout(done, 20)); // the loop idle again before the round
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpu = process.cpuUsage();
  const main = mainThreadMs();
  const started = performance.now();
  await body();
  const wallMs = performance.now() - started;
  const mainCpuMs = (mainThreadMs() - main) / turns;
  const used = process.cpuUsage(cpu);
  delay.disable();
  return { cpuMs: (used.user + used.system) / 1000 / turns, mainCpuMs, wallMs, stallMs: delay.max / 1e6 };
}

/** In a child: the burst workload of the checkout at `root`, warmed up by 3 bursts; returns a round. */
async function burst(root: string): Promise<() => Promise<Round>> {
  const size = Number(process.env.BENCH_AB_SESSIONS ?? 1_000);
  const { openSessionStore, Sessions, FunctionCallingAgent, ScriptedLLM, add, multiply } = await checkoutModules(root);
  const llm = new ScriptedLLM(agentTurn, { delayMs: 50, record: false });
  const sessions = new Sessions(new FunctionCallingAgent({ llm, tools: [add, multiply], timeout: null }), await openSessionStore("memory:"));
  const question = { input: "What is (2123 + 2321) * 312?" };
  const run = (tag: string) => Promise.all(Array.from({ length: size }, (_, i) => sessions.run(`${tag}-${i}`, question)));
  for (let w = 0; w < 3; w++) await run(`w${w}`);
  let round = 0;
  return () => measured(size, () => run(`r${round++}`));
}

/** In a child: the long-session workload of the checkout at `root` (SQLite, 128,000-token window), warmed up; returns a round. */
async function long(root: string): Promise<() => Promise<Round>> {
  const TURNS = 50;
  const { openSessionStore, Sessions, FunctionCallingAgent, ScriptedLLM } = await checkoutModules(root);
  const dir = mkdtempSync(join(tmpdir(), "stepflow-process-ab-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const store = await openSessionStore(`sqlite:${join(dir, "sessions.db")}`);
  const agent = new FunctionCallingAgent({ llm: new ScriptedLLM(() => ({ text: "Noted." }), { record: false, contextWindow: 128_000 }) });
  const sessions = new Sessions(agent, store);
  // Seeded as bench/sessions.ts does: a real first turn, then 10,000 turns' messages in one save.
  await sessions.run("long", { input: "Hello!" });
  const first = await store.load("long");
  await store.save("long", {
    expectedVersion: first.version,
    snapshot: first.snapshot,
    append: Array.from({ length: 20_000 - first.messages.length }, (_, i) => storedMessage(i + first.messages.length)),
  });
  for (let i = 0; i < 20; i++) await sessions.run("long", { input: "warm up" });
  let round = 0;
  return () =>
    measured(TURNS, async () => {
      for (let i = 0; i < TURNS; i++) await sessions.run("long", { input: `Turn ${round} ${i}` });
      round++;
    });
}

/**
 * The 5th and 95th percentiles of the median of `values` resampled with replacement 2,000 times
 * (a fixed seed, so a run's printout can be checked against its raw numbers): how far the median
 * pair could move with other pairs drawn from the same machine.
 */
function bootstrap(values: readonly number[]): [number, number] {
  let seed = 1;
  const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
  const medians = Array.from({ length: 2_000 }, () => median(values.map(() => values[Math.floor(random() * values.length)] as number))).sort((a, b) => a - b);
  return [medians[100] as number, medians[1_899] as number];
}

/** A child process driven line by line: "go" on stdin runs a round, a line on stdout reports it. */
class Side {
  readonly #child: ChildProcessByStdio<Writable, Readable, null>;
  readonly #lines: AsyncIterator<string>;

  constructor(script: string, root: string, workload: WorkloadName) {
    // BENCH_AB_BUILD=1: each side runs the code its `npm run build` compiled, through its own bench/use-build.mjs.
    const build = process.env.BENCH_AB_BUILD === "1" ? ["--import", join(root, "bench/use-build.mjs")] : [];
    const args = ["--import", "tsx", ...build, "--expose-gc", script, "--side", root, workload];
    this.#child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
    this.#lines = createInterface({ input: this.#child.stdout })[Symbol.asyncIterator]();
  }

  /** The child's next line. */
  async next(): Promise<string> {
    const line = await this.#lines.next();
    if (line.done) throw new Error("a side ended before its report");
    return line.value;
  }

  async round(): Promise<Round> {
    this.#child.stdin.write("go\n");
    return JSON.parse(await this.next()) as Round;
  }

  async close(): Promise<void> {
    const ended = once(this.#child, "exit");
    this.#child.stdin.end();
    await ended;
  }
}

const [first, second, third] = process.argv.slice(2);
if (first === "--side") {
  const run = third === "long" ? long : burst;
  const round = await run(String(second));
  process.stdout.write("READY\n");
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "go") process.stdout.write(`${JSON.stringify(await round())}\n`);
  }
  process.exit(0); // the SQLite store's worker would keep the process alive
} else {
  if (!first) throw new Error("Usage: bench/sessions-process-ab.ts OTHER_CHECKOUT [PAIRS] [ROUNDS]");
  const pairs = Number(second ?? 8);
  const rounds = Number(third ?? 8);
  const chosen = (process.env.BENCH_AB_WORKLOADS ?? WORKLOADS.join(",")).split(",") as WorkloadName[];
  const roots = [resolve(first), resolve(import.meta.dirname, "..")];
  const script = fileURLToPath(import.meta.url);
  const build = process.env.BENCH_AB_BUILD === "1" ? " (each side's npm run build)" : " (sources, through tsx)";
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
  console.log(`other: ${roots[0]}\nthis: ${roots[1]}${build}\n${pairs} pairs of processes per workload, ${rounds} rounds each; load average ${load()}\n`);
  // measured[workload][side][pair]: the rounds of that side's process in that pair.
  const measured = chosen.map(() => roots.map((): Round[][] => []));
  for (let p = 0; p < pairs; p++) {
    for (const [w, workload] of chosen.entries()) {
      const sides = roots.map((root) => new Side(script, root, workload));
      for (const side of sides) if ((await side.next()) !== "READY") throw new Error("a side did not start");
      const perSide: Round[][] = sides.map(() => []);
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < sides.length; k++) {
          const s = (p + r + k) % sides.length; // which side goes first alternates
          perSide[s]?.push(await (sides[s] as Side).round());
        }
      }
      for (const side of sides) await side.close();
      for (const [s, list] of perSide.entries()) measured[w]?.[s]?.push(list);
    }
  }
  const rows: string[][] = [];
  for (const [w, workload] of chosen.entries()) {
    const [other, self] = measured[w] as [Round[][], Round[][]];
    for (const { key, name, digits } of FIGURES) {
      const sideMedian = (processes: Round[][]) => median(processes.map((list) => median(list.map((r) => r[key]))));
      // A pair's ratio: the median of its rounds' ratios, each round against the other side's round next to it.
      const ratios = other.map((list, i) => median(list.map((r, j) => (self[i]?.[j]?.[key] ?? NaN) / r[key]))).sort((x, y) => x - y);
      const spread = `${(ratios[0] ?? NaN).toFixed(2)} / ${(ratios.at(-1) ?? NaN).toFixed(2)}`;
      const [low, high] = bootstrap(ratios);
      rows.push([
        workload,
        name,
        sideMedian(other).toFixed(digits),
        sideMedian(self).toFixed(digits),
        median(ratios).toFixed(3),
        `${low.toFixed(3)}–${high.toFixed(3)}`,
        spread,
      ]);
    }
  }
  // BENCH_AB_RAW=FILE: every round of every process, as JSON ({ workloads, measured[workload][side][pair][round] }).
  if (process.env.BENCH_AB_RAW) writeFileSync(process.env.BENCH_AB_RAW, JSON.stringify({ roots, workloads: chosen, measured }));
  printTable(["workload", "figure", "other", "this", "this / other (median pair)", "90% bootstrap interval", "lowest / highest pair"], rows);
  console.log(`\nload average at the end: ${load()}`);
}
