/**
 * The chaos test of the DBOS runtime: `npm run chaos -- [--runs 200] [--kills 10] [--restarts 8,40]
 * [--takeover-after 30] [--answer-after 1,3] [--check] [--logs DIR] [--port N] [--dist]`. It starts a PostgreSQL server of its own (on
 * `--port`, default a free one), a side-effect API
 * that counts every effect by logical call and by Idempotency-Key and every model call, and
 * 3 workers (`dbos-chaos-worker.ts`); runs the workload once without faults (the baseline), then
 * again while it kills workers with SIGKILL at random (each restarted under its id or a new one)
 * and restarts PostgreSQL (each `--restarts` entry: seconds the database stays down). It prints
 * runs completed / failed / lost, duplicated effects, repeated model calls, unapproved executions,
 * and the wall time against the baseline's, then where the time beyond the outages went (see `timeline.ts`).
 * With `--check` it exits 1 unless every run completed and nothing happened twice (under one Idempotency-Key or not) or unapproved (what CI
 * runs, on a small workload). Every process's log (the workers', and DBOS's in this one) goes to files in
 * `--logs` (default: a new directory under the system's temporary one); stdout has the summary, and the
 * count of what those logs hold. `--dist`: the workers load the built package (`npm run build` first)
 * rather than compiling the sources as they start.
 *
 * The workload, a quarter each: agent turns with a data-changing call, the same needing approval
 * (answered 1–3 s after it is asked, or `--answer-after MIN,MAX` seconds, from this process, one in five refused), plain 4-step
 * workflows notifying once, and session turns (10 sessions).
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { ToolApprovalEvent } from "../events/index.ts";
import { DbosRunFailedError, DbosRuns, DbosSessions } from "../src/dbos/index.ts";
import { isConnectionError } from "../src/dbos/retry.ts";
import { freshDatabase } from "../test/support/postgres-database.ts";
import { startPostgresServer } from "../test/support/postgres-server.ts";
import { LogTally, Timeline, breakdown } from "./dbos-chaos-timeline.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    kills: { type: "string", default: "10" },
    restarts: { type: "string", default: "8,40" },
    "takeover-after": { type: "string", default: "30" },
    workers: { type: "string", default: "3" },
    deadline: { type: "string", default: "900" },
    seed: { type: "string", default: "38" },
    check: { type: "boolean", default: false },
    logs: { type: "string" },
    port: { type: "string" },
    dist: { type: "boolean", default: false },
    "answer-after": { type: "string", default: "1,3" },
  },
});
const LOGS = values.logs ?? mkdtempSync(join(tmpdir(), "stepflow-chaos."));
mkdirSync(LOGS, { recursive: true });
const ownLog = createWriteStream(join(LOGS, "chaos.log"));
/** A line of the summary: on stdout, and in chaos.log among DBOS's. */
const say = (line: string) => {
  process.stdout.write(`${line}\n`);
  ownLog.write(`${new Date().toISOString()} ${line}\n`);
};
// DBOS's log in this process (its client's, while PostgreSQL is away: a stack trace each time) goes to chaos.log, counted.
const ownTally = new LogTally();
const ownFeed = ownTally.stream();
for (const level of ["log", "info", "warn", "error", "debug"] as const) {
  console[level] = (...args: unknown[]) => {
    const text = args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : typeof a === "string" ? a : JSON.stringify(a))).join(" ");
    ownFeed(`${text}\n`);
    ownLog.write(`${new Date().toISOString()} ${text}\n`);
  };
}
const RUNS = Number(values.runs);
const KILLS = Number(values.kills);
const RESTARTS = (values.restarts ?? "")
  .split(",")
  .filter((s) => s !== "")
  .map(Number);
const TAKEOVER_AFTER = Number(values["takeover-after"]);
const WORKERS = Number(values.workers);
const DEADLINE = Number(values.deadline) * 1000;
/** Seconds after an approval is asked that its answer comes: from MIN to MAX, at random. */
const [ANSWER_MIN, ANSWER_MAX] = (values["answer-after"] ?? "1,3").split(",").map(Number) as [number, number];
if (!(ANSWER_MIN >= 0 && ANSWER_MAX >= ANSWER_MIN)) throw new Error(`--answer-after takes MIN,MAX in seconds, like 1,3; got ${values["answer-after"]}`);

