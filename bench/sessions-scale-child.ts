/**
 * One process's share of the sessions-scale benchmark's multi-process run:
 * `node --import tsx bench/sessions-scale-child.ts STORE_URL SESSIONS PREFIX`. It warms up,
 * prints READY, waits for a line on stdin, runs its sessions' turns all at once, and prints a
 * JSON `ChildReport`.
 */
import { openSessionStore } from "../src/sessions/open-store.ts";
import { Sessions } from "../src/sessions/sessions.ts";
import { newAgent, stallMonitor } from "./sessions-scale.ts";
import type { ChildReport } from "./sessions-scale.ts";

const [url = "", count = "0", prefix = "p"] = process.argv.slice(2);
const store = await openSessionStore(url);
const sessions = new Sessions(newAgent(50), store);
const question = { input: "What is (2123 + 2321) * 312?" };
await Promise.all(Array.from({ length: 20 }, (_, i) => sessions.run(`${prefix}-warm-${i}`, question)));
process.stdout.write("READY\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
const cpu = process.cpuUsage();
const stalls = stallMonitor();
const outcomes = await Promise.allSettled(Array.from({ length: Number(count) }, (_, i) => sessions.run(`${prefix}-${i}`, question)));
const maxDelayMs = stalls.stop();
const used = process.cpuUsage(cpu);
const report: ChildReport = { maxDelayMs, cpuMs: (used.user + used.system) / 1000, failed: outcomes.filter((o) => o.status === "rejected").length };
process.stdout.write(`${JSON.stringify(report)}\n`);
await store.close();
