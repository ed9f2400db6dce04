/**
 * DBOS runtime benchmark (needs DATABASE_URL): what durability costs per step execution and
 * per agent turn, against the same runs in process; and how many agent turns a second 1, 2
 * and 4 worker processes finish with the 50 ms scripted model; and what a session turn costs
 * on DBOS against one in process. Each part uses a database of its own, made on the server of
 * DATABASE_URL and dropped after.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { Event, StartEvent, StopEvent, Workflow, step } from "../src/index.ts";
import type { Context } from "../src/index.ts";
import { DbosRuns, DbosSessions, DbosWorker } from "../src/dbos/index.ts";
import { SessionTurns } from "../src/dbos/sessions.ts";
import { PostgresSessionStore } from "../src/sessions/postgres-store.ts";
import { Sessions } from "../src/sessions/sessions.ts";
import { printTable } from "./measure.ts";
import { counted, inFlight, timed, total } from "./sql-count.ts";
import type { SqlCounts, TimedStatement } from "./sql-count.ts";
import { newAgent } from "./sessions-scale.ts";

const STEPS = 100;
const RUNS = Number(process.env.BENCH_DBOS_RUNS ?? 30);
const TURNS = Number(process.env.BENCH_DBOS_TURNS ?? 48);
const WORKER_CONCURRENCY = 8;
const SESSION_TURNS = Number(process.env.BENCH_DBOS_SESSION_TURNS ?? 60);
const POLLING_MS = 20;

class Tick extends Event<{ left: number }> {}

/** One step that runs `steps` times in a row: each execution is one checkpoint on DBOS. */
class Countdown extends Workflow<{ steps: number }, number> {
  @step({ accepts: [StartEvent, Tick], emits: [Tick, StopEvent] })
  async tick(_ctx: Context, ev: StartEvent<{ steps: number }> | Tick) {
    const left = ev instanceof Tick ? ev.left : ev.steps;
    return left > 1 ? new Tick({ left: left - 1 }) : new StopEvent({ result: 0 });
  }
}

async function withDatabase<T>(name: string, body: (url: string) => Promise<T>): Promise<T> {
  const server = process.env.DATABASE_URL as string;
  const db = `${name}_${process.pid}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: server });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${db}`);
  const url = new URL(server);
  url.pathname = `/${db}`;
  try {
    return await body(url.toString());
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  }
}

/** Mean milliseconds of `run`, over `times` runs one after another (after one to warm up). */
async function mean(times: number, run: () => PromiseLike<unknown>): Promise<number> {
  await run();
  const started = performance.now();
  for (let i = 0; i < times; i++) await run();
  return (performance.now() - started) / times;
}

async function overhead(): Promise<void> {
  const countdown = new Countdown({ timeout: null });
  const agent = newAgent(0);
  const question = { input: "What is (2123 + 2321) * 312?" };
  // In process a run takes microseconds: many more of them, for a mean that holds still.
  const local = {
    one: await mean(RUNS * 100, () => countdown.run({ steps: 1 })),
    many: await mean(RUNS * 100, () => countdown.run({ steps: STEPS })),
    turn: await mean(RUNS * 100, () => agent.run(question)),
  };
  const durable = await withDatabase("stepflow_bench_dbos", async (database) => {
    const worker = await DbosWorker.start({ database, workflows: { countdown, agent } });
    try {
      return {
        one: await mean(RUNS, () => worker.run("countdown", { steps: 1 })),
        many: await mean(RUNS, () => worker.run("countdown", { steps: STEPS })),
        turn: await mean(RUNS, () => worker.run("agent", question)),
      };
    } finally {
      await worker.stop();
    }
  });
  const perStep = (m: { one: number; many: number }) => (m.many - m.one) / (STEPS - 1);
  const ms = (n: number) => n.toFixed(3);
  printTable(
    ["", "in process", "DBOS runtime (DbosWorker.run)", "overhead"],
    [
      ["a run of 1 step, ms", ms(local.one), ms(durable.one), ms(durable.one - local.one)],
      [`a run of ${STEPS} steps, ms`, ms(local.many), ms(durable.many), ms(durable.many - local.many)],
      ["each step execution after the first, ms", ms(perStep(local)), ms(perStep(durable)), ms(perStep(durable) - perStep(local))],
      ["an agent turn (3 LLM calls, 2 tool calls; instant model), ms", ms(local.turn), ms(durable.turn), ms(durable.turn - local.turn)],
    ],
  );
  console.log(
    `\n(means of runs one after another: ${RUNS * 100} of each in process, ${RUNS} on DBOS, through the PostgreSQL at ${new URL(process.env.DATABASE_URL as string).host})\n`,
  );
}