// A seeded generator (mulberry32): the same faults at the same points of the workload, run after run.
let seed = Number(values.seed) >>> 0;
const random = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the API saw. */
interface Seen {
  effects: Map<string, { keys: (string | undefined)[]; workers: string[] }>;
  models: Map<string, { worker: string; at: number }[]>;
  approvals: Map<string, boolean>;
  unapproved: string[];
  /** The logical calls whose model read that a tool call in doubt was not made again (its outcome unknown). */
  unknownOutcomes: Set<string>;
}
const fresh = (): Seen => ({ effects: new Map(), models: new Map(), approvals: new Map(), unapproved: [], unknownOutcomes: new Set() });
let seen = fresh();

const api = createServer((req, res) => {
  let body = "";
  req.on("data", (d: Buffer) => (body += String(d)));
  req.on("end", () => {
    const { logical, kind, unknownOutcome } = JSON.parse(body || "{}") as { logical: string; kind?: string; unknownOutcome?: boolean };
    const worker = String(req.headers["x-worker"] ?? "");
    if (req.url === "/model") {
      const calls = seen.models.get(logical) ?? [];
      calls.push({ worker, at: Date.now() });
      seen.models.set(logical, calls);
      if (unknownOutcome === true) seen.unknownOutcomes.add(logical);
    } else if (req.url === "/effect") {
      const key = req.headers["idempotency-key"];
      const entry = seen.effects.get(logical) ?? { keys: [], workers: [] };
      entry.keys.push(typeof key === "string" ? key : undefined);
      entry.workers.push(worker);
      seen.effects.set(logical, entry);
      const tag = logical.split(":")[0] ?? "";
      if (kind === "update" && tag.startsWith("approval-") && seen.approvals.get(tag) !== true) seen.unapproved.push(logical);
    }
    res.end("{}");
  });
});
await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
const apiURL = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;

say(`== PostgreSQL of the chaos test (its own server); logs in ${LOGS}`);
const server = await startPostgresServer(values.port === undefined ? undefined : Number(values.port));
/** Whether PostgreSQL is up, for the timeline. */
let databaseUp = true;

interface Worker {
  id: string;
  proc: ChildProcess;
  out: string;
  ready: boolean;
}
const workers = new Set<Worker>();
/** pid → when it was killed. */
const killed = new Map<string, number>();
/** Ids killed and not started again yet (the restart waits 1–2 s): their runs wait for them. */
const restarting = new Set<string>();
/** Seconds from each worker's spawn to its "ready". */
const startTimes: number[] = [];
/** Of those starts, seconds loading (node, the loader, the imports) and in DbosWorker.start. */
const loadTimes: number[] = [];
const launchTimes: number[] = [];
const workerTally = new LogTally();
const timeline = new Timeline();

async function startWorker(url: string, id: string): Promise<Worker> {
  const loader = values.dist ? ["--import", "tsx", "--import", join(import.meta.dirname, "use-build.mjs")] : ["--import", "tsx"];
  const spawned = performance.now();
  const proc = spawn(process.execPath, [...loader, join(import.meta.dirname, "dbos-chaos-worker.ts"), url, id, apiURL, String(TAKEOVER_AFTER)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const worker: Worker = { id, proc, out: "", ready: false };
  workers.add(worker);
  proc.on("exit", () => workers.delete(worker));
  let err = "";
  proc.stderr?.on("data", (d: Buffer) => (err += String(d)));
  // Each process's output, for a look at what a worker did; its DBOS log counted for the summary.
  const log = createWriteStream(join(LOGS, `${id}-${String(proc.pid)}.log`));
  const keep = (feed: (chunk: string) => void) => (d: Buffer) => {
    log.write(`${new Date().toISOString()} ${String(d)}`);
    feed(String(d));
  };
  proc.stdout?.on("data", keep(workerTally.stream()));
  proc.stderr?.on("data", keep(workerTally.stream()));
  proc.on("exit", () => log.end());
  await new Promise<void>((resolve, reject) => {
    proc.stdout?.on("data", (d: Buffer) => {
      worker.out += String(d);
      if (worker.ready || !worker.out.includes("ready\n")) return;
      worker.ready = true;
      startTimes.push((performance.now() - spawned) / 1000);
      const timing = /timing: loaded ([\d.]+) s, DbosWorker.start ([\d.]+) s/.exec(worker.out);
      if (timing) {
        loadTimes.push(Number(timing[1]));
        launchTimes.push(Number(timing[2]));
      }
      resolve();
    });
    proc.on("exit", (code) => reject(new Error(`worker ${id} exited with ${code} before it was ready:\n${err.split("\n").slice(0, 5).join("\n")}`)));
  });
  proc.stdout?.on("data", (d: Buffer) => {
    for (const line of String(d).split("\n"))
      if (line.startsWith("took over") || line.startsWith("lost lease")) events.push(`${((Date.now() - phaseStart) / 1000).toFixed(1)} s: ${id}: ${line}`);
  });
  return worker;
}
const events: string[] = [];
let phaseStart = Date.now();

/** Client calls are the user's code: retried here while the database is down. */
async function riding<T>(work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      await sleep(500);
    }
  }
}

