/**
 * What the engine alone costs the garbage collector per run: `node --import tsx --expose-gc
 * bench/engine-allocation.ts` (add `--import ./bench/use-build.mjs` after `npm run build` to
 * measure dist/, what users run; `--no-turbo-inlining --no-maglev-inlining` to charge inlined
 * callees to themselves). 1,000 runs at once of a three-step workflow shaped like an agent turn
 * (its middle step reads `ctx.signal` and awaits its work in `ctx.once`), no LLM, no store:
 * - bytes allocated per run, collected objects included (V8's sampling heap profiler), and
 *   the functions that allocate most;
 * - bytes a run keeps alive while its step awaits: counted once every run is waiting on a gate
 *   the benchmark holds, after a full GC. Nothing here depends on timing: both are
 *   deterministic up to the profiler's sampling.
 */
import { Session } from "node:inspector/promises";
import { Event, StartEvent, StopEvent, Workflow } from "../src/index.ts";

const RUNS = 1000;
const ROUNDS = 5;

type ProfileNode = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: ProfileNode[] };

class Asked extends Event<Record<string, never>> {}
class Answered extends Event<Record<string, never>> {}

/** A gate the benchmark opens, and a promise that resolves once every run waits on it. */
class Barrier {
  waiting = 0;
  #open!: () => void;
  #allWaiting!: () => void;
  readonly gate = new Promise<void>((resolve) => (this.#open = resolve));
  readonly allWaiting = new Promise<void>((resolve) => (this.#allWaiting = resolve));
  arrive(): Promise<void> {
    if (++this.waiting === RUNS) this.#allWaiting();
    return this.gate;
  }
  open(): void {
    this.#open();
  }
}

let barrier = new Barrier();
const flow = new Workflow<Record<string, never>, number>({ timeout: null });
flow.addStep("ask", { accepts: [StartEvent], emits: [Asked] }, async () => new Asked({}));
flow.addStep("answer", { accepts: [Asked], emits: [Answered] }, async (ctx) => {
  if (ctx.signal.aborted) return undefined;
  await ctx.once("call", () => barrier.arrive().then(() => 1));
  return new Answered({});
});
flow.addStep("stop", { accepts: [Answered], emits: [StopEvent] }, async () => new StopEvent({ result: 1 }));

/** Starts RUNS runs and resolves, with their handlers, once all wait in their middle step. */
async function startAll(): Promise<PromiseLike<number>[]> {
  const runs = Array.from({ length: RUNS }, () => flow.run({}));
  await barrier.allWaiting;
  return runs;
}

async function finish(runs: PromiseLike<number>[]): Promise<void> {
  barrier.open();
  await Promise.all(runs);
  barrier = new Barrier();
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("Run with --expose-gc: the live count needs a full GC first.");

for (let i = 0; i < 3; i++) await finish(await startAll()); // warm up

const session = new Session();
session.connect();
await session.post("HeapProfiler.enable");

gc();
await session.post("HeapProfiler.startSampling", { samplingInterval: 128, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
for (let i = 0; i < ROUNDS; i++) await finish(await startAll());
const allocated = (await session.post("HeapProfiler.stopSampling")).profile.head as ProfileNode;

gc();
await session.post("HeapProfiler.startSampling", { samplingInterval: 64 });
const waiting = await startAll();
gc();
const live = (await session.post("HeapProfiler.getSamplingProfile")).profile.head as ProfileNode;
await session.post("HeapProfiler.stopSampling");
await finish(waiting);

function bySelf(head: ProfileNode): { total: number; top: [string, number][] } {
  const self = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || "(anon)"} ${url.replace(/^file:\/\/.*?\/(?=(src|dist|bench)\/)/, "")}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + node.selfSize);
    total += node.selfSize;
    node.children.forEach(walk);
  };
  walk(head);
  return { total, top: [...self].sort((a, b) => b[1] - a[1]).slice(0, 15) };
}

const perRun = bySelf(allocated);
console.log(`allocated: ${(perRun.total / RUNS / ROUNDS).toFixed(0)} B per run (3 step executions, 1 ctx.once)`);
for (const [key, bytes] of perRun.top) console.log((bytes / RUNS / ROUNDS).toFixed(0).padStart(7), key);
const kept = bySelf(live);
console.log(`live: ${(kept.total / RUNS).toFixed(0)} B per run waiting in a step`);
for (const [key, bytes] of kept.top) console.log((bytes / RUNS).toFixed(0).padStart(7), key);
process.exit(0);
