/**
 * Sessions at scale, on SQLite and PostgreSQL (when DATABASE_URL is set):
 * - a turn on sessions of 10, 1,000 and 10,000 stored turns (built by writing rows directly):
 *   the store's save of one turn, and the whole turn through `Sessions`;
 * - 250, 500 and 1,000 sessions each running one agent turn at once on a scripted LLM that
 *   answers in 50 ms (3 calls a turn, so 150 ms is the ideal): wall time against the ideal, the
 *   longest stall of the event loop, and the CPU a turn costs, where: the main thread, the
 *   SQLite store's worker thread, the process's other threads (V8's helpers: garbage collection,
 *   compilation), and PostgreSQL's backends. Each store serves a warm-up batch first (a server runs warm: the
 *   first batches measure the JIT compiler), then each concurrency a few rounds: medians.
 * - the SQLite store alone at the same concurrency: the longest event-loop stall of its statements,
 *   on the main thread (as before) and on its worker thread (now).
 * `npm run bench -- sessions-scale`; `BENCH_SCALE_ONLY=length`, `=store` or `=concurrency` runs one part.
 * `BENCH_SCALE_CONCURRENCY` (default 250,500,1000), `BENCH_SCALE_ROUNDS` (3), `BENCH_SCALE_WARMUP`
 * (sessions in each of 3 warm-up batches, 300), `BENCH_SCALE_PROCESSES` (2,4),
 * `BENCH_SCALE_JOURNAL=off` (the stores without their shared tool-call journal).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { createClient } from "@libsql/client";
import pg from "pg";
import { ScriptedLLM } from "../src/llm/scripted-llm.ts";
import { openSessionStore } from "../src/sessions/open-store.ts";
import { Sessions } from "../src/sessions/sessions.ts";
import type { SessionStore } from "../src/sessions/types.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";
import { add, multiply } from "../workflows/tools/calculator.ts";
import { collectGarbage, printTable } from "./measure.ts";
import { agentTurn, withoutJournal } from "./session-workload.ts";

const LENGTHS = [10, 1_000, 10_000];
const CONCURRENCY = (process.env.BENCH_SCALE_CONCURRENCY ?? "250,500,1000").split(",").map(Number);
const PROCESSES = (process.env.BENCH_SCALE_PROCESSES ?? "2,4").split(",").filter(Boolean).map(Number);
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 3);
const WARMUP = Number(process.env.BENCH_SCALE_WARMUP ?? 300);
const WITH_JOURNAL = process.env.BENCH_SCALE_JOURNAL !== "off";
const LLM_MS = 50;
const CALLS_PER_TURN = 3;
const IDEAL_MS = LLM_MS * CALLS_PER_TURN;
const only = process.env.BENCH_SCALE_ONLY;
const TURNS_PER_LENGTH = Number(process.env.BENCH_SCALE_TURNS ?? 40);

/** The store as `Sessions` sees it: without its journal when `BENCH_SCALE_JOURNAL=off`. */
export function benchStore(store: SessionStore): SessionStore {
  return WITH_JOURNAL ? store : withoutJournal(store);
}

/** CPU ms of this process's main thread (Linux: /proc; NaN elsewhere). */
export function mainThreadCpuMs(): number {
  return procCpuMs(`/proc/self/task/${process.pid}/stat`);
}

/** This process's threads (Linux: /proc; empty elsewhere). */
function threadIds(): Set<string> {
  try {
    return new Set(readdirSync("/proc/self/task"));
  } catch {
    return new Set();
  }
}

/**
 * Opens the store at `url`, noting the threads it started (the SQLite store's worker, and the
 * threads libsql starts in it), so that their CPU can be told from V8's helper threads.
 */
export async function openWithThreads(url: string): Promise<{ store: SessionStore; storeThreadsCpuMs: () => number }> {
  const before = threadIds();
  const store = await openSessionStore(url);
  const started = [...threadIds()].filter((tid) => !before.has(tid));
  return {
    store,
    storeThreadsCpuMs: () => (started.length === 0 ? NaN : started.reduce((sum, tid) => sum + (procCpuMs(`/proc/self/task/${tid}/stat`) || 0), 0)),
  };
}

