/**
 * Bytes each in-flight session keeps alive while it waits for its model, and which functions
 * allocated them: `node --import tsx --expose-gc bench/waiting-live-bytes.ts [CALL]` (add
 * `--import ./bench/use-build.mjs` after `npm run build` for dist/). 1,000 new sessions start
 * one turn at once on the memory store with the scripted LLM (add, multiply, answer); its
 * replies take 3 s, so when the last session has asked for LLM call CALL (1, 2 or 3; default
 * 2) every session is waiting for that call. Then two scavenges, and V8's sampling heap
 * profile of what was allocated since the burst began and is still alive. Unlike a sample
 * taken at a moment of wall time, the point measured does not move with the machine's load.
 * These bytes are what the scavenger copies, then promotes, while many sessions are in flight.
 */
import { Session } from "node:inspector/promises";
import { openSessionStore } from "../src/sessions/open-store.ts";
import { Sessions } from "../src/sessions/sessions.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";
import { ScriptedLLM } from "../src/llm/scripted-llm.ts";
import type { ScriptedRequest } from "../src/llm/scripted-llm.ts";
import { add, multiply } from "../workflows/tools/calculator.ts";
import { agentTurn } from "./session-workload.ts";

const gc = (globalThis as { gc?: (options?: { type: "minor" | "major" }) => void }).gc;
if (!gc) throw new Error("Run with --expose-gc: the measure starts from a collected heap.");
const size = 1000;
const call = Number(process.argv[2] ?? 2);
if (![1, 2, 3].includes(call)) throw new Error(`CALL is the LLM call to measure the wait for: 1, 2 or 3, got ${process.argv[2]}.`);

let requests = 0;
let reached: () => void = () => {};
const script = (request: ScriptedRequest) => {
  // The last session's request for this call: let every session get into its wait, then measure.
  if (++requests === size * call) setImmediate(() => setImmediate(reached));
  return agentTurn(request);
};
const sessionsWith = async (delayMs: number) =>
  new Sessions(
    new FunctionCallingAgent({ llm: new ScriptedLLM(script, { delayMs, record: false }), tools: [add, multiply], timeout: null }),
    await openSessionStore("memory:"),
  );
const question = { input: "What is (2123 + 2321) * 312?" };
const burst = (sessions: Awaited<ReturnType<typeof sessionsWith>>, tag: string) =>
  Promise.all(Array.from({ length: size }, (_, i) => sessions.run(`${tag}-${i}`, question)));

// Warm-up bursts: compiled code and the caches a process keeps are not what a session keeps.
const warm = await sessionsWith(50);
for (let round = 0; round < 3; round++) await burst(warm, `warm${round}`);
const measured = await sessionsWith(3000);
requests = 0;
gc();
const inspector = new Session();
inspector.connect();
await inspector.post("HeapProfiler.enable");
await inspector.post("HeapProfiler.startSampling", { samplingInterval: 128 });
const waiting = new Promise<void>((resolve) => (reached = resolve));
const done = burst(measured, "measured");
await waiting;
gc({ type: "minor" });
gc({ type: "minor" });
const { profile } = await inspector.post("HeapProfiler.getSamplingProfile");
await done;

type ProfileNode = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: ProfileNode[] };
const bySelf = new Map<string, number>();
let total = 0;
const walk = (node: ProfileNode): void => {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/.*node_modules\//, "nm/").replace(/^file:\/\/.*?\/(?=(src|dist|workflows|bench|events)\/)/, "");
  const key = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
  bySelf.set(key, (bySelf.get(key) ?? 0) + node.selfSize);
  total += node.selfSize;
  for (const child of node.children) walk(child);
};
walk(profile.head as ProfileNode);
console.log(`${(total / size).toFixed(0)} bytes live per session while all ${size} wait for LLM call ${call}`);
for (const [key, bytes] of [...bySelf].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log((bytes / size).toFixed(0).padStart(7), key);
process.exit(0);
