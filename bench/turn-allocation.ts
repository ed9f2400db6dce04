/**
 * Bytes allocated per agent turn, and by which functions: `node --import tsx bench/turn-allocation.ts`
 * (add `--import ./bench/use-build.mjs` after `npm run build` to profile dist/, what users run;
 * `--no-turbo-inlining --no-maglev-inlining` to charge inlined callees to themselves). Runs
 * bursts of 1,000 new sessions at once on the in-memory store, one turn each on the scripted LLM
 * (see session-workload.ts), under V8's sampling heap profiler counting objects the GC collected
 * too, and prints the total per turn and the top functions by their own and inclusive bytes.
 * The profile is written to bench/tmp/alloc.heapprofile (open it in Chrome DevTools).
 */
import { Session } from "node:inspector/promises";
import { mkdirSync, writeFileSync } from "node:fs";
import { openSessionStore } from "../src/sessions/open-store.ts";
import { Sessions } from "../src/sessions/sessions.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";
import { ScriptedLLM } from "../src/llm/scripted-llm.ts";
import { add, multiply } from "../workflows/tools/calculator.ts";
import { agentTurn } from "./session-workload.ts";

const size = 1000;
const llm = new ScriptedLLM(agentTurn, { delayMs: 50, record: false });
const sessions = new Sessions(new FunctionCallingAgent({ llm, tools: [add, multiply], timeout: null }), await openSessionStore("memory:"));
const question = { input: "What is (2123 + 2321) * 312?" };
const burst = (tag: string) => Promise.all(Array.from({ length: size }, (_, i) => sessions.run(`${tag}-${i}`, question)));
for (let r = 0; r < 3; r++) await burst(`w${r}`);
const s = new Session();
s.connect();
await s.post("HeapProfiler.enable");
await s.post("HeapProfiler.startSampling", { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
const R = 3;
for (let r = 0; r < R; r++) await burst(`p${r}`);
const { profile } = await s.post("HeapProfiler.stopSampling");
mkdirSync("bench/tmp", { recursive: true });
writeFileSync("bench/tmp/alloc.heapprofile", JSON.stringify(profile));
type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] };
const self = new Map<string, number>();
let total = 0;
const incl = new Map<string, number>();
function walk(n: Node, stack: Set<string>): number {
  const key = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.replace(/.*node_modules\//, "nm/").replace(/^file:\/\/.*?\/(?=(src|dist|workflows|bench)\/)/, "")}:${n.callFrame.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + n.selfSize);
  total += n.selfSize;
  let sum = n.selfSize;
  const added = !stack.has(key);
  if (added) stack.add(key);
  for (const c of n.children) sum += walk(c, stack);
  if (added) {
    stack.delete(key);
    incl.set(key, (incl.get(key) ?? 0) + sum);
  }
  return sum;
}
walk(profile.head as Node, new Set());
const turns = size * R;
console.log(`total ${(total / turns / 1024).toFixed(1)} KB per turn`);
console.log("--- self");
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log((v / turns).toFixed(0).padStart(7), k);
console.log("--- inclusive");
for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 70)) console.log((v / turns).toFixed(0).padStart(7), k);
process.exit(0);
