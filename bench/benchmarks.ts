/** The benchmarks `npm run bench` runs, in order: the title of each table and how to run it. */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const events = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const rounds = Number(process.env.BENCH_AGENT_ROUNDS ?? 2000);

export const BENCHMARKS = {
  engine: {
    title: `Engine: ping-pong between two steps, ${events.toLocaleString("en")} events`,
    run: async () => void (await (await import("./engine.ts")).benchEngine(events)),
  },
  compat: {
    title: `Compat: the same ping-pong on stepflow/compat/workflow-core, stepflow's engine and @llamaindex/workflow-core, ${events.toLocaleString("en")} events`,
    run: async () => void (await (await import("./compat.ts")).benchCompat(events)),
  },
  agent: {
    title: `Agent: one turn of "What is (2123 + 2321) * 312?" (3 streamed LLM calls, 2 tool calls) against the local SSE server`,
    run: async () => (await import("./agent.ts")).benchAgent(rounds),
  },
  sessions: {
    title: "Sessions: one turn (load, a one-line reply, save) on a stored history",
    run: async () => (await import("./sessions.ts")).benchSessions(),
  },
  "sessions-scale": {
    title: "Sessions at scale: long sessions, and 250 / 500 / 1,000 sessions at once",
    run: async () => (await import("./sessions-scale.ts")).benchSessionsScale(),
  },
  otel: {
    title: "Tracing: the engine and offline agent turns without an observer, with no-op spans, and with spans recorded by the OpenTelemetry SDK",
    run: async () => (await import("./otel.ts")).benchOtel(),
  },
  import: {
    title:
      "Cold start: the files and the time of each subpath export's import, `stepflow --help` and one offline answer, against `node -e 0` (the build in dist/)",
    run: async () => {
      // A script of its own, in plain JavaScript, because CI runs it too (`--check`) without tsx.
      const script = fileURLToPath(new URL("../scripts/import-cost.mjs", import.meta.url));
      const child = spawnSync(process.execPath, [script], { stdio: "inherit" });
      if (child.status !== 0) throw new Error(`scripts/import-cost.mjs failed (${child.signal ?? `exit code ${child.status}`}).`);
    },
  },
  server: {
    title: "Server: 200 SSE clients at once, one offline-model turn each, and 200 that hang up mid-stream",
    run: async () => (await import("./server.ts")).benchServer(),
  },
  "server-path": {
    title: "Server request path: run-and-wait of a one-step workflow against bare Hono, and the heap after 100 and 10,000 runs",
    run: async () => (await import("./server-path.ts")).benchServerPath(),
  },
  "web-page": {
    title: "Web page: what the chat and the inspector load, and how fast they answer, in Chromium",
    run: async () => (await import("./web-page.ts")).benchWebPage(),
  },
  tools: {
    title: "Tool selection: 300 OpenAPI operations as tools, recall@k and prompt tokens per request",
    run: async () => (await import("./tools.ts")).benchTools(),
  },
  dbos: {
    title: "DBOS runtime: overhead per step and per agent turn, and worker processes' throughput",
    run: async () => (await import("./dbos.ts")).benchDbos(),
  },
} as const;

export type BenchmarkName = keyof typeof BENCHMARKS;

export const isBenchmarkName = (name: string): name is BenchmarkName => Object.hasOwn(BENCHMARKS, name);
