/**
 * Instructions per session turn at 1,000 sessions at once, counted by valgrind's callgrind, for
 * this checkout and, optionally, another: `node --import tsx bench/session-instructions.ts
 * [OTHER_CHECKOUT] [BURSTS]`.
 *
 * The wall time of 1,000 sessions at once is the main thread's work plus the garbage
 * collector's pauses, and on a shared 2-core machine it moves with the load by more than two
 * versions of the code differ; the instructions executed do not. Each checkout runs, in a Node
 * process under `valgrind --tool=callgrind`, a warm-up of 3 × 300 sessions and then 1 burst,
 * and again with BURSTS bursts (default 3), of 1,000 new sessions each taking one agent turn
 * at once (the in-memory store, its journal off, the scripted LLM answering in 50 ms: the
 * workload of bench/sessions-scale-ab.ts). The difference of the two totals over
 * (BURSTS − 1) × 1,000 turns is the cost of a warm turn, start-up and module loading subtracted.
 * Counts include V8's garbage-collector and compiler threads, which valgrind runs one at a time:
 * a measure of work done, to compare two checkouts by, not a prediction of their time.
 */
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { callgrindInstructions, requireValgrind } from "./callgrind.ts";
import { printTable } from "./measure.ts";

const SESSIONS = 1000;
const question = { input: "What is (2123 + 2321) * 312?" };

/** In the child: the warm-up, then `bursts` bursts, on the checkout at `root`. */
async function side(root: string, bursts: number): Promise<void> {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { openSessionStore } = await load("src/sessions/open-store.ts");
  const { Sessions } = await load("src/sessions/sessions.ts");
  const { newAgent } = await load("bench/sessions-scale.ts");
  const { withoutJournal } = await import("./session-workload.ts");
  const sessions = new Sessions(newAgent(50), withoutJournal(await openSessionStore("memory:")));
  const burst = (tag: string, n: number) => Promise.all(Array.from({ length: n }, (_, i) => sessions.run(`${tag}-${i}`, question)));
  for (let w = 0; w < 3; w++) await burst(`w${w}`, 300);
  for (let b = 0; b < bursts; b++) await burst(`b${b}`, SESSIONS);
  process.exit(0);
}

const sideArgs = (root: string, bursts: number) => ["--import", "tsx", fileURLToPath(import.meta.url), "--side", root, String(bursts)];

const [first, second, third] = process.argv.slice(2);
if (first === "--side") {
  await side(String(second), Number(third));
} else {
  const bursts = Number(second ?? 3);
  if (!(bursts >= 2)) throw new Error(`BURSTS must be 2 or more (it was ${second}): one burst is the start-up subtracted from the others.`);
  requireValgrind();
  const roots = first ? [resolve(first), resolve(import.meta.dirname, "..")] : [resolve(import.meta.dirname, "..")];
  // tsx caches what it compiled on disk: a first run fills the cache, so both counted children read it.
  for (const root of roots) execFileSync(process.execPath, sideArgs(root, 0), { stdio: "ignore" });
  const counts = await Promise.all(roots.flatMap((root) => [callgrindInstructions(sideArgs(root, 1)), callgrindInstructions(sideArgs(root, bursts))]));
  const perTurn = roots.map((_, r) => ((counts[2 * r + 1] as number) - (counts[2 * r] as number)) / ((bursts - 1) * SESSIONS));
  console.log(
    `callgrind, instructions per session turn, ${SESSIONS} sessions at once: (total with ${bursts} bursts − total with 1) / (${bursts - 1} × ${SESSIONS} turns)\n`,
  );
  const format = (v: number) => Math.round(v).toLocaleString("en-US");
  printTable(
    [...roots.map((root, i) => (roots.length > 1 && i === 0 ? `other (${root})` : `this (${root})`)), ...(roots.length > 1 ? ["this / other"] : [])],
    [[...perTurn.map(format), ...(roots.length > 1 ? [((perTurn[1] as number) / (perTurn[0] as number)).toFixed(3)] : [])]],
  );
}