function startWorkerProcess(database: string, id: string, stream: boolean): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      fileURLToPath(new URL("./dbos-worker-child.ts", import.meta.url)),
      database,
      id,
      String(WORKER_CONCURRENCY),
      stream ? "stream" : "nostream",
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => String(d).includes("ready") && resolve(child));
    child.on("exit", (code) => reject(new Error(`worker ${id} exited with ${code}`)));
  });
}

async function throughput(): Promise<void> {
  const rows: string[][] = [];
  for (const [workers, stream] of [1, 2, 4].flatMap((n) => [[n, true] as const, [n, false] as const])) {
    await withDatabase("stepflow_bench_dbos_tp", async (database) => {
      const children = await Promise.all(Array.from({ length: workers }, (_, i) => startWorkerProcess(database, `bench-${i + 1}`, stream)));
      const runs = await DbosRuns.connect({ database, pollingInterval: 50 });
      try {
        const started = performance.now();
        const ids = await Promise.all(Array.from({ length: TURNS }, () => runs.start("agent", { input: "What is (2123 + 2321) * 312?" })));
        await Promise.all(ids.map((id) => runs.result(id)));
        const seconds = (performance.now() - started) / 1000;
        const by = new Map<string, number>();
        for (const id of ids) {
          const worker = (await runs.workerOf(id)) ?? "?";
          by.set(worker, (by.get(worker) ?? 0) + 1);
        }
        rows.push([
          String(workers),
          stream ? "all" : "none",
          String(workers * WORKER_CONCURRENCY),
          (TURNS / seconds).toFixed(1),
          seconds.toFixed(2),
          [...by.values()].sort((a, b) => b - a).join(" / "),
        ]);
      } finally {
        await runs.close();
        await Promise.all(children.map((child) => new Promise((resolve) => (child.once("exit", resolve), child.kill("SIGTERM")))));
      }
    });
  }
  printTable(["worker processes", "events streamed", "runs at once (8 each)", "agent turns / s", `${TURNS} turns, s`, "turns per worker"], rows);
  console.log(
    "\n(each turn: 3 calls to the scripted model, 50 ms each, and 2 tool calls; the turns are put on the queue at once and awaited from another process)",
  );
}

/**
 * One session's turns, one after another: in process (`Sessions` on the PostgreSQL store),
 * and on DBOS (`DbosSessions`, a worker in this process taking them from the queue); beside
 * them plain agent runs through the same queue, so that the difference is what a turn's load
 * and save cost on DBOS.
 */
