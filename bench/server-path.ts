/**
 * The server's request path: `POST /api/workflows/echo/run` of a one-step workflow, 32 clients
 * on keep-alive connections for a few seconds, against `WorkflowServer` (memory and SQLite
 * stores) and against the floor, bare Hono awaiting the same `workflow.run()`. Each side runs
 * in a process of its own (bench/server-path-child.ts), the sides taking turns, three rounds;
 * the table has each side's median requests/s and p99. With `BENCH_SERVER_OTHER=CHECKOUT` the
 * same runs of that checkout's server come too (an A/B in one run). Then Server-Sent Events: 16
 * clients each starting a run that writes 100 events and reading them to the end, against Hono's
 * `streamSSE` writing the same run's events directly. Then the heap after a full GC of a server
 * that has served 1,000 runs, 10,000 and 30,000 (`BENCH_SERVER_HEAP_AT`).
 */
import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { printTable } from "./measure.ts";

const CLIENTS = Number(process.env.BENCH_SERVER_PATH_CLIENTS ?? 32);
const SECONDS = Number(process.env.BENCH_SERVER_PATH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_SERVER_PATH_ROUNDS ?? 3);
const here = resolve(import.meta.dirname, "..");
const child = fileURLToPath(new URL("./server-path-child.ts", import.meta.url));

interface Side {
  readonly name: string;
  readonly root: string;
  readonly mode: "stepflow" | "hono";
  readonly store: (dir: string) => string;
  /** Each request carries an `Idempotency-Key` of its own (a new UUID). */
  readonly keyed?: boolean;
}

async function start(side: Side, dir: string): Promise<{ url: string; proc: ChildProcess }> {
  const proc = fork(child, [side.root, side.mode, side.store(dir)], {
    execArgv: ["--import", "tsx", "--expose-gc"],
    stdio: ["ignore", "pipe", "inherit", "ipc"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).once("line", resolveUrl);
    proc.once("exit", (code) => reject(new Error(`the ${side.name} server exited (${code})`)));
  });
  return { url, proc };
}

async function stop(proc: ChildProcess): Promise<void> {
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGKILL");
  await exited;
}

function post(url: URL, agent: Agent, n: number, keyed = false): Promise<number> {
  const body = JSON.stringify({ input: { n } });
  const headers = { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), ...(keyed ? { "Idempotency-Key": randomUUID() } : {}) };
  return new Promise((resolvePost, reject) => {
    const req = request(url, { method: "POST", agent, headers }, (res) => {
      res.resume();
      res.once("end", () => resolvePost(res.statusCode ?? 0));
    });
    req.once("error", reject);
    req.end(body);
  });
}

/** `CLIENTS` loops posting for `seconds`: requests/s, p99 in ms, and how many answers were not 200. */
async function load(url: string, seconds: number, keyed = false): Promise<{ rps: number; p99: number; errors: number; count: number }> {
  const target = new URL("/api/workflows/echo/run", url);
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; performance.now() < end; i++) {
        const t0 = performance.now();
        const status = await post(target, agent, c * 1_000_000 + i, keyed);
        latencies.push(performance.now() - t0);
        if (status !== 200) errors++;
      }
    }),
  );
  const wall = (performance.now() - began) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / wall, p99: latencies[Math.floor(latencies.length * 0.99)] ?? NaN, errors, count: latencies.length };
}

/**
 * `CLIENTS` clients, each starting an `inbox` run (its store padded with `pad` KB) and then
 * sending it one event after another for `seconds`: events/s, p99 in ms, and how many answers
 * were not 202.
 */
async function eventsLoad(url: string, mode: Side["mode"], seconds: number, pad: number): Promise<{ rps: number; p99: number; errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const ids = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const started = await fetchText(
        new URL(mode === "hono" ? "/inbox/start" : "/api/workflows/inbox/start", url),
        agent,
        "POST",
        JSON.stringify({ input: { pad } }),
      );
      if (started.status !== 202) throw new Error(`start answered ${started.status}: ${started.text}`);
      return (JSON.parse(started.text) as { id: string }).id;
    }),
  );
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const began = performance.now();
  await Promise.all(
    ids.map(async (id) => {
      const target = new URL(`/api/handlers/${id}/events`, url);
      for (let i = 0; performance.now() < end; i++) {
        const t0 = performance.now();
        const { status } = await fetchText(target, agent, "POST", JSON.stringify({ type: "Note", data: { i } }));
        latencies.push(performance.now() - t0);
        if (status !== 202) errors++;
      }
    }),
  );
  const wall = (performance.now() - began) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / wall, p99: latencies[Math.floor(latencies.length * 0.99)] ?? NaN, errors };
}

