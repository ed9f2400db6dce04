/**
 * One process's share of the sessions-scale benchmark's multi-process run:
 * `node --import tsx bench/sessions-scale-child.ts STORE_URL SESSIONS PREFIX WARMUP`. It warms up
 * (`WARMUP` sessions at once, three times), prints READY, then for each line on stdin runs its
 * sessions' turns all at once and prints a JSON `ChildReport`; it ends when stdin closes.
 */
import { createInterface } from "node:readline";
import { Sessions } from "../src/sessions/sessions.ts";
import { benchStore, mainThreadCpuMs, newAgent, openWithThreads, stallMonitor } from "./sessions-scale.ts";
import type { ChildReport } from "./sessions-scale.ts";

const [url = "", count = "0", prefix = "p", warmup = "100"] = process.argv.slice(2);
const { store, storeThreadsCpuMs } = await openWithThreads(url);
const sessions = new Sessions(newAgent(50), benchStore(store));
const question = { input: "What is (2123 + 2321) * 312?" };
for (let w = 0; w < 3; w++) await Promise.all(Array.from({ length: Number(warmup) }, (_, i) => sessions.run(`${prefix}-warm-${w}-${i}`, question)));
process.stdout.write("READY\n");
let round = 0;
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== "go") continue;
  (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  const main = mainThreadCpuMs();
  const storeThreads = storeThreadsCpuMs();
  const stalls = stallMonitor();
  const outcomes = await Promise.allSettled(Array.from({ length: Number(count) }, (_, i) => sessions.run(`${prefix}-${round}-${i}`, question)));
  const maxDelayMs = stalls.stop();
  const used = process.cpuUsage(cpu);
  const threads = storeThreadsCpuMs() - storeThreads;
  const report: ChildReport = {
    maxDelayMs,
    cpuMs: (used.user + used.system) / 1000,
    mainCpuMs: mainThreadCpuMs() - main,
    storeThreadsCpuMs: Number.isNaN(threads) ? null : threads,
    failed: outcomes.filter((o) => o.status === "rejected").length,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  round++;
}
await store.close();