interface Outcome {
  completed: number;
  failed: string[];
  lost: number;
  wallMs: number;
}

async function phase(faults: boolean, baselineMs: number | undefined): Promise<Outcome> {
  seen = fresh();
  const db = await freshDatabase(server.url, faults ? "chaos_faults" : "chaos_baseline");
  let next = 1;
  await Promise.all(Array.from({ length: WORKERS }, () => startWorker(db.url, `w${next++}`)));
  const runs = await DbosRuns.connect({ database: db.url, pollingInterval: 200, connections: 4 });
  const sessions = await DbosSessions.connect({ database: db.url, workflow: "agent", pollingInterval: 200, connections: 2 });
  const ids: { id: string; client: DbosRuns; kind: string }[] = [];
  const approvals: Promise<void>[] = [];
  let done = false;
  phaseStart = Date.now();
  const started = performance.now(); // from the first run started to the last one ended, the workers up
  let completed = 0;
  const sampling = faults
    ? sample(
        db.url,
        () => done,
        () => completed,
      )
    : Promise.resolve();
  const faulting = faults
    ? injectFaults(
        db.url,
        baselineMs ?? 60_000,
        () => done,
        () => `w${next++}`,
        () => completed,
      )
    : Promise.resolve();
  for (let i = 0; i < RUNS; i++) {
    const kind = ["agent", "approval", "steps", "session"][i % 4] as string;
    const tag = `${kind}-${i}`;
    const input = `job ${tag}: update the record`;
    if (kind === "session") ids.push({ id: await riding(() => sessions.start(`s-${i % 10}`, { input }, { turnId: tag })), client: sessions.runs, kind });
    else {
      const id = await riding(() => runs.start(kind, kind === "steps" ? { tag } : { input }, { runId: tag }));
      ids.push({ id, client: runs, kind });
      if (kind === "approval") approvals.push(answer(runs, id, tag, i % 5 !== 0));
    }
  }
  const outcome: Outcome = { completed: 0, failed: [], lost: 0, wallMs: 0 };
  const deadline = Date.now() + DEADLINE;
  await Promise.all(
    ids.map(async ({ id, client }) => {
      const result = await Promise.race([
        riding(() => client.result(id)).then(
          () => "ok" as const,
          (error: unknown) => (error instanceof DbosRunFailedError ? `${id}: ${error.message}` : `${id}: ${String(error)}`),
        ),
        sleep(Math.max(0, deadline - Date.now())).then(() => "lost" as const),
      ]);
      if (result === "ok") {
        outcome.completed++;
        completed++;
      } else if (result === "lost") outcome.lost++;
      else outcome.failed.push(result);
    }),
  );
  outcome.wallMs = performance.now() - started;
  done = true;
  await faulting;
  await sampling;
  await Promise.race([Promise.all(approvals), sleep(1000)]);
  if (outcome.lost > 0) await describeLost(db.url);
  for (const worker of [...workers]) worker.proc.kill("SIGKILL");
  while (workers.size > 0) await sleep(50);
  await sessions.close();
  await runs.close();
  await db.drop();
  return outcome;
}