/** utime + stime of a /proc stat file, in ms (the kernel counts in ticks of 10 ms). */
function procCpuMs(path: string): number {
  try {
    const stat = readFileSync(path, "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/**
 * CPU ms of the PostgreSQL backends serving `url`'s user and database, when the server runs on
 * this machine (their /proc titles read "postgres: USER DATABASE …"); NaN otherwise. Backends
 * of other users or databases, and the server's shared processes (WAL writer, checkpointer),
 * are not counted.
 */
export function postgresCpuMs(url: string): number {
  if (!/^postgres(ql)?:/.test(url)) return NaN;
  const parsed = new URL(url);
  const title = `postgres: ${decodeURIComponent(parsed.username || process.env.USER || "")} ${decodeURIComponent(parsed.pathname.slice(1))} `;
  let ms = 0;
  let found = false;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return NaN;
  }
  for (const pid of pids) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "latin1").startsWith(title)) continue;
    } catch {
      continue; // ended, or not ours to read
    }
    const used = procCpuMs(`/proc/${pid}/stat`);
    if (Number.isNaN(used)) continue;
    ms += used;
    found = true;
  }
  return found ? ms : NaN;
}

export const newAgent = (delayMs: number) =>
  new FunctionCallingAgent({ llm: new ScriptedLLM((request) => agentTurn(request), { delayMs, record: false }), tools: [add, multiply], timeout: null });

/** A stored message as a turn of this agent writes it (user, tool call, result, call, result, answer). */
function storedMessage(i: number): string {
  switch (i % 6) {
    case 0:
      return JSON.stringify({ role: "user", content: `What is (2123 + 2321) * 312? (turn ${i / 6})` });
    case 1:
      return JSON.stringify({ role: "assistant", content: "", options: { toolCall: [{ id: `call_a${i}`, name: "add", input: { x: 2123, y: 2321 } }] } });
    case 2:
      return JSON.stringify({ role: "user", content: "4444", options: { toolResult: { id: `call_a${i - 1}`, result: "4444", isError: false } } });
    case 3:
      return JSON.stringify({ role: "assistant", content: "", options: { toolCall: [{ id: `call_m${i}`, name: "multiply", input: { x: 4444, y: 312 } }] } });
    case 4:
      return JSON.stringify({ role: "user", content: "1386528", options: { toolResult: { id: `call_m${i - 1}`, result: "1386528", isError: false } } });
    default:
      return JSON.stringify({ role: "assistant", content: "(2123 + 2321) * 312 = 1,386,528." });
  }
}

/** Grows session `id` (one real turn stored) to `turns` turns by writing the message rows directly. */
async function grow(url: string, store: SessionStore, id: string, turns: number): Promise<void> {
  const first = await store.load(id);
  if (!first) throw new Error("seeding failed");
  const have = first.messages.length;
  const rows = Array.from({ length: turns * 6 - have }, (_, i) => storedMessage(have + i));
  const total = have + rows.length;
  if (url.startsWith("sqlite:")) {
    const db = createClient({ url: `file:${url.slice("sqlite:".length)}`, timeout: 5000 });
    try {
      await db.batch(
        [
          {
            sql: "INSERT INTO stepflow_session_messages (session_id, seq, message, created_at) SELECT ?, ? + key + 1, value, ? FROM json_each(?)",
            args: [id, have, Date.now(), JSON.stringify(rows)],
          },
          { sql: "UPDATE stepflow_sessions SET message_count = ? WHERE id = ?", args: [total, id] },
        ],
        "write",
      );
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("BEGIN");
      await client.query(
        "INSERT INTO stepflow_session_messages (session_id, seq, message, created_at) SELECT $1, $2::int + n, m, now() FROM unnest($3::text[]) WITH ORDINALITY AS t(m, n)",
        [id, have, rows],
      );
      await client.query("UPDATE stepflow_sessions SET message_count = $1 WHERE id = $2", [total, id]);
      await client.query("COMMIT");
    } finally {
      await client.end();
    }
  }
}

/**
 * The longest stall of the event loop while it runs: `monitorEventLoopDelay`'s maximum, or the
 * longest gap between ticks of a 1 ms interval (counting to the end), whichever is longer. The
 * histogram alone misses a loop that never turns at all: it records a delay only when its timer
 * finally runs.
 */
