/**
 * A burst of sessions, this checkout against another, in one process:
 * `node --import tsx --expose-gc bench/burst-ab.ts OTHER_CHECKOUT [ROUNDS] [SESSIONS]`. Each
 * round runs, for each side in turn (rotating which goes first), SESSIONS (default 1,000) new
 * sessions at once on the in-memory store, each one agent turn on a scripted LLM that answers in
 * 50 ms (3 calls a turn: 150 ms is the ideal), with that checkout's own modules. Prints each side's
 * median wall time, CPU milliseconds per turn (every thread of the process) and longest stall of
 * the event loop (`monitorEventLoopDelay`), and their ratios.
 */
import { resolve } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { printTable } from "./measure.ts";
import { agentTurn, checkoutModules } from "./session-workload.ts";

const [otherRoot, roundsArg, sessionsArg] = process.argv.slice(2);
if (!otherRoot) throw new Error("Usage: bench/burst-ab.ts OTHER_CHECKOUT [ROUNDS] [SESSIONS]");
const rounds = Number(roundsArg ?? 10);
const size = Number(sessionsArg ?? 1_000);
const here = resolve(import.meta.dirname, "..");
const LLM_MS = 50;

type Burst = (tag: string) => Promise<void>;

/** A burst of new sessions on the checkout at `root`, with that checkout's own modules. */
async function burstOf(root: string): Promise<Burst> {
  const { openSessionStore, Sessions, FunctionCallingAgent, ScriptedLLM, add, multiply } = await checkoutModules(root);
  const llm = new ScriptedLLM(agentTurn, { delayMs: LLM_MS, record: false });
  const sessions = new Sessions(new FunctionCallingAgent({ llm, tools: [add, multiply], timeout: null }), await openSessionStore("memory:"));
  const question = { input: "What is (2123 + 2321) * 312?" };
  return async (tag) => {
    await Promise.all(Array.from({ length: size }, (_, i) => sessions.run(`${tag}-${i}`, question)));
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const sides = [await burstOf(otherRoot), await burstOf(here)];
const names = [`other (${otherRoot})`, `this (${here})`];
const measured = sides.map(() => ({ wall: [] as number[], cpu: [] as number[], stall: [] as number[] }));
for (let round = -2; round < rounds; round++) {
  for (let k = 0; k < sides.length; k++) {
    const s = (round + 2 + k) % sides.length;
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setTimeout(resolve, 20)); // the loop idle again before the burst
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const cpu = process.cpuUsage();
    const started = performance.now();
    await (sides[s] as Burst)(`${s}-${round}`);
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    delay.disable();
    if (round < 0) continue; // the first 2 rounds warm up
    const side = measured[s] as (typeof measured)[number];
    side.wall.push(wall);
    side.cpu.push((used.user + used.system) / 1000 / size);
    side.stall.push(delay.max / 1e6);
  }
}
const [a, b] = measured.map((side) => ({ wall: median(side.wall), cpu: median(side.cpu), stall: median(side.stall) })) as [
  { wall: number; cpu: number; stall: number },
  { wall: number; cpu: number; stall: number },
];
printTable(
  ["side", `wall ms (${size.toLocaleString("en")} sessions)`, "CPU ms per turn", "longest event-loop stall, ms"],
  [a, b].map((side, i) => [names[i] as string, side.wall.toFixed(0), side.cpu.toFixed(3), side.stall.toFixed(0)]),
);
console.log(
  `\nThis / other (medians of ${rounds} rounds): wall ${(b.wall / a.wall).toFixed(2)}, CPU ${(b.cpu / a.cpu).toFixed(2)}, stall ${(b.stall / a.stall).toFixed(2)}`,
);