/**
 * Every half second until the phase ends: whether PostgreSQL is up, runs completed, workers up
 * and starting, the step records DBOS has (progress), and the runs left on a worker that is gone:
 * those whose worker id starts again (they wait for it) and the others (they wait for a takeover).
 */
async function sample(url: string, done: () => boolean, completed: () => number): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 1000 });
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  try {
    while (!done()) {
      const at = (Date.now() - phaseStart) / 1000;
      const ready = new Set([...workers].filter((w) => w.ready).map((w) => w.id));
      const starting = new Set([...[...workers].filter((w) => !w.ready).map((w) => w.id), ...restarting]);
      let steps: number | undefined;
      let waitingForStart = 0;
      let waitingForTakeover = 0;
      if (databaseUp) {
        try {
          const { rows } = await pool.query(
            `SELECT executor_id, count(DISTINCT split_part(workflow_uuid, '.part-', 1))::int AS n, (SELECT COALESCE(sum(seq), 0)::int FROM stepflow_dbos_checkpoints) AS steps
             FROM dbos.workflow_status WHERE status = 'PENDING' GROUP BY executor_id`,
          );
          steps = (rows[0] as { steps: number } | undefined)?.steps ?? 0;
          for (const { executor_id: id, n } of rows as { executor_id: string; n: number }[]) {
            if (ready.has(id)) continue;
            if (starting.has(id)) waitingForStart += n;
            else waitingForTakeover += n;
          }
        } catch {
          // Going down or coming back: the sample says so (no step count).
        }
      }
      timeline.add({ at, up: databaseUp, completed: completed(), ready: ready.size, starting: starting.size, steps, waitingForStart, waitingForTakeover });
      await sleep(500);
    }
  } finally {
    await pool.end();
  }
}