/** The sizes (KB) of the store of the runs events are sent into (`BENCH_SERVER_EVENTS_PAD`). */
const EVENTS_PAD = (process.env.BENCH_SERVER_EVENTS_PAD ?? "0,100").split(",").map(Number);

async function eventsTable(sides: readonly Side[], dir: string): Promise<void> {
  for (const pad of EVENTS_PAD) {
    console.log(
      `
POST /api/handlers/:id/events: ${CLIENTS} clients, each sending events one after another into a run of its own that waits for them (its store ${pad} KB); medians of ${ROUNDS} rounds of ${SECONDS} s:\n`,
    );
    const measured = await inRounds(sides, dir, ROUNDS, async (side, { url }) => {
      await eventsLoad(url, side.mode, 1, pad);
      return eventsLoad(url, side.mode, SECONDS, pad);
    });
    const floor = median((measured[0] ?? []).map((r) => r.rps));
    printTable(
      ["server", "events/s", "p99 (ms)", "errors", "× bare Hono"],
      sides.map((side, s) => {
        const r = measured[s] ?? [];
        const rps = median(r.map((x) => x.rps));
        return [
          side.mode === "hono" ? "bare Hono sending into the run" : side.name,
          rps.toFixed(0),
          median(r.map((x) => x.p99)).toFixed(1),
          String(r.reduce((n, x) => n + x.errors, 0)),
          (rps / floor).toFixed(2),
        ];
      }),
    );
  }
}

const SSE_CLIENTS = Number(process.env.BENCH_SERVER_SSE_CLIENTS ?? 16);

/** Sends `method url` and resolves with the status and the whole body. */
function fetchText(url: URL, agent: Agent, method: "GET" | "POST", body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolveText, reject) => {
    const headers = body === undefined ? {} : { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) };
    const req = request(url, { method, agent, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.once("end", () => resolveText({ status: res.statusCode ?? 0, text }));
    });
    req.once("error", reject);
    req.end(body);
  });
}

/** One run of `ticks` read as SSE to its `end` frame; false unless all 100 events and the end came. */
async function sseRun(base: string, agent: Agent, mode: Side["mode"]): Promise<boolean> {
  let text: string;
  if (mode === "hono") {
    ({ text } = await fetchText(new URL("/ticks/sse", base), agent, "POST", "{}"));
  } else {
    const started = await fetchText(new URL("/api/workflows/ticks/start", base), agent, "POST", JSON.stringify({ input: {} }));
    if (started.status !== 202) return false;
    const { id } = JSON.parse(started.text) as { id: string };
    ({ text } = await fetchText(new URL(`/api/handlers/${id}/events`, base), agent, "GET"));
  }
  return (text.match(/^event: [^\n]*Tick$/gm)?.length ?? 0) === 100 && /^event: end$/m.test(text) && text.includes('"status":"succeeded"');
}

/** `SSE_CLIENTS` loops of `sseRun` for `seconds`: runs/s and how many streams were wrong. */
async function sseLoad(url: string, mode: Side["mode"], seconds: number): Promise<{ rps: number; errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: SSE_CLIENTS * 2 });
  let done = 0;
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: SSE_CLIENTS }, async () => {
      while (performance.now() < end) {
        if (!(await sseRun(url, agent, mode))) errors++;
        done++;
      }
    }),
  );
  agent.destroy();
  return { rps: done / ((performance.now() - began) / 1000), errors };
}

function heap(proc: ChildProcess): Promise<number> {
  return new Promise((resolveHeap) => {
    proc.once("message", (m) => resolveHeap((m as { heap: number }).heap));
    proc.send("heap");
  });
}

/** Runs `count` runs through the server, 32 at a time. */
async function runs(url: string, count: number): Promise<void> {
  const target = new URL("/api/workflows/echo/run", url);
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count) await post(target, agent, next++);
    }),
  );
  agent.destroy();
}

/**
 * Which parts run (`BENCH_SERVER_PATH_PARTS`, comma-separated): run-and-wait, SSE, the heap over
 * many runs, and (not by default) `cpu`: run-and-wait's CPU per run, in process, without HTTP;
 * `events`: events sent into waiting runs (`POST /api/handlers/:id/events`).
 */
