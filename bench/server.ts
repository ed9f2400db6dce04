/**
 * The server under load: `stepflow serve` in a process of its own, 200 clients at once each
 * starting one offline-model turn ("What is (2123 + 2321) * 312?") and following its events
 * over SSE; then 200 more that hang up after the first event. Reports time to first event and
 * to the end (p50/p99), errors, and what the server still holds once the runs are over.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const CLIENTS = Number(process.env.BENCH_SERVER_CLIENTS ?? 200);
const QUESTION = "What is (2123 + 2321) * 312?";
const main = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));

interface Health {
  live: number;
  handlers: number;
  readers: number;
  waiters: number;
}

async function startServer(store: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete env[name];
  const child = spawn(process.execPath, ["--import", "tsx", main, "serve", "--port", "0", "--store", store], { env, stdio: ["ignore", "pipe", "ignore"] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`stepflow serve exited (${code})`)));
  });
  const url = /http:\/\/\S+/.exec(line)?.[0];
  if (!url) throw new Error(`stepflow serve printed ${line}`);
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** One client: start a run, read its SSE stream; times from the start request, in ms. */
async function oneTurn(url: string, hangUpAfterFirst: boolean): Promise<{ first: number; end: number; ok: boolean }> {
  const t0 = performance.now();
  const started = await fetch(`${url}/api/workflows/agent/start`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ input: { input: QUESTION } }),
  });
  if (started.status !== 202) return { first: NaN, end: NaN, ok: false };
  const { id } = (await started.json()) as { id: string };
  const controller = new AbortController();
  const response = await fetch(`${url}/api/handlers/${id}/events`, { headers: { Accept: "text/event-stream" }, signal: controller.signal });
  const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
  if (!response.ok || !reader) return { first: NaN, end: NaN, ok: false };
  let first = NaN;
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (Number.isNaN(first)) {
      first = performance.now() - t0;
      if (hangUpAfterFirst) {
        controller.abort();
        await reader.cancel().catch(() => {});
        return { first, end: NaN, ok: true };
      }
    }
    text += value;
  }
  const end = performance.now() - t0;
  const ok = text.includes('"delta":"1386528"') && text.includes('event: end\ndata: {"end":true,"status":"succeeded"}');
  return { first, end, ok };
}

const percentile = (values: number[], p: number) => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const ms = (v: number) => (v < 10 ? v.toFixed(1) : v.toFixed(0));

async function health(url: string): Promise<Health> {
  return (await (await fetch(`${url}/api/health`)).json()) as Health;
}

/** Waits until the server has no run in progress (the runs of hung-up clients go on to their end). */
async function settled(url: string): Promise<Health> {
  for (;;) {
    const h = await health(url);
    if (h.live === 0 && h.readers === 0) return h;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function benchServer(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "stepflow-bench-server-"));
  const stores: [string, string][] = [
    ["memory", "memory:"],
    ["SQLite", `sqlite:${join(dir, "server.db")}`],
  ];
  if (process.env.DATABASE_URL) stores.push(["PostgreSQL", process.env.DATABASE_URL]);
  console.log(`${CLIENTS} clients at once, each: POST start, then GET events (SSE) to the end. Times in ms from the POST.\n`);
  console.log("| store | clients | errors | first event p50 | p99 | end p50 | p99 | wall (s) | runs/s | after hang-ups: runs live, readers, waiters |");
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  try {
    for (const [name, store] of stores) {
      const server = await startServer(store);
      try {
        const began = Date.now();
        await oneTurn(server.url, false); // warm-up: first compile of the routes and the agent
        // The floor: the same turn with no other client.
        const alone: { first: number; end: number; ok: boolean }[] = [];
        const s0 = performance.now();
        for (let i = 0; i < 50; i++) alone.push(await oneTurn(server.url, false));
        const aloneWall = (performance.now() - s0) / 1000;
        console.log(
          `| ${name} | 1 at a time (50) | ${alone.filter((r) => !r.ok).length} | ${ms(
            percentile(
              alone.map((r) => r.first),
              50,
            ),
          )} | ${ms(
            percentile(
              alone.map((r) => r.first),
              99,
            ),
          )} | ${ms(
            percentile(
              alone.map((r) => r.end),
              50,
            ),
          )} | ${ms(
            percentile(
              alone.map((r) => r.end),
              99,
            ),
          )} | ${aloneWall.toFixed(2)} | ${(50 / aloneWall).toFixed(0)} | |`,
        );
        const t0 = performance.now();
        const results = await Promise.all(Array.from({ length: CLIENTS }, () => oneTurn(server.url, false).catch(() => ({ first: NaN, end: NaN, ok: false }))));
        const wall = (performance.now() - t0) / 1000;
        const errors = results.filter((r) => !r.ok).length;
        const firsts = results.map((r) => r.first);
        const ends = results.map((r) => r.end);
        // Clients that hang up after the first event: their runs must finish and leave no reader behind.
        const hungUp = await Promise.all(Array.from({ length: CLIENTS }, () => oneTurn(server.url, true).catch(() => ({ first: NaN, end: NaN, ok: false }))));
        const after = await settled(server.url);
        const hangUpErrors = hungUp.filter((r) => !r.ok).length;
        // A PostgreSQL database may hold the runs of an earlier benchmark: count this one's.
        const list = (await (await fetch(`${server.url}/api/handlers?limit=10000&status=succeeded`)).json()) as { handlers: { createdAt: string }[] };
        const succeeded = list.handlers.filter((h) => Date.parse(h.createdAt) >= began).length;
        console.log(
          `| ${name} | ${CLIENTS} | ${errors + hangUpErrors} | ${ms(percentile(firsts, 50))} | ${ms(percentile(firsts, 99))} | ${ms(percentile(ends, 50))} | ${ms(percentile(ends, 99))} | ${wall.toFixed(2)} | ${(CLIENTS / wall).toFixed(0)} | ${after.live}, ${after.readers}, ${after.waiters} (${succeeded} of ${2 * CLIENTS + 51} runs succeeded) |`,
        );
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // The request path without SSE, against bare Hono, and the server's heap over 10,000 runs.
  console.log("\n### Request path: run-and-wait against bare Hono\n");
  await (await import("./server-path.ts")).benchServerPath();
}