/** Where the runs that did not end are, as the database says: what to look at when a run is lost. */
async function describeLost(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT r.status AS run, r.executor_id AS run_on, p.status AS part, p.executor_id AS part_on, r.queue_name AS run_queue,
              (c.outcome IS NOT NULL) AS ended, (SELECT count(*) FROM dbos.notifications n WHERE n.destination_uuid = r.workflow_uuid)::int AS messages,
              count(*)::int AS n
       FROM dbos.workflow_status r
       LEFT JOIN LATERAL (SELECT * FROM dbos.workflow_status p WHERE p.workflow_uuid LIKE r.workflow_uuid || '.part-%' ORDER BY p.created_at DESC LIMIT 1) p ON true
       LEFT JOIN stepflow_dbos_checkpoints c ON c.run_id = r.workflow_uuid
       WHERE r.workflow_uuid NOT LIKE '%.part-%' AND r.status IN ('PENDING', 'ENQUEUED')
       GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY n DESC`,
    );
    say("   runs not ended (run status, its worker, newest part's status, its worker, run queue, end recorded, messages waiting: count):");
    for (const r of rows as Record<string, unknown>[]) say(`     ${Object.values(r).map(String).join(" ")}`);
    const w = await client.query("SELECT worker_id, epoch, taken_over_by, now() - heartbeat_at AS silent FROM stepflow_dbos_workers ORDER BY worker_id");
    for (const r of w.rows as Record<string, unknown>[])
      say(
        `     worker ${Object.values(r)
          .map((v) => JSON.stringify(v))
          .join(" ")}`,
      );
  } finally {
    await client.end();
  }
}

/** Answers the run's approval request `--answer-after` (1–3 s) after it is asked (refusing when `approve` is false), as a human in another process would. */
async function answer(runs: DbosRuns, runId: string, tag: string, approve: boolean): Promise<void> {
  // Until it has parked (its part may wait on the queue, or be taken over, meanwhile), or ended without asking.
  while ((await riding(() => runs.parked(runId, 30))) === 0) if (!["pending", "enqueued"].includes(await riding(() => runs.status(runId)))) return;
  let approvalId: string | undefined;
  for await (const ev of runs.events(runId)) {
    if (ev.type !== "agent.ToolApprovalRequestEvent") continue;
    approvalId = (ev.data as { approvalId: string }).approvalId;
    break;
  }
  if (approvalId === undefined) return;
  await sleep(1000 * (ANSWER_MIN + (ANSWER_MAX - ANSWER_MIN) * random()));
  seen.approvals.set(tag, approve);
  const id = approvalId;
  await riding(() => runs.respond(runId, new ToolApprovalEvent({ approvalId: id, approved: approve })));
}

/**
 * SIGKILLs at random points of the first 80% of the baseline's time; PostgreSQL stopped at a third and at two thirds of
 * it (each fault earlier if that share of the runs has completed before).
 */
async function injectFaults(url: string, baselineMs: number, done: () => boolean, newId: () => string, completed: () => number): Promise<void> {
  const start = Date.now();
  const kills = Array.from({ length: KILLS }, () => 0.1 + 0.7 * random())
    .sort()
    .map((f) => ({ at: f * baselineMs, kind: "kill" as const, down: 0 }));
  const restarts = RESTARTS.map((down, i) => ({ at: ((i + 1) / (RESTARTS.length + 1)) * baselineMs, kind: "restart" as const, down: down * 1000 }));
  let n = 0;
  for (const fault of [...kills, ...restarts].sort((a, b) => a.at - b.at)) {
    // At its point of the baseline's time, or once as large a share of the runs has completed, whichever comes first:
    // every fault takes effect, also when the runs go faster than in the baseline (whose workers started cold).
    while (Date.now() < start + fault.at && completed() < (fault.at / baselineMs) * RUNS && !done()) await sleep(100);
    if (done()) return;
    if (fault.kind === "restart") {
      say(`   ${((Date.now() - start) / 1000).toFixed(1)} s: PostgreSQL stopped for ${fault.down / 1000} s`);
      databaseUp = false;
      await server.stop();
      await sleep(fault.down);
      await server.start();
      databaseUp = true;
      continue;
    }
    // A worker that is up, and whose id no other process has: a worker id runs in one process at a time. When every
    // worker is still starting again after the kills before, the kill waits for one: each of the kills takes effect.
    let live = [...workers].filter((w) => w.ready);
    while (live.length === 0 && !done()) {
      await sleep(200);
      live = [...workers].filter((w) => w.ready);
    }
    const victim = live[Math.floor(random() * live.length)];
    if (!victim) return;
    const sameId = n++ % 2 === 0;
    say(`   ${((Date.now() - start) / 1000).toFixed(1)} s: SIGKILL ${victim.id} (back as ${sameId ? "itself" : "a new id"})`);
    killed.set(`${victim.id}:${String(victim.proc.pid)}`, Date.now());
    victim.proc.kill("SIGKILL");
    await new Promise((resolve) => victim.proc.once("exit", resolve));
    const id = sameId ? victim.id : newId();
    restarting.add(id);
    void sleep(1000 + 1000 * random()).then(() => restart(url, id));
  }
}

/** Starts worker `id` again, however long the database is away. */
async function restart(url: string, id: string): Promise<void> {
  for (;;) {
    try {
      const started = startWorker(url, id);
      restarting.delete(id); // its process counts from now on
      await started;
      return;
    } catch {
      await sleep(2000);
    }
  }
}

function tally() {
  let duplicated = 0;
  let sameKey = 0;
  /** Each effect applied more than once: which, under which keys, by which worker processes (killed ones marked). */
  const twice: string[] = [];
  for (const [logical, { keys, workers: by }] of seen.effects) {
    if (keys.length < 2) continue;
    if (keys.every((k) => k !== undefined && k === keys[0])) sameKey++;
    else duplicated++;
    twice.push(`${logical}: keys ${keys.map(String).join(", ")}; by ${by.map((w) => `${w}${killed.has(w) ? " (killed)" : ""}`).join(", ")}`);
  }
  let repeatsAfterKill = 0;
  let repeats = 0;
  const repeated: string[] = [];
  for (const [logical, calls] of seen.models) {
    for (let i = 1; i < calls.length; i++) {
      const before = calls[i - 1] as { worker: string; at: number };
      const at = killed.get(before.worker);
      // A call the API received after its worker's kill was sent before it, in flight when the process died: cut short too.
      if (at !== undefined) repeatsAfterKill++;
      else {
        repeats++;
        repeated.push(`${logical}: ${calls.map((c) => `${c.worker} at ${((c.at - phaseStart) / 1000).toFixed(1)} s`).join(", ")}`);
      }
    }
  }
  return { duplicated, sameKey, twice, repeats, repeatsAfterKill, repeated, unapproved: seen.unapproved.length };
}

const show = (o: Outcome) => `${o.completed} completed, ${o.failed.length} failed, ${o.lost} lost, ${(o.wallMs / 1000).toFixed(1)} s`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
try {
  say(`== baseline: ${RUNS} runs, ${WORKERS} workers, no faults${values.dist ? " (workers on the built package)" : ""}`);
  const baseline = await phase(false, undefined);
  const clean = tally();
  say(`   ${show(baseline)}`);
  say(`== faults: ${RUNS} runs, ${KILLS} worker kills, PostgreSQL restarts of ${RESTARTS.join(" s, ")} s, takeoverAfter ${TAKEOVER_AFTER} s`);
  const faults = await phase(true, baseline.wallMs);
  const t = tally();
  for (const line of events) say(`   ${line}`);
  say(`   ${show(faults)}`);
  for (const failure of faults.failed.slice(0, 10)) say(`   failed: ${failure}`);
  // The effect's call is a POST of a tool that does not say it is idempotent: cut short, it is reported as of unknown
  // outcome, never sent again, so an API that ignores the key applies it once too. Twice under one key is a failure.
  say(`   duplicated effects: ${t.duplicated} (applied twice under different keys or none), ${t.sameKey} under one Idempotency-Key`);
  for (const line of t.twice.slice(0, 10)) say(`     twice: ${line}`);
  say(`   repeated model calls: ${t.repeats} (of steps whose worker was not killed), ${t.repeatsAfterKill} after a kill cut their step short`);
  for (const line of t.repeated.slice(0, 10)) say(`     repeated: ${line}`);
  say(`   unapproved executions: ${t.unapproved}`);
  say(`   tool calls in doubt, not made again (the model read their outcome is unknown): ${seen.unknownOutcomes.size}`);

  writeFileSync(join(LOGS, "timeline.tsv"), `${timeline.tsv()}\n`);
  say(`== timeline of the faults (every 10 s; every half second in ${join(LOGS, "timeline.tsv")})`);
  for (const row of timeline.rows(10)) say(`   ${row}`);
  const b = timeline.breakdown(RUNS, WORKERS, 8);
  const [baseSec, faultSec] = [baseline.wallMs / 1000, faults.wallMs / 1000];
  say(`== where the time went`);
  for (const line of breakdown(b, faultSec, baseSec)) say(`   ${line}`);
  say(
    `   worker starts: ${startTimes.length}, ${median(startTimes).toFixed(1)} s from spawn to ready (median; ${Math.max(...startTimes).toFixed(1)} s the longest): ` +
      `loading ${median(loadTimes).toFixed(1)} s, DbosWorker.start ${median(launchTimes).toFixed(1)} s (medians)`,
  );
  say(
    `   wall time ${faultSec.toFixed(1)} s against ${baseSec.toFixed(1)} s without faults: throughput ${((100 * baseSec) / faultSec).toFixed(0)}%; ` +
      `without the ${b.outage.toFixed(1)} s PostgreSQL was down: ${((100 * baseSec) / (faultSec - b.outage)).toFixed(0)}%`,
  );
  say(`== logs (in ${LOGS})`);
  for (const line of workerTally.summary(5)) say(`   workers: ${line}`);
  for (const line of ownTally.summary(3)) say(`   this process (DBOS's client): ${line}`);
  const ok =
    baseline.completed === RUNS &&
    clean.duplicated + clean.sameKey + clean.repeats + clean.unapproved === 0 &&
    faults.completed === RUNS &&
    t.duplicated === 0 &&
    t.sameKey === 0 &&
    t.repeats === 0 &&
    t.unapproved === 0;
  say(ok ? "== chaos: PASS" : "== chaos: FAIL");
  if (values.check && !ok) process.exitCode = 1;
} finally {
  for (const worker of [...workers]) worker.proc.kill("SIGKILL");
  await server.close();
  api.closeAllConnections();
  api.close();
}
process.exit(); // DBOS's clients keep timers of their own