/**
 * `BENCH_SERVER_PATH_KEYED=1`: run-and-wait is measured with an `Idempotency-Key` on each request
 * too (kept in the store when it is SQLite: a claim and an answer written per request).
 */
const KEYED = process.env.BENCH_SERVER_PATH_KEYED === "1";
/** The stores the servers are measured on (`BENCH_SERVER_PATH_STORES`, comma-separated): memory, sqlite. */
const STORES = (process.env.BENCH_SERVER_PATH_STORES ?? "memory,sqlite").split(",");

const PARTS = new Set((process.env.BENCH_SERVER_PATH_PARTS ?? "run,sse,heap").split(","));

/** How many runs each in-process CPU measurement drives (after as many to warm up). */
const CPU_RUNS = Number(process.env.BENCH_SERVER_CPU_RUNS ?? 5000);

/** The CPU time the server's process has used so far (all threads), in µs. */
function processCpu(proc: ChildProcess): Promise<number> {
  return new Promise((resolveCpu) => {
    proc.once("message", (m) => resolveCpu((m as { used: number }).used));
    proc.send("used");
  });
}

function cpuPerRun(proc: ChildProcess, runs: number): Promise<{ cpu: number; gc: number }> {
  return new Promise((resolveCpu) => {
    proc.once("message", (m) => resolveCpu(m as { cpu: number; gc: number }));
    proc.send({ cpu: runs });
  });
}

/** After how many runs the heap is measured (cumulative). */
const HEAP_AT = (process.env.BENCH_SERVER_HEAP_AT ?? "1000,10000,30000").split(",").map(Number);

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

export async function benchServerPath(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "stepflow-bench-path-"));
  const other = process.env.BENCH_SERVER_OTHER ? resolve(process.env.BENCH_SERVER_OTHER) : undefined;
  const stores = (
    [
      ["memory", () => "memory:"],
      ["SQLite", (d) => `sqlite:${join(d, `server-${Math.random().toString(36).slice(2)}.db`)}`],
    ] satisfies [string, (dir: string) => string][]
  ).filter(([name]) => STORES.includes(name.toLowerCase()));
  const sides: Side[] = [{ name: "bare Hono awaiting workflow.run()", root: here, mode: "hono", store: () => "memory:" }];
  for (const [storeName, store] of stores) {
    if (other) sides.push({ name: `stepflow ${other}, ${storeName}`, root: other, mode: "stepflow", store });
    sides.push({ name: `stepflow (this checkout), ${storeName}`, root: here, mode: "stepflow", store });
    if (KEYED && other) sides.push({ name: `stepflow ${other}, ${storeName}, keyed`, root: other, mode: "stepflow", store, keyed: true });
    if (KEYED) sides.push({ name: `stepflow (this checkout), ${storeName}, keyed`, root: here, mode: "stepflow", store, keyed: true });
  }
  console.log(`${CLIENTS} clients on keep-alive connections, ${SECONDS} s per side and round, ${ROUNDS} rounds; medians of the rounds.\n`);
  try {
    // The server's CPU per request too: on a machine shared with other jobs, requests/s moves with
    // the share of the cores each side gets, its CPU time much less.
    const results = await inRounds(sides, dir, PARTS.has("run") ? ROUNDS : 0, async (side, { url, proc }) => {
      await load(url, 1, side.keyed); // warm-up: the JIT, the routes, the store's statements
      const before = await processCpu(proc);
      const measured = await load(url, SECONDS, side.keyed);
      return { ...measured, cpu: ((await processCpu(proc)) - before) / measured.count };
    });
    const floor = median((results[0] ?? []).map((r) => r.rps));
    const cpuFloor = median((results[0] ?? []).map((r) => r.cpu));
    if (PARTS.has("run"))
      printTable(
        ["server", "requests/s", "p99 (ms)", "errors", "× bare Hono", "server CPU µs per request", "CPU × bare Hono's"],
        sides.map((side, s) => {
          const r = results[s] ?? [];
          const rps = median(r.map((x) => x.rps));
          const cpu = median(r.map((x) => x.cpu));
          return [
            side.name,
            rps.toFixed(0),
            median(r.map((x) => x.p99)).toFixed(1),
            String(r.reduce((n, x) => n + x.errors, 0)),
            (rps / floor).toFixed(2),
            cpu.toFixed(0),
            (cpu / cpuFloor).toFixed(2),
          ];
        }),
      );

    // The other parts send no keys.
    const unkeyed = sides.filter((side) => side.keyed !== true);
    if (PARTS.has("cpu")) await cpuTable(unkeyed, dir);
    if (PARTS.has("events")) await eventsTable(unkeyed, dir);
    if (PARTS.has("sse")) await sseTable(unkeyed, dir);
    if (PARTS.has("heap")) await heapTable(unkeyed, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `rounds` rounds of `measure` on every side, each in a server of its own started for it; which
 * side goes first moves on each round. The results, by side.
 */
async function inRounds<T>(
  sides: readonly Side[],
  dir: string,
  rounds: number,
  measure: (side: Side, server: { url: string; proc: ChildProcess }) => Promise<T>,
): Promise<T[][]> {
  const results = sides.map(() => [] as T[]);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < sides.length; k++) {
      const s = (round + k) % sides.length;
      const side = sides[s] as Side;
      const server = await start(side, dir);
      try {
        results[s]?.push(await measure(side, server));
      } finally {
        await stop(server.proc);
      }
    }
  }
  return results;
}