async function sessionTurns(): Promise<void> {
  const agent = newAgent(0);
  const question = { input: "What is (2123 + 2321) * 312?" };
  const measured = await withDatabase("stepflow_bench_dbos_sessions", async (database) => {
    const store = await PostgresSessionStore.open(database);
    const worker = await DbosWorker.start({ database, workflows: { agent }, pollingInterval: POLLING_MS });
    const runs = await DbosRuns.connect({ database, pollingInterval: POLLING_MS });
    const sessions = await DbosSessions.connect({ database, pollingInterval: POLLING_MS });
    try {
      const local = new Sessions(agent, store);
      const inProcess = await mean(SESSION_TURNS, () => local.run("in-process", question));
      // Taken in turns, so that the machine's load, which changes by the second here, weighs on both alike.
      const plain = async () => runs.result(await runs.start("agent", question));
      const turn = async () => sessions.runs.result(await sessions.start("on-dbos", question));
      await plain();
      await turn();
      let plainMs = 0;
      let turnMs = 0;
      for (let i = 0; i < SESSION_TURNS; i++) {
        const started = performance.now();
        await plain();
        const between = performance.now();
        await turn();
        plainMs += between - started;
        turnMs += performance.now() - between;
      }
      // The worker's side of a turn alone, without DBOS: noting the turn, loading the session, noting what it loaded, noting what it saves, and saving.
      const pool = new pg.Pool({ connectionString: database, max: 2 });
      const hooks = await SessionTurns.open(pool, database);
      let hooksMs = 0;
      for (let i = 0; i <= SESSION_TURNS; i++) {
        const runId = `hooks-${i}`;
        const started = performance.now();
        await pool.query("INSERT INTO stepflow_dbos_session_turns (run_id, session_id) VALUES ($1, 'hooks')", [runId]);
        const ctx = await hooks.start(runId, agent);
        const loaded = performance.now();
        await agent.run(question, { ctx });
        const ran = performance.now();
        const ended = await hooks.finish(runId, agent, ctx as NonNullable<typeof ctx>, { kind: "finished", result: null });
        if (ended.kind === "failed") throw new Error(ended.error.message);
        if (i > 0) hooksMs += loaded - started + (performance.now() - ran);
      }
      await hooks.close();
      await pool.end();
      return {
        inProcess,
        hooks: hooksMs / SESSION_TURNS,
        plainRun: plainMs / SESSION_TURNS,
        sessionTurn: turnMs / SESSION_TURNS,
        messages: (await store.load("on-dbos", { newest: 0 }))?.messageCount ?? 0,
      };
    } finally {
      await sessions.close();
      await runs.close();
      await worker.stop();
      await store.close();
    }
  });
  const ms = (n: number) => n.toFixed(1);
  printTable(
    ["an agent turn (instant model), one after another", "ms"],
    [
      ["a session turn in process (Sessions, PostgreSQL store)", ms(measured.inProcess)],
      ["a run without session on DBOS, through the queue", ms(measured.plainRun)],
      ["a session turn on DBOS (DbosSessions), through the queue", ms(measured.sessionTurn)],
      ["what the session adds on DBOS", ms(measured.sessionTurn - measured.plainRun)],
      ["of which the turn's load, notes and save (measured alone)", ms(measured.hooks)],
      ["what DBOS adds to a session turn", ms(measured.sessionTurn - measured.inProcess)],
    ],
  );
  console.log(
    `\n(means of ${SESSION_TURNS} turns after one to warm up, the runs on DBOS with and without a session taken in turns, each session growing to ${measured.messages} messages; queue and results polled every ${POLLING_MS} ms; worker and client in this process)\n`,
  );
}

/**
 * The SQL statements one run sends (DBOS's and stepflow's, counted in this process by the table
 * they touch), and its time, for a run of one step and for an agent turn through
 * `DbosWorker.run`; the queue's polls and the heartbeats, which do not grow with the runs, are
 * not counted.
 */
async function statements(): Promise<void> {
  const countdown = new Countdown({ timeout: null });
  const agent = newAgent(0);
  const question = { input: "What is (2123 + 2321) * 312?" };
  const measured = await withDatabase("stepflow_bench_dbos_sql", async (database) => {
    const worker = await DbosWorker.start({ database, workflows: { countdown, agent } });
    try {
      const measure = async (run: () => Promise<unknown>) => {
        await run();
        const counts: SqlCounts = new Map();
        const started = performance.now();
        for (let i = 0; i < RUNS; i++) await counted(counts, run);
        return { counts, ms: (performance.now() - started) / RUNS };
      };
      return {
        one: await measure(() => worker.run("countdown", { steps: 1 })),
        turn: await measure(() => worker.run("agent", question)),
      };
    } finally {
      await worker.stop();
    }
  });
  const kinds = [...new Set([...measured.one.counts.keys(), ...measured.turn.counts.keys()])].sort();
  const per = (counts: SqlCounts, kind?: string) => ((kind === undefined ? total(counts) : (counts.get(kind) ?? 0)) / RUNS).toFixed(1);
  printTable(
    ["statements per run (DbosWorker.run)", "a run of 1 step", "an agent turn (instant model)"],
    [
      ...kinds.map((kind) => [kind, per(measured.one.counts, kind), per(measured.turn.counts, kind)]),
      ["**all statements**", per(measured.one.counts), per(measured.turn.counts)],
      ["**ms per run**", measured.one.ms.toFixed(1), measured.turn.ms.toFixed(1)],
    ],
  );
  console.log(`\n(means of ${RUNS} runs one after another, after one to warm up; statements counted in this process, by the table they name)\n`);
}

