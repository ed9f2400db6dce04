/**
 * What a fan-out costs the garbage collector, this checkout against another:
 * `node --import tsx --expose-gc bench/fan-out-gc-ab.ts OTHER_CHECKOUT [PROCESSES] [EVENTS] [RUNS]`.
 * Each side runs in processes of its own (PROCESSES per side, default 5, the sides taking
 * turns), each running its checkout's counted fan-out (`fanInCounter` of bench/engine.ts) of
 * EVENTS events (default 100,000) RUNS times (default 10) after 5 of warm-up, a young-generation
 * GC before each. Prints each side's medians of its processes: µs of CPU per event, and per run
 * the scavenges, the milliseconds they paused the run, and the same for full GCs.
 *
 * engine-ab.ts's 10,000-event fan-out allocates about 16 MB, which a warm process's young
 * generation holds whole: no scavenge falls within the run, so what survives one is not seen
 * there. A longer fan-out (or steps that allocate, as real ones do) is scavenged while its
 * queues are full, and each scavenge copies what they hold. `BENCH_GC_NODE_FLAGS` adds flags to
 * the children (say `--max-semi-space-size=1`, the young generation of a process that has not
 * grown it, with EVENTS=10000).
 */
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { constants, PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { printTable } from "./measure.ts";

interface EngineBench {
  fanInCounter?(events: number): Promise<number>;
}

/** One process's medians over its runs. */
interface Reading {
  readonly cpu: number;
  readonly scavenges: number;
  readonly scavengeMs: number;
  readonly fullGcs: number;
  readonly fullGcMs: number;
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** In a child: `runs` fan-outs of `events`, the GC entries observed during each. */
async function side(root: string, events: number, runs: number): Promise<Reading> {
  const engine = (await import(pathToFileURL(join(root, "bench/engine.ts")).href)) as EngineBench;
  const fanOut = engine.fanInCounter;
  if (!fanOut) throw new Error(`${root}/bench/engine.ts has no fanInCounter`);
  const collect = (globalThis as { gc?: (options?: { type: "minor" }) => void }).gc;
  // Entries come in later than the GCs they tell of: each run takes those that began within it.
  const entries: { readonly startTime: number; readonly duration: number; readonly minor: boolean }[] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      entries.push({ startTime: entry.startTime, duration: entry.duration, minor: kind === constants.NODE_PERFORMANCE_GC_MINOR });
    }
  }).observe({ entryTypes: ["gc"] });
  const readings: Reading[] = [];
  for (let run = -5; run < runs; run++) {
    collect?.({ type: "minor" });
    const from = performance.now();
    const started = process.cpuUsage();
    await fanOut(events);
    const cpu = process.cpuUsage(started);
    const to = performance.now();
    await turn();
    await turn();
    const within = entries.filter((e) => e.startTime >= from && e.startTime <= to);
    entries.length = 0;
    const minor = within.filter((e) => e.minor);
    const full = within.filter((e) => !e.minor);
    const ms = (list: typeof within) => list.reduce((sum, e) => sum + e.duration, 0);
    if (run >= 0)
      readings.push({ cpu: (cpu.user + cpu.system) / events, scavenges: minor.length, scavengeMs: ms(minor), fullGcs: full.length, fullGcMs: ms(full) });
  }
  return {
    cpu: median(readings.map((r) => r.cpu)),
    scavenges: median(readings.map((r) => r.scavenges)),
    scavengeMs: median(readings.map((r) => r.scavengeMs)),
    fullGcs: median(readings.map((r) => r.fullGcs)),
    fullGcMs: median(readings.map((r) => r.fullGcMs)),
  };
}

const [first, second, third, fourth] = process.argv.slice(2);
if (first === "--side") {
  console.log(JSON.stringify(await side(String(second), Number(third), Number(fourth))));
} else {
  if (!first) throw new Error("Usage: bench/fan-out-gc-ab.ts OTHER_CHECKOUT [PROCESSES] [EVENTS] [RUNS]");
  const processes = Number(second ?? 5);
  const events = Number(third ?? 100_000);
  const runs = Number(fourth ?? 10);
  const roots = [resolve(first), resolve(import.meta.dirname, "..")];
  const flags = (process.env.BENCH_GC_NODE_FLAGS ?? "").split(" ").filter(Boolean);
  const script = fileURLToPath(import.meta.url);
  const perSide: Reading[][] = roots.map(() => []);
  for (let p = 0; p < processes; p++) {
    for (let k = 0; k < roots.length; k++) {
      const s = (p + k) % roots.length; // which side goes first alternates
      const args = ["--import", "tsx", "--expose-gc", ...flags, script, "--side", roots[s] as string, String(events), String(runs)];
      const output = execFileSync(process.execPath, args, { encoding: "utf8" });
      perSide[s]?.push(JSON.parse(output.trim().split("\n").at(-1) as string) as Reading);
    }
  }
  const rows: [string, keyof Reading, number][] = [
    ["µs of CPU per event", "cpu", 3],
    ["scavenges per run", "scavenges", 1],
    ["ms of scavenges per run", "scavengeMs", 2],
    ["full GCs per run", "fullGcs", 1],
    ["ms of full GCs per run", "fullGcMs", 2],
  ];
  console.log(
    `fan-out of ${events.toLocaleString("en")} events, ${runs} runs per process, ${processes} processes per side${flags.length ? `, node ${flags.join(" ")}` : ""}\n`,
  );
  printTable(
    ["", `other (${roots[0]})`, `this (${roots[1]})`, "this / other"],
    rows.map(([name, key, digits]) => {
      const [other, mine] = perSide.map((readings) => median(readings.map((r) => r[key])));
      return [name, (other as number).toFixed(digits), (mine as number).toFixed(digits), other === 0 ? "—" : ((mine as number) / (other as number)).toFixed(2)];
    }),
  );
}