async function cpuTable(sides: readonly Side[], dir: string): Promise<void> {
  console.log(
    `\nCPU per run-and-wait in process (the app's fetch called with Requests, no HTTP, 32 at a time), all threads: medians of ${ROUNDS} rounds of ${CPU_RUNS.toLocaleString("en-US")} runs, each after as many to warm up:\n`,
  );
  const measured = await inRounds(sides, dir, ROUNDS, async (_side, { proc }) => {
    await cpuPerRun(proc, CPU_RUNS);
    return cpuPerRun(proc, CPU_RUNS);
  });
  const floor = median((measured[0] ?? []).map((r) => r.cpu));
  printTable(
    ["server", "CPU per run (µs)", "of which GC (µs)", "× bare Hono"],
    sides.map((side, s) => {
      const r = measured[s] ?? [];
      const cpu = median(r.map((x) => x.cpu));
      return [side.name, cpu.toFixed(0), median(r.map((x) => x.gc)).toFixed(0), (cpu / floor).toFixed(2)];
    }),
  );
}

async function sseTable(sides: readonly Side[], dir: string): Promise<void> {
  console.log(
    `\nServer-Sent Events: ${SSE_CLIENTS} clients, each starting a run that writes 100 events and reading its stream to the end; medians of ${ROUNDS} rounds of ${SECONDS} s:\n`,
  );
  const sse = await inRounds(sides, dir, ROUNDS, async (side, { url }) => {
    await sseLoad(url, side.mode, 1);
    return sseLoad(url, side.mode, SECONDS);
  });
  const sseFloor = median((sse[0] ?? []).map((r) => r.rps));
  printTable(
    ["server", "runs/s", "errors", "× Hono streamSSE"],
    sides.map((side, s) => {
      const r = sse[s] ?? [];
      const rps = median(r.map((x) => x.rps));
      return [
        side.mode === "hono" ? "Hono streamSSE writing the run's events directly" : side.name,
        rps.toFixed(0),
        String(r.reduce((n, x) => n + x.errors, 0)),
        (rps / sseFloor).toFixed(2),
      ];
    }),
  );
}

async function heapTable(sides: readonly Side[], dir: string): Promise<void> {
  console.log(`\nHeap in use after a full GC, after ${HEAP_AT.map((n) => n.toLocaleString("en-US")).join(", ")} runs (one server per row):\n`);
  const memorySides = sides.filter((side) => side.mode === "stepflow");
  const rows: string[][] = [];
  for (const side of memorySides) {
    const { url, proc } = await start(side, dir);
    try {
      const heaps: number[] = [];
      let done = 0;
      for (const at of HEAP_AT) {
        await runs(url, at - done);
        done = at;
        heaps.push(await heap(proc));
      }
      const first = heaps[0] as number;
      const last = heaps.at(-1) as number;
      rows.push([side.name, ...heaps.map((h) => (h / 2 ** 20).toFixed(1)), ((last - first) / 2 ** 20).toFixed(1)]);
    } finally {
      await stop(proc);
    }
  }
  printTable(
    ["server", ...HEAP_AT.map((n) => `after ${n.toLocaleString("en-US")} runs (MB)`), `grew from ${(HEAP_AT[0] as number).toLocaleString("en-US")} (MB)`],
    rows,
  );
}