export function stallMonitor(): { stop(): number } {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let last = performance.now();
  let longest = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  return {
    stop() {
      clearInterval(tick);
      histogram.disable();
      return Math.max(histogram.max / 1e6, longest, performance.now() - last);
    },
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

/** What a turn on a long session costs: the store's save alone, and the whole turn (wall and CPU). */
interface LengthResult {
  readonly save: number;
  readonly turn: number;
  readonly cpu: number;
}

/**
 * Per length: median ms of one store save (a turn's messages), and of one whole turn, wall and
 * CPU (every thread of the process). The turns of the three lengths take turns, so that the
 * drift of a shared machine falls on each alike: the ratios are measured in one run.
 */
async function lengths(name: string, url: string): Promise<Map<number, LengthResult>> {
  const results = new Map<number, LengthResult>();
  const store = await openSessionStore(url);
  const sessions = new Sessions(newAgent(0), store);
  const ids = LENGTHS.map((turns) => `scale-${turns}-${process.pid}-${name}`);
  try {
    for (const [i, turns] of LENGTHS.entries()) {
      const id = ids[i] as string;
      await sessions.run(id, { input: "What is (2123 + 2321) * 312?" });
      await grow(url, store, id, turns);
      // The first turn loads the window (and tokenizes it); the steady state of a server is what follows.
      for (let k = 0; k < 3; k++) await sessions.run(id, { input: "warm up" });
    }
    const times: number[][] = LENGTHS.map(() => []);
    const cpus: number[][] = LENGTHS.map(() => []);
    for (let round = 0; round < TURNS_PER_LENGTH; round++) {
      for (const [i] of LENGTHS.entries()) {
        const cpu = process.cpuUsage();
        const started = performance.now();
        await sessions.run(ids[i] as string, { input: `Turn ${round}` });
        times[i]?.push(performance.now() - started);
        const used = process.cpuUsage(cpu);
        cpus[i]?.push((used.user + used.system) / 1000);
      }
    }
    for (const [i, turns] of LENGTHS.entries()) {
      // The save alone: a turn's six messages and a snapshot, onto the session as it is.
      const saveId = `${ids[i]}-save`;
      await sessions.run(saveId, { input: "What is (2123 + 2321) * 312?" });
      await grow(url, store, saveId, turns);
      const record = await store.load(saveId, { newest: 0 });
      if (!record) throw new Error("session vanished");
      let version = record.version;
      const saves: number[] = [];
      for (let k = 0; k < 20; k++) {
        const append = Array.from({ length: 6 }, (_, j) => storedMessage(j));
        const started = performance.now();
        version = await store.save(saveId, { expectedVersion: version, snapshot: record.snapshot, append });
        saves.push(performance.now() - started);
      }
      results.set(turns, { save: median(saves.slice(3)), turn: median(times[i] ?? []), cpu: median(cpus[i] ?? []) });
      await store.delete(ids[i] as string);
      await store.delete(saveId);
    }
  } finally {
    await store.close();
  }
  return results;
}

interface ConcurrentRun {
  readonly wallMs: number;
  readonly maxDelayMs: number;
  /** The longest stall of any round (the others are medians of the rounds). */
  readonly worstDelayMs: number;
  /** CPU of the whole process (every thread) per turn. */
  readonly cpuMsPerTurn: number;
  /** CPU of the main thread per turn (NaN where /proc is not readable). */
  readonly mainCpuMsPerTurn: number;
  /** CPU of the threads the store started (the SQLite worker) per turn (NaN if none). */
  readonly storeThreadsCpuMsPerTurn: number;
  /** Time the main thread's event loop was busy, per turn (NaN for processes). */
  readonly mainMsPerTurn: number;
  /** CPU of the PostgreSQL backends serving the run, per turn (NaN if not PostgreSQL or not on this machine). */
  readonly dbCpuMsPerTurn: number;
  readonly failed: number;
}

const question = { input: "What is (2123 + 2321) * 312?" };

/**
 * Each of `counts` new sessions at once, each running one turn, `ROUNDS` times on one store (as
 * a server keeps it), after `WARMUP` sessions at once three times: the medians of the rounds.
 */
async function concurrent(url: string, counts: readonly number[]): Promise<Map<number, ConcurrentRun>> {
  const { store, storeThreadsCpuMs } = await openWithThreads(url);
  const sessions = new Sessions(newAgent(LLM_MS), benchStore(store));
  const results = new Map<number, ConcurrentRun>();
  try {
    for (let w = 0; w < 3; w++) await Promise.all(Array.from({ length: WARMUP }, (_, i) => sessions.run(`warm-${w}-${i}-${process.pid}`, question)));
    for (const n of counts) {
      const runs: ConcurrentRun[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        collectGarbage();
        const elu = performance.eventLoopUtilization();
        const cpu = process.cpuUsage();
        const main = mainThreadCpuMs();
        const storeThreads = storeThreadsCpuMs();
        const db = postgresCpuMs(url);
        const stalls = stallMonitor();
        const started = performance.now();
        const outcomes = await Promise.allSettled(Array.from({ length: n }, (_, i) => sessions.run(`c${n}-${round}-${i}-${process.pid}`, question)));
        const wallMs = performance.now() - started;
        const maxDelayMs = stalls.stop();
        const used = process.cpuUsage(cpu);
        const busy = performance.eventLoopUtilization(elu);
        const failed = outcomes.filter((o) => o.status === "rejected");
        if (failed[0]?.status === "rejected") console.error(`${failed.length} turns failed, the first: ${String(failed[0].reason)}`);
        runs.push({
          wallMs,
          maxDelayMs,
          worstDelayMs: maxDelayMs,
          cpuMsPerTurn: (used.user + used.system) / 1000 / n,
          mainCpuMsPerTurn: (mainThreadCpuMs() - main) / n,
          storeThreadsCpuMsPerTurn: (storeThreadsCpuMs() - storeThreads) / n,
          mainMsPerTurn: busy.active / n,
          dbCpuMsPerTurn: (postgresCpuMs(url) - db) / n,
          failed: failed.length,
        });
      }
      results.set(n, medianRun(runs));
    }
  } finally {
    await store.close();
  }
  return results;
}

/** Each field's median over the rounds (the failures summed, the worst stall kept). */
function medianRun(runs: readonly ConcurrentRun[]): ConcurrentRun {
  const of = (field: keyof ConcurrentRun) => median(runs.map((run) => run[field]));
  return {
    wallMs: of("wallMs"),
    maxDelayMs: of("maxDelayMs"),
    worstDelayMs: Math.max(...runs.map((run) => run.worstDelayMs)),
    cpuMsPerTurn: of("cpuMsPerTurn"),
    mainCpuMsPerTurn: of("mainCpuMsPerTurn"),
    storeThreadsCpuMsPerTurn: of("storeThreadsCpuMsPerTurn"),
    mainMsPerTurn: of("mainMsPerTurn"),
    dbCpuMsPerTurn: of("dbCpuMsPerTurn"),
    failed: runs.reduce((sum, run) => sum + run.failed, 0),
  };
}

/** What the statements of one turn's load and save do to the event loop, with nothing else running. */
interface StoreAlone {
  readonly wallMs: number;
  readonly maxDelayMs: number;
}

/**
 * `n` sessions at once, each a load and a save of one turn's six messages, as `Sessions` sends
 * them: through the store (its worker thread), and the same statements through an
 * `@libsql/client` on the main thread, as the store ran them before it had a worker.
 */
async function storeAlone(file: string, n: number, onMainThread: boolean): Promise<StoreAlone> {
  const append = JSON.stringify(Array.from({ length: 6 }, (_, j) => storedMessage(j)));
  const store = onMainThread ? undefined : await openSessionStore(`sqlite:${file}`);
  const db = onMainThread ? createClient({ url: `file:${file}`, timeout: 5000, concurrency: 1 }) : undefined;
  const turn = async (id: string) => {
    if (store) {
      const loaded = await store.load(id, { newest: 64 });
      await store.save(id, { expectedVersion: loaded?.version ?? 0, snapshot: "{}", append: JSON.parse(append) as string[] });
      return;
    }
    if (!db) return;
    await db.batch(
      [
        { sql: "SELECT version, snapshot, message_count FROM stepflow_sessions WHERE id = ?", args: [id] },
        { sql: "SELECT json_group_array(message ORDER BY seq) AS messages FROM stepflow_session_messages WHERE session_id = ?", args: [id] },
      ],
      "read",
    );
    await db.batch(
      [
        {
          sql: "INSERT INTO stepflow_sessions (id, version, snapshot, message_count, save_token, created_at, updated_at) VALUES (?, 1, '{}', 6, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
          args: [id, id, Date.now(), Date.now()],
        },
        {
          sql: "INSERT INTO stepflow_session_messages (session_id, seq, message, created_at) SELECT ?, key + 1, value, ? FROM json_each(?)",
          args: [id, Date.now(), append],
        },
      ],
      "write",
    );
  };
  try {
    const stalls = stallMonitor();
    const started = performance.now();
    await Promise.all(Array.from({ length: n }, (_, i) => turn(`alone-${onMainThread ? "main" : "worker"}-${n}-${i}`)));
    const wallMs = performance.now() - started;
    return { wallMs, maxDelayMs: stalls.stop() };
  } finally {
    await store?.close();
    db?.close();
  }
}

/** What a child process reports of its share of the sessions (bench/sessions-scale-child.ts). */
export interface ChildReport {
  readonly maxDelayMs: number;
  readonly cpuMs: number;
  readonly mainCpuMs: number;
  /** null if the store started no thread. */
  readonly storeThreadsCpuMs: number | null;
  readonly failed: number;
}

/**
 * `n` sessions split over `processes` processes on the same store, all started at once, `ROUNDS`
 * times (each process warms up first, then runs its share each time it is told to): the wall time
 * from the start signal to the last process's report; medians of the rounds.
 */
async function concurrentProcesses(url: string, n: number, processes: number): Promise<ConcurrentRun> {
  const child = fileURLToPath(new URL("./sessions-scale-child.ts", import.meta.url));
  const share = Math.ceil(n / processes);
  const warmup = Math.ceil(WARMUP / processes);
  const children = Array.from({ length: processes }, (_, k) => {
    const proc = spawn(process.execPath, ["--import", "tsx", "--expose-gc", child, url, String(share), `p${k}-${n}-${process.pid}`, String(warmup)], {
      stdio: ["pipe", "pipe", "inherit"],
      env: process.env,
    });
    const lines: string[] = [];
    const waiting: ((line: string) => void)[] = [];
    let buffered = "";
    proc.stdout.on("data", (d: Buffer) => {
      buffered += String(d);
      for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        const next = waiting.shift();
        if (next) next(line);
        else lines.push(line);
      }
    });
    const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
    const nextLine = () =>
      Promise.race([
        new Promise<string>((resolve) => {
          const line = lines.shift();
          if (line === undefined) waiting.push(resolve);
          else resolve(line);
        }),
        exited.then(() => Promise.reject(new Error("a benchmark process ended early"))),
      ]);
    return { proc, nextLine, exited };
  });
  const runs: ConcurrentRun[] = [];
  try {
    for (const c of children) if ((await c.nextLine()) !== "READY") throw new Error("a benchmark process did not start");
    for (let round = 0; round < ROUNDS; round++) {
      const db = postgresCpuMs(url);
      const started = performance.now();
      for (const c of children) c.proc.stdin.write("go\n");
      const reports = await Promise.all(children.map(async (c) => ({ report: JSON.parse(await c.nextLine()) as ChildReport, at: performance.now() })));
      const wallMs = Math.max(...reports.map((r) => r.at)) - started;
      const all = reports.map((r) => r.report);
      const maxDelayMs = Math.max(...all.map((r) => r.maxDelayMs));
      runs.push({
        wallMs,
        maxDelayMs,
        worstDelayMs: maxDelayMs,
        cpuMsPerTurn: all.reduce((t, r) => t + r.cpuMs, 0) / n,
        mainCpuMsPerTurn: all.reduce((t, r) => t + r.mainCpuMs, 0) / n,
        storeThreadsCpuMsPerTurn: all.reduce((t, r) => t + (r.storeThreadsCpuMs ?? NaN), 0) / n,
        mainMsPerTurn: NaN,
        dbCpuMsPerTurn: (postgresCpuMs(url) - db) / n,
        failed: all.reduce((t, r) => t + r.failed, 0),
      });
    }
  } finally {
    for (const c of children) c.proc.stdin.end();
    await Promise.all(children.map((c) => c.exited));
  }
  return medianRun(runs);
}

export async function benchSessionsScale(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "stepflow-scale-"));
  const targets: [string, string][] = [["SQLite", `sqlite:${join(dir, "sessions.db")}`]];
  if (process.env.DATABASE_URL) targets.push(["PostgreSQL", process.env.DATABASE_URL]);
  else console.log("(PostgreSQL skipped: DATABASE_URL is not set; bash .ci/postgres.sh starts one)\n");
  try {
    if (only === undefined || only === "length") {
      const byStore = new Map<string, Map<number, LengthResult>>();
      for (const [name, url] of targets) byStore.set(name, await lengths(name, url));
      const cell = (turns: number, field: keyof LengthResult) => targets.map(([name]) => byStore.get(name)?.get(turns)?.[field].toFixed(2) ?? "-").join(" / ");
      const ratio = (turns: number, field: keyof LengthResult) =>
        targets
          .map(([name]) => {
            const of = byStore.get(name);
            return ((of?.get(turns)?.[field] ?? NaN) / (of?.get(LENGTHS[0] as number)?.[field] ?? NaN)).toFixed(2);
          })
          .join(" / ");
      const names = targets.map(([name]) => name).join(" / ");
      console.log(
        `A turn on a long session (medians of ${TURNS_PER_LENGTH} turns per length, the lengths taking turns; the agent's turn: 3 LLM calls answering at once, 2 tool calls, 6 messages stored):\n`,
      );
      printTable(
        [
          "session length",
          `store save of one turn, ms (${names})`,
          `whole turn, ms (${names})`,
          `× the 10-turn turn (${names})`,
          `CPU ms per turn (${names})`,
          `CPU × the 10-turn turn (${names})`,
        ],
        LENGTHS.map((turns) => [
          `${turns.toLocaleString("en")} turns`,
          cell(turns, "save"),
          cell(turns, "turn"),
          ratio(turns, "turn"),
          cell(turns, "cpu"),
          ratio(turns, "cpu"),
        ]),
      );
      console.log();
    }
    if (only !== "length" && only !== "concurrency") {
      const file = join(dir, "alone.db");
      await (await openSessionStore(`sqlite:${file}`)).close(); // the tables
      const rows: string[][] = [];
      for (const n of CONCURRENCY) {
        const main = await storeAlone(file, n, true);
        const worker = await storeAlone(file, n, false);
        rows.push([
          n.toLocaleString("en"),
          `${main.maxDelayMs.toFixed(1)} / ${main.wallMs.toFixed(0)}`,
          `${worker.maxDelayMs.toFixed(1)} / ${worker.wallMs.toFixed(0)}`,
        ]);
      }
      console.log("The SQLite store alone: sessions at once, each loading and saving one turn (no agent, no LLM):\n");
      printTable(
        [
          "sessions at once",
          "libsql on the main thread (as before): max event-loop delay / wall, ms",
          "the store's worker thread (now): max event-loop delay / wall, ms",
        ],
        rows,
      );
      console.log();
    }
    if (only !== "length" && only !== "store") {
      console.log(
        `Concurrent sessions, one turn each, on a scripted LLM answering in ${LLM_MS} ms (${CALLS_PER_TURN} calls: ideal ${IDEAL_MS} ms); the store's journal ${WITH_JOURNAL ? "on" : "off"}; warm-up 3 × ${WARMUP} sessions, then medians of ${ROUNDS} rounds:\n`,
      );
      const rows: string[][] = [];
      const row = (name: string, n: number, run: ConcurrentRun) => {
        const ms = (value: number) => (Number.isNaN(value) ? "-" : value.toFixed(2));
        const others = run.cpuMsPerTurn - run.mainCpuMsPerTurn - (Number.isNaN(run.storeThreadsCpuMsPerTurn) ? 0 : run.storeThreadsCpuMsPerTurn);
        rows.push([
          name,
          n.toLocaleString("en"),
          run.wallMs.toFixed(0),
          (run.wallMs / IDEAL_MS).toFixed(2),
          `${run.maxDelayMs.toFixed(1)} (${run.worstDelayMs.toFixed(1)})`,
          ms(run.cpuMsPerTurn),
          ms(run.mainCpuMsPerTurn),
          ms(run.storeThreadsCpuMsPerTurn),
          ms(others),
          ms(run.mainMsPerTurn),
          ms(run.dbCpuMsPerTurn),
          String(run.failed),
        ]);
      };
      // The in-memory store first: the floor, what the turns cost with no database at all.
      const floor: [string, string] = ["memory (no database)", "memory:"];
      for (const [name, url] of [floor, ...targets]) {
        const runs = await concurrent(url, CONCURRENCY);
        for (const n of CONCURRENCY) row(name, n, runs.get(n) as ConcurrentRun);
      }
      // The same turns split over processes sharing the store: what more cores buy.
      for (const [name, url] of targets) {
        for (const processes of PROCESSES) {
          const n = Math.max(...CONCURRENCY);
          row(`${name}, ${processes} processes`, n, await concurrentProcesses(url, n, processes));
        }
      }
      printTable(
        [
          "store",
          "sessions at once",
          "wall ms",
          "× ideal",
          "max event-loop delay, ms (worst round)",
          "CPU ms per turn (all threads)",
          "main thread CPU ms per turn",
          "the SQLite worker's CPU ms per turn",
          "other threads' CPU ms per turn (V8's helpers)",
          "main thread busy ms per turn",
          "PostgreSQL backends' CPU ms per turn",
          "failed",
        ],
        rows,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
