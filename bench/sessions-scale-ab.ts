/**
 * Many sessions at once on this checkout's stores against another checkout's, in one process:
 * `node --import tsx --expose-gc bench/sessions-scale-ab.ts OTHER_CHECKOUT ROUNDS SESSIONS STORE_URL…`
 * (say `/tmp/base 5 1000 sqlite:/tmp/ab.db $DATABASE_URL`). Per store, each side opens it with
 * its own modules, without the store's journal, serves 3 warm-up batches of 300 sessions, then
 * the sides take turns running SESSIONS new sessions at once (one agent turn each on the 50 ms
 * scripted LLM), ROUNDS times each. Prints, per side, the medians: wall ms, longest event-loop
 * stall, CPU ms per turn (all threads, the main thread, the other threads) and the CPU of the
 * PostgreSQL backends serving the run, per turn.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Sessions as SessionsClass } from "../src/sessions/sessions.ts";
import type { SessionStore } from "../src/sessions/types.ts";
import type { newAgent as NewAgent } from "./sessions-scale.ts";
import { mainThreadCpuMs, postgresCpuMs, stallMonitor } from "./sessions-scale.ts";
import { collectGarbage, printTable } from "./measure.ts";
import { withoutJournal } from "./session-workload.ts";

const [other, roundsArg, sessionsArg, ...urls] = process.argv.slice(2);
if (!other || urls.length === 0) throw new Error("Usage: bench/sessions-scale-ab.ts OTHER_CHECKOUT ROUNDS SESSIONS STORE_URL…");
const rounds = Number(roundsArg ?? 5);
const n = Number(sessionsArg ?? 1000);
const here = join(import.meta.dirname, "..");
const question = { input: "What is (2123 + 2321) * 312?" };
const FIELDS = ["wall ms", "max event-loop delay, ms", "CPU ms per turn (all threads)", "main thread", "other threads", "PostgreSQL backends"] as const;

/** One side: the checkout at `root`, on the store at `url`. */
async function side(root: string, url: string, tag: string) {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { openSessionStore } = (await load("src/sessions/open-store.ts")) as { openSessionStore: (url: string) => Promise<SessionStore> };
  const { Sessions } = (await load("src/sessions/sessions.ts")) as { Sessions: typeof SessionsClass };
  const { newAgent } = (await load("bench/sessions-scale.ts")) as { newAgent: typeof NewAgent };
  const store = await openSessionStore(url);
  // Without the store's journal: the store's own share of a turn.
  const sessions = new Sessions(newAgent(50), withoutJournal(store));
  for (let w = 0; w < 3; w++) await Promise.all(Array.from({ length: 300 }, (_, i) => sessions.run(`${tag}-w${w}-${i}-${process.pid}`, question)));
  return {
    store,
    /** One round: the figures in `FIELDS` order. */
    async run(round: number): Promise<number[]> {
      collectGarbage();
      const cpu = process.cpuUsage();
      const main = mainThreadCpuMs();
      const db = postgresCpuMs(url);
      const stalls = stallMonitor();
      const started = performance.now();
      await Promise.all(Array.from({ length: n }, (_, i) => sessions.run(`${tag}-r${round}-${i}-${process.pid}`, question)));
      const wall = performance.now() - started;
      const stall = stalls.stop();
      const used = process.cpuUsage(cpu);
      const all = (used.user + used.system) / 1000 / n;
      const mainPerTurn = (mainThreadCpuMs() - main) / n;
      return [wall, stall, all, mainPerTurn, all - mainPerTurn, (postgresCpuMs(url) - db) / n];
    },
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const rows: string[][] = [];
for (const url of urls) {
  const sides = [await side(other, url, "other"), await side(here, url, "this")];
  const figures: number[][][] = [[], []];
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < 2; k++) {
      const s = (round + k) % 2; // which side goes first alternates
      figures[s]?.push(await (sides[s] as Awaited<ReturnType<typeof side>>).run(round));
    }
  }
  for (const [k, name] of [`other (${other})`, "this"].entries()) {
    const medians = FIELDS.map((_, f) => median((figures[k] ?? []).map((run) => run[f] ?? NaN)));
    rows.push([url.split(":")[0] ?? url, name, ...medians.map((value, f) => (Number.isNaN(value) ? "-" : value.toFixed(f === 0 ? 0 : f === 1 ? 1 : 2)))]);
  }
  for (const s of sides) await s.store.close();
}
printTable(["store", "side", ...FIELDS], rows);
