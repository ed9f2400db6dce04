/** `npm run bench`: every benchmark, one after another, in one process. */
import os from "node:os";
import { benchAgent } from "./agent.ts";
import { benchEngine } from "./engine.ts";
import { benchSessions } from "./sessions.ts";

const events = Number(process.env.BENCH_EVENTS ?? 1_000_000);
console.log(`# stepflow benchmarks — node ${process.version}, ${os.cpus()[0]?.model ?? "cpu"} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB\n`);
console.log(`## Engine: ping-pong between two steps, ${events.toLocaleString("en")} events\n`);
await benchEngine(events);

const pairs = Number(process.env.BENCH_AGENT_PAIRS ?? 2000);
console.log(`\n## Agent: one turn of "What is (2123 + 2321) * 312?" (3 streamed LLM calls, 2 tool calls) against the local SSE server\n`);
await benchAgent(pairs);

console.log(`\n## Sessions: one turn (load, a one-line reply, save) on a stored history\n`);
await benchSessions();