/**
 * Where the time of a run through `DbosWorker.run` goes: how much of it some SQL statement is
 * under way (sent, not answered yet: PostgreSQL's work, the round trip, and this process's
 * handling of the answer) and how much none is (this process's work between statements, or a
 * wait on a timer), with the CPU time this process spends per run; then one run of one step,
 * statement by statement (the run of median time).
 */
async function timeline(): Promise<void> {
  const countdown = new Countdown({ timeout: null });
  const agent = newAgent(0);
  const question = { input: "What is (2123 + 2321) * 312?" };
  const measured = await withDatabase("stepflow_bench_dbos_timeline", async (database) => {
    const worker = await DbosWorker.start({ database, workflows: { countdown, agent } });
    try {
      const measure = async (run: () => Promise<unknown>) => {
        for (let i = 0; i < 5; i++) await run();
        const runs: { ms: number; statements: TimedStatement[] }[] = [];
        const cpu = process.cpuUsage();
        for (let i = 0; i < RUNS; i++) runs.push(await timed(run));
        const used = process.cpuUsage(cpu);
        return { runs, cpu: (used.user + used.system) / 1000 / RUNS };
      };
      return {
        one: await measure(() => worker.run("countdown", { steps: 1 })),
        turn: await measure(() => worker.run("agent", question)),
      };
    } finally {
      await worker.stop();
    }
  });
  const ms = (n: number) => n.toFixed(2);
  const sum = (runs: { ms: number; statements: TimedStatement[] }[], f: (run: { ms: number; statements: TimedStatement[] }) => number) =>
    runs.reduce((all, run) => all + f(run), 0) / runs.length;
  const figures = (m: typeof measured.one) => {
    const run = sum(m.runs, (r) => r.ms);
    const busy = sum(m.runs, (r) => inFlight(r.statements, r.ms));
    const statements = sum(m.runs, (r) => r.statements.length);
    return { run: ms(run), busy: ms(busy), idle: ms(run - busy), cpu: ms(m.cpu), statements: statements.toFixed(1), each: ms(busy / statements) };
  };
  const [one, turn] = [figures(measured.one), figures(measured.turn)];
  printTable(
    ["per run (DbosWorker.run)", "a run of 1 step", "an agent turn (instant model)"],
    [
      ["ms per run", one.run, turn.run],
      ["of which some statement under way, ms", one.busy, turn.busy],
      ["of which none under way, ms", one.idle, turn.idle],
      ["CPU time of this process, ms", one.cpu, turn.cpu],
      ["statements", one.statements, turn.statements],
      ["under way per statement, ms", one.each, turn.each],
    ],
  );
  const median = [...measured.one.runs].sort((a, b) => a.ms - b.ms)[Math.floor(measured.one.runs.length / 2)] as (typeof measured.one.runs)[number];
  let answered = 0;
  printTable(
    ["sent at, ms", "answered after, ms", "none under way before it, ms", "statement"],
    median.statements.map((statement) => {
      const before = Math.max(0, statement.sent - answered);
      answered = Math.max(answered, statement.answered ?? median.ms);
      return [ms(statement.sent), statement.answered === undefined ? "-" : ms(statement.answered - statement.sent), ms(before), statement.text.slice(0, 90)];
    }),
  );
  console.log(
    `\n(means of ${RUNS} runs one after another, after 5 to warm up; the run of one step above took ${ms(median.ms)} ms, ${ms(Math.max(0, median.ms - answered))} ms of it after its last statement)\n`,
  );
}

export async function benchDbos(): Promise<void> {
  if (!process.env.DATABASE_URL) {
    console.log("(skipped: DATABASE_URL is not set; bash .ci/postgres.sh starts a PostgreSQL)");
    return;
  }
  const only = process.env.BENCH_DBOS_ONLY;
  if (!only || only === "statements") await statements();
  if (only === "timeline") await timeline();
  if (!only || only === "overhead") await overhead();
  if (!only || only === "throughput") await throughput();
  if (!only || only === "sessions") await sessionTurns();
}
