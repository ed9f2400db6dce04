/**
 * A DBOS worker: a process that runs stepflow workflows durably. Each run is one DBOS workflow
 * (`stepflow.run`, on the queue with the concurrency limits) whose body is deterministic, as
 * DBOS requires: it runs the stepflow run in parts (see `segment.ts`) — the first in the run's
 * own workflow, each after an answer in a DBOS workflow of its own (`stepflow.part`) on that
 * queue; a part is no DBOS step, its end being recorded by stepflow's checkpoints, which a part
 * that DBOS replays reads first — and between two parts waits in the database (`DBOS.recv`)
 * for the answer to the question that ended the first, having left the queue's slots. The step
 * executions inside a part are checkpointed by stepflow itself, and their side effects kept
 * once by the journal, so that DBOS's recovery of a part (a restarted worker with the same id,
 * or a live worker taking a dead one over, see `takeover.ts`) goes on from the last step
 * execution that finished.
 */
import { DBOS } from "@dbos-inc/dbos-sdk";
// The ownership token of the workflow execution running here, which DBOS resets when it puts the workflow back on a queue: part of a part's fence.
import { currentOwnerXid } from "@dbos-inc/dbos-sdk/internal/context";
// Where DBOS counts the runs this process executes against a queue's `workerConcurrency`: a parked run leaves it (see `leaveSlots`).
import { DBOSExecutor } from "@dbos-inc/dbos-sdk/internal/dbos-executor";
import type { Pool } from "pg";
import { ConfigurationError, newRunId } from "../core/internal.ts";
import type { AnyWorkflow, Context, Event, Json, SavedEvent } from "../core/internal.ts";
import { Checkpoints, createTable, describeDatabase, failedWith, openPool, unreachable, whileStartingAlone } from "./checkpoints.ts";
import type { RecordedOutcome } from "./checkpoints.ts";
import { DbosLeaseLostError, DbosRuntimeError } from "./errors.ts";
import { claimant } from "./lease.ts";
import { FencedJournal, JOURNAL_SCHEMA } from "./fenced-journal.ts";
import { DEFAULT_OUTAGE_TOLERANCE, retrying, retryPromptly } from "./retry.ts";
import {
  ANSWER_TOPIC,
  DEFAULT_QUEUE,
  DEFAULT_VERSION,
  EVENTS_STREAM,
  PARKED_EVENT,
  PART_DONE_TOPIC,
  PART_WORKFLOW,
  RUN_WORKFLOW,
  partId,
  runsQueue,
  settle,
} from "./protocol.ts";
import type { RunPlacement, RunRecord } from "./protocol.ts";
import { RunStreams } from "./run-stream.ts";
import { runSegment } from "./segment.ts";
import { SessionTurns, sessionQueue } from "./sessions.ts";
import { Heartbeats } from "./takeover.ts";
import type { LeaseLoss, Takeover } from "./takeover.ts";
import type { SegmentOutcome } from "./segment.ts";

/**
 * Options of {@link DbosWorker.start}.
 * @example
 * const options: DbosWorkerOptions = { database: "postgres://localhost/stepflow", workflows: { agent }, workerConcurrency: 4 };
 */
export interface DbosWorkerOptions {
  /** The PostgreSQL that holds the runs (DBOS's tables, the checkpoints and the journal): postgres://user:password@host:port/db. */
  readonly database: string;
  /** The workflows this worker runs, by the name clients start them with. */
  readonly workflows: Readonly<Record<string, AnyWorkflow>>;
  /** The queue to take runs from. Default `"stepflow"`. */
  readonly queue?: string;
  /** How many runs this worker executes at once; at most `concurrency`. Default 10 (or `concurrency`, if lower). */
  readonly workerConcurrency?: number;
  /** How many runs of the queue execute at once on all workers together. Default: no limit. */
  readonly concurrency?: number;
  /**
   * This worker's id (DBOS's executor id). A worker started with the id of one that died
   * recovers that one's runs. Give each live worker its own. Default `"local"`.
   */
  readonly workerId?: string;
  /**
   * Seconds without a heartbeat after which another worker is taken for dead: this worker then
   * puts that one's unfinished runs back on the queue (once, whichever live worker sees it
   * first), and they go on from their last checkpoint on any worker. Workers beat five times in
   * this time; a worker whose process is gone (its connections closed) is taken over after two
   * missed beats. `false`: never take over automatically (`recover` still does). Default 30.
   */
  readonly takeoverAfter?: number | false;
  /** Called when this worker has taken a dead one's runs over (to log it, say). */
  readonly onTakeover?: (takeover: Takeover) => void;
  /**
   * Called when this worker learns that another took it over while it was alive (it could not
   * beat for `takeoverAfter` seconds: a stalled process, a network partition). Its parts of
   * those runs have stopped, writing nothing; it goes on with new runs. Default: a warning in
   * DBOS's log.
   */
  readonly onLeaseLost?: (loss: LeaseLoss) => void;
  /**
   * Seconds that stepflow's own database work (checkpoints, journal, heartbeats, session saves)
   * keeps retrying through a PostgreSQL outage (a restart, a failover) before the part fails with
   * `DbosDatabaseError`. Default 120.
   */
  readonly outageTolerance?: number;
  /** How long a run waits for an answer (a human's approval), in seconds. Default 30 days. */
  readonly answerTimeout?: number;
  /** Only workers of the same version take a run; change it when a deployment changes what runs mean. Default `"stepflow-dbos-5"`. */
  readonly version?: string;
  /**
   * Which events of a run go to its stream, for `DbosRuns.events` (written to the database
   * with the checkpoint of the step that streamed them, or within 20 ms in a write of their
   * own): all of them (`true`, the default), none (`false`), or
   * those a test of the event accepts. Questions (`InputRequiredEvent`s) are always streamed.
   */
  readonly streamEvents?: boolean | ((event: Event) => boolean);
  /** PostgreSQL connections DBOS opens for this worker (stepflow's checkpoints use up to 4 more). Default 10. */
  readonly connections?: number;
  /** How often (milliseconds) the worker looks for runs on the queue. Default 1000. */
  readonly pollingInterval?: number;
  /** DBOS's log level. Default `"warn"`. */
  readonly logLevel?: "error" | "warn" | "info" | "debug";
}

/** What the registered DBOS workflows reach: the worker running in this process. */
interface Live {
  readonly workflows: Readonly<Record<string, AnyWorkflow>>;
  readonly checkpoints: Checkpoints;
  /** The runs' event streams. */
  readonly streams: RunStreams;
  /** Where each part's journal is, and how long its statements ride through an outage. */
  readonly journal: { readonly pool: Pool; readonly database: string; readonly tolerance: number };
  /** This worker's lease: a part's writes are fenced by the one it started under. */
  readonly heartbeats: Heartbeats;
  readonly answerTimeout: number;
  readonly streamed: (event: Event) => boolean;
  /** The queue parts wait on, with the limits. */
  readonly queue: string;
  /** Session turns: where a turn starts from, and its save. */
  readonly sessionTurns: SessionTurns;
  /**
   * Settles once the worker has started (its queues registered). DBOS recovers this worker id's
   * runs while it launches: they wait for this, so that a start that fails afterwards (the
   * database went away) leaves them untouched for the next start, rather than failed.
   */
  readonly started: Promise<void>;
}

let live: Live | undefined;

function liveWorker(): Live {
  if (!live) throw new DbosRuntimeError("A durable run started in a process whose DbosWorker has stopped.");
  return live;
}

function unknownWorkflow(worker: Live, workflowName: string): { name: string; message: string } {
  return { name: "DbosRuntimeError", message: `No workflow named "${workflowName}" on this worker; it runs ${Object.keys(worker.workflows).join(", ")}.` };
}

/**
 * The body of every durable run: deterministic, so DBOS can replay it from its records. Its
 * first part runs here, in the run's own workflow (except a session turn's,
 * which waits on its session's partition and so takes no slot of the queue: its parts are all
 * workflows of their own there). A run that ends without a question is so one DBOS workflow.
 * A run that asks one leaves the queue's slots (see `leaveSlots`), waits for the answer, and
 * goes on in a new part, a DBOS workflow of its own on the queue (`process`: in this process,
 * for `worker.run`): a run waiting for a human takes none of the queue's slots.
 */
async function durableRun(workflowName: string, input: Json, placement: RunPlacement): Promise<RunRecord> {
  const worker = liveWorker();
  return abandonedOnStop(worker, () => runParts(worker, workflowName, input, placement));
}

/** The parts of a durable run, one after the other: see `durableRun`. */
async function runParts(worker: Live, workflowName: string, input: Json, placement: RunPlacement): Promise<RunRecord> {
  await worker.started;
  const runId = DBOS.workflowID;
  const part = registeredPart;
  if (runId === undefined || !part) throw new DbosRuntimeError("A durable run started in a process whose DbosWorker has stopped.");
  if (!Object.hasOwn(worker.workflows, workflowName)) return { ok: false, error: unknownWorkflow(worker, workflowName) };
  const answers: SavedEvent[] = [];
  for (let n = 1; ; n++) {
    let outcome: SegmentOutcome;
    if (n === 1 && placement !== "session") outcome = await executePart(worker, { runId, executing: runId, workflowName, input, answers, session: false });
    else {
      const id = partId(runId, n);
      await DBOS.startWorkflow(part, { workflowID: id, ...(placement === "process" ? {} : { queueName: worker.queue }) })(
        runId,
        workflowName,
        input,
        answers,
        placement === "session",
      );
      outcome = await partOutcome(worker, id);
    }
    if (outcome.kind !== "waiting")
      // The run's context went with its recorded outcome (`Checkpoints.end`, one write); the outcome stays for a part delivered late.
      return outcome.kind === "finished" ? { ok: true, result: outcome.result } : { ok: false, error: outcome.error };
    // Again at each park of a replay: a run put back on the queue after its worker died leaves the slot it was given.
    if (placement !== "session") await leaveSlots(worker, runId);
    await DBOS.setEvent(PARKED_EVENT, answers.length + 1);
    const answer = await DBOS.recv<SavedEvent>(ANSWER_TOPIC, worker.answerTimeout);
    if (answer === null) {
      const message = `Run ${runId} waited ${worker.answerTimeout} seconds for an answer and got none.`;
      return { ok: false, error: { name: "DbosAnswerTimeoutError", message } };
    }
    answers.push(answer);
  }
}

/**
 * Takes the run, parked, off the slots of the queue with the limits: in the database, onto the
 * unlimited queue of runs (what the queue's `concurrency` counts, and where a takeover puts it
 * back), and in this process, where DBOS counts it against `workerConcurrency` for as long as it
 * runs. Not a DBOS step: it changes nothing a replay reads, and is done again at each.
 */
async function leaveSlots(worker: Live, runId: string): Promise<void> {
  const { pool, database, tolerance } = worker.journal;
  const runs = runsQueue(worker.queue);
  await retrying(
    () => pool.query("UPDATE dbos.workflow_status SET queue_name = $2 WHERE workflow_uuid = $1 AND queue_name = $3", [runId, runs, worker.queue]),
    {
      database,
      what: "the queue of a parked durable run",
      tolerance,
    },
  );
  // DBOS's in-process count is internal: a DBOS without it leaves the parked run holding this worker's slot
  // until it ends (the queue-wide limit is freed above), never failing the run.
  const running = (DBOSExecutor.globalInstance?.systemDatabase as { runningWorkflowMap?: Map<string, { queueName?: string }[]> } | undefined)
    ?.runningWorkflowMap;
  for (const entry of running?.get(runId) ?? []) {
    if (entry.queueName === worker.queue) entry.queueName = runs;
  }
}

/** How part `id` ended, as it sends it to its run; or, if it ended without a word (cancelled), as its status says. */
async function partOutcome(worker: Live, id: string): Promise<SegmentOutcome> {
  for (;;) {
    // A message, not a poll of the part's result: the wait costs nothing however long the part runs.
    const outcome = await DBOS.recv<SegmentOutcome>(PART_DONE_TOPIC, 60);
    if (outcome !== null) return outcome;
    const status = await DBOS.runStep(() => partStatus(worker, id), { name: "stepflow.part-status" });
    if (status === null || status === "PENDING" || status === "ENQUEUED" || status === "DELAYED") continue;
    const late = await DBOS.recv<SegmentOutcome>(PART_DONE_TOPIC, 1); // sent just before the part ended
    if (late !== null) return late;
    const name = status === "CANCELLED" ? "WorkflowCancelledByUser" : "DbosRuntimeError";
    return { kind: "failed", error: { name, message: `Part ${id} of the run ended (${status}) without an outcome.` } };
  }
}

/**
 * The DBOS status of part `id`, read on stepflow's own connections. Not `DBOS.getWorkflowStatus`:
 * in a workflow, it holds a connection of DBOS's pool in a transaction while it takes another
 * for the status, so runs that look at once (a worker that has just recovered or taken over
 * many, whose waits all ended meanwhile) can hold every connection and wait for ever, and with
 * them every part of that worker.
 */
async function partStatus(worker: Live, id: string): Promise<string | null> {
  const { pool, database, tolerance } = worker.journal;
  const found = await retrying(() => pool.query("SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1", [id]), {
    database,
    what: "the status of a part of a durable run",
    tolerance,
  });
  return (found.rows[0] as { status: string } | undefined)?.status ?? null; // null, not undefined: it is recorded as JSON
}

/**
 * A part of a run after its first answer (or any part of a session turn), on the queue: runs
 * the stepflow run from its newest checkpoint (see `executePart`), then tells the run how it ended.
 */
async function durablePart(runId: string, workflowName: string, input: Json, answers: SavedEvent[], session: boolean): Promise<SegmentOutcome> {
  const worker = liveWorker();
  return abandonedOnStop(worker, async () => {
    await worker.started;
    const executing = DBOS.workflowID ?? partId(runId, answers.length + 1);
    const outcome = await executePart(worker, { runId, executing, workflowName, input, answers, session });
    await DBOS.send(runId, outcome, PART_DONE_TOPIC);
    return outcome; // for clients that look at a part's outcome
  });
}

/**
 * `work`, a durable run's or part's body, unless the worker it runs on stops meanwhile: then a
 * promise that never settles. DBOS records what a workflow throws as its end, and a worker that
 * stops makes its workflows throw (DBOS's waits end with "The system database has been shut
 * down" while the pool, the worker's own, is still open to record it; a part's database work
 * fails once the worker's pools close). Such an end would fail a run that a worker started
 * later must go on with: abandoned instead, the workflow stays pending for that worker.
 */
async function abandonedOnStop<T>(worker: Live, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (live !== worker) return abandoned();
    throw error;
  }
}

/** What a workflow of a stopped worker waits on: nothing, for as long as the process lasts. */
function abandoned(): Promise<never> {
  return new Promise<never>(() => undefined);
}

/** How many times a part is tried (a database error after `outageTolerance`, say) before the run fails, and the wait before the second. */
const PART_ATTEMPTS = 3;
const PART_RETRY_MS = 1000;

/**
 * Runs the stepflow run from its newest checkpoint until it ends or asks a question, in the
 * workflow `executing` (the run's own, or a part's): see `segment.ts`. Not a DBOS step: stepflow's
 * own records say how a part ended (the run's end with its last checkpoint, or the checkpoint it
 * parked on), so a part that DBOS replays returns that at its first statement, and DBOS's four
 * statements to record a step, and three to look for one, are spared. A session turn
 * (`session`) starts from its session, and saves it once it has finished.
 */
async function executePart(
  worker: Live,
  part: {
    readonly runId: string;
    readonly executing: string;
    readonly workflowName: string;
    readonly input: Json;
    readonly answers: SavedEvent[];
    readonly session: boolean;
  },
): Promise<SegmentOutcome> {
  const { runId, executing, workflowName, input, answers } = part;
  const workflow = worker.workflows[workflowName];
  if (!workflow) return { kind: "failed", error: unknownWorkflow(worker, workflowName) };
  const fence = { lease: await worker.heartbeats.lease(), part: executing, owner: currentOwnerXid(executing) };
  // Aborted when the run is cancelled (`DbosRuns.cancel`), by DBOS's look at its cancelled workflows, as it would a step's.
  const cancellation = systemDatabase().watchForCancellation(executing);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await runSegment({
          runId,
          workflow,
          input,
          answers,
          checkpoints: worker.checkpoints,
          journal: new FencedJournal(worker.journal.pool, fence, worker.journal),
          claimant: claimant(fence),
          fence,
          streamed: worker.streamed,
          signal: cancellation.signal,
          write: (events) => worker.streams.write(runId, EVENTS_STREAM, events, fence),
          ...(part.session
            ? {
                startContext: () => worker.sessionTurns.start(runId, workflow),
                finished: (ctx: Context, ended: RecordedOutcome) => worker.sessionTurns.finish(runId, workflow, ctx, ended),
              }
            : {}),
        });
      } catch (error) {
        // Fenced: the part is another execution's now (DBOS records nothing of this one); no outcome is sent for it.
        if (error instanceof DbosLeaseLostError) throw error;
        // Failed because this worker is stopping (its pools closed): not the run's failure.
        if (live !== worker) return abandoned();
        // A part that still fails after its attempts (a database that stays away) ends the run, as one that failed.
        if (attempt >= PART_ATTEMPTS || cancellation.cancelled) return failedWith(error);
        await new Promise((resolve) => setTimeout(resolve, PART_RETRY_MS * 2 ** (attempt - 1)));
      }
    }
  } finally {
    cancellation.release();
  }
}

/** What stepflow uses of DBOS's system database that DBOS's public API lacks (checked by `systemDatabase()` as a worker starts). */
interface SystemDatabaseInternals {
  /** The signal DBOS gives a step, aborted within its cancellation polling interval of the workflow's cancellation. */
  watchForCancellation(workflowID: string): { readonly signal: AbortSignal; readonly cancelled: boolean; release(): void };
  /** DBOS's in-process count of the runs it executes, by workflow id (see `leaveSlots`). */
  readonly runningWorkflowMap?: Map<string, { queueName?: string }[]>;
}

function systemDatabase(): SystemDatabaseInternals {
  const found = DBOSExecutor.globalInstance?.systemDatabase as Partial<SystemDatabaseInternals> | undefined;
  if (typeof found?.watchForCancellation !== "function") {
    throw new DbosRuntimeError(
      "This version of @dbos-inc/dbos-sdk does not watch workflows for cancellation the way stepflow uses: stepflow supports @dbos-inc/dbos-sdk 5.3.x. Install that version.",
    );
  }
  return found as SystemDatabaseInternals;
}

let registered: ((workflowName: string, input: Json, placement: RunPlacement) => Promise<RunRecord>) | undefined;
let registeredPart: ((runId: string, workflowName: string, input: Json, answers: SavedEvent[], session: boolean) => Promise<SegmentOutcome>) | undefined;

/**
 * A worker of durable runs in this process (DBOS allows one per process).
 * @example
 * import { DbosWorker } from "stepflow/dbos";
 * const worker = await DbosWorker.start({ database: process.env.DATABASE_URL!, workflows: { agent }, workerId: "worker-1" });
 * process.on("SIGTERM", () => void worker.stop());
 */
export class DbosWorker {
  readonly #pools: readonly Pool[];
  readonly #heartbeats: Heartbeats;

  private constructor(
    /** This worker's id: a worker started later with the same id recovers the runs this one leaves unfinished. */
    readonly workerId: string,
    /** The database, without its password. */
    readonly database: string,
    pools: readonly Pool[],
    heartbeats: Heartbeats,
  ) {
    this.#pools = pools;
    this.#heartbeats = heartbeats;
  }

  /**
   * Connects to the database, takes this worker's lease (fencing off any process that ran under
   * its id before), starts DBOS, recovers this worker id's unfinished runs, takes runs from the
   * queue, and beats (taking dead workers' runs over, see `takeoverAfter`).
   */
  static async start(options: DbosWorkerOptions): Promise<DbosWorker> {
    const settings = checkOptions(options);
    if (live) throw new DbosRuntimeError("A DbosWorker already runs in this process (DBOS allows one per process). Stop it first, or give it every workflow.");
    const pool = await openPool(options.database, Math.min(4, settings.connections));
    const database = describeDatabase(options.database);
    const version = options.version ?? DEFAULT_VERSION;
    const tolerance = settings.outageTolerance;
    let beats: Pool | undefined;
    let system: Pool | undefined;
    let sessionTurns: SessionTurns;
    try {
      // The heartbeats' own connections: a worker whose runs hold every connection of its pool still beats.
      // Three: one holds the worker's alive lock for its life, leaving a beat and a `recover` their own.
      beats = await openPool(options.database, 3);
      // DBOS's own connections, from a pool whose clients listen for errors from the moment they connect: with DBOS's
      // pool, a connection the server ends just as it is handed out (a restart) has no listener, and ends the process.
      system = await openPool(options.database, settings.connections);
      sessionTurns = await SessionTurns.open(pool, options.database, tolerance);
      await retrying(
        async () => {
          const client = await pool.connect();
          try {
            await createTable(client, JOURNAL_SCHEMA);
          } finally {
            client.release();
          }
        },
        { database, what: "the journal of side effects", tolerance },
      );
    } catch (error) {
      await beats?.end().catch(() => undefined);
      await system?.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
      throw error instanceof ConfigurationError || error instanceof DbosRuntimeError ? error : unreachable(options.database, error);
    }
    const heartbeats = new Heartbeats({
      pool: beats,
      database,
      workerId: settings.workerId,
      version,
      takeoverAfter: settings.takeoverAfter,
      tolerance,
      queues: { parts: settings.queue, runs: runsQueue(settings.queue) },
      onTakeover: options.onTakeover ?? (() => undefined),
      onLeaseLost:
        options.onLeaseLost ??
        (({ workerId, epoch, takenOverBy }) =>
          DBOS.logger.warn(
            takenOverBy === undefined
              ? `Worker "${workerId}" lost its lease (epoch ${epoch}) to another process started under the same id: its runs stop here, and it takes no new ones. Give each worker its own id.`
              : `Worker "${workerId}" lost its lease (epoch ${epoch}): worker "${takenOverBy}" took it over after missing its heartbeats. Its parts of those runs stop here, writing nothing; the runs go on on "${takenOverBy}".`,
          )),
    });
    let started!: () => void;
    live = {
      started: new Promise<void>((resolve) => (started = resolve)),
      workflows: options.workflows,
      checkpoints: new Checkpoints(pool, database, tolerance),
      streams: new RunStreams(pool, database, tolerance),
      journal: { pool, database, tolerance },
      heartbeats,
      answerTimeout: settings.answerTimeout,
      streamed: typeof options.streamEvents === "function" ? options.streamEvents : options.streamEvents === false ? () => false : () => true,
      queue: settings.queue,
      sessionTurns,
    };
    try {
      // Before DBOS recovers this id's runs: a process still running under it is fenced off first.
      await heartbeats.start();
      retryPromptly();
      DBOS.setConfig({
        name: "stepflow",
        systemDatabaseUrl: options.database,
        executorID: settings.workerId,
        applicationVersion: version,
        runAdminServer: false,
        logLevel: options.logLevel ?? "warn",
        // Else DBOS sets it with a query queued on each new connection, which pg 8 warns about on stderr.
        systemDatabaseIdleTransactionTimeoutMs: 0,
        systemDatabasePool: system,
      });
      registered ??= DBOS.registerWorkflow(durableRun, { name: RUN_WORKFLOW });
      registeredPart ??= DBOS.registerWorkflow(durablePart, { name: PART_WORKFLOW });
      await whileStartingAlone(pool, () => DBOS.launch());
      systemDatabase(); // a DBOS without what stepflow uses of it fails here, before any run starts
      // DBOS has recovered this id's runs (they wait for `started`): the queues are registered through an outage too.
      const registering = { database, what: "the queues of durable runs", tolerance };
      await retrying(
        () =>
          DBOS.registerQueue(settings.queue, {
            workerConcurrency: settings.workerConcurrency,
            ...(options.pollingInterval !== undefined ? { minPollingIntervalMs: options.pollingInterval } : {}),
            ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
            onConflict: "always_update",
          }),
        registering,
      );
      await retrying(
        () =>
          DBOS.registerQueue(runsQueue(settings.queue), {
            ...(options.pollingInterval !== undefined ? { minPollingIntervalMs: options.pollingInterval } : {}),
            onConflict: "always_update",
          }),
        registering,
      );
      // Session turns (DbosSessions): a turn's run waits here, partitioned by session, so that a session's next turn starts only
      // when the one before has ended (parked for approval included). No slot limits: the turn's parts take the slots of the queue above.
      await retrying(
        () =>
          DBOS.registerQueue(sessionQueue(settings.queue), {
            partitionConcurrency: 1,
            ...(options.pollingInterval !== undefined ? { minPollingIntervalMs: options.pollingInterval } : {}),
            onConflict: "always_update",
          }),
        registering,
      );
      started();
      heartbeats.takeOverFromNow();
    } catch (error) {
      await heartbeats.stop();
      live = undefined;
      await DBOS.shutdown({ deregister: true }).catch(() => undefined);
      registered = undefined;
      registeredPart = undefined;
      await sessionTurns.close();
      await beats.end().catch(() => undefined);
      await system.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
      throw error instanceof ConfigurationError || error instanceof DbosRuntimeError ? error : unreachable(options.database, error);
    }
    return new DbosWorker(settings.workerId, database, [pool, beats, system], heartbeats);
  }

  /**
   * Runs the workflow named `workflow` durably in this process, without the queue (and its
   * polling), and resolves with its result; a worker with this worker's id recovers it if the
   * process dies. Starting again with the same `runId` waits for the same run.
   * @example
   * const result = await worker.run("agent", { input: "What is 2 + 2?" });
   */
  async run<T = unknown>(workflow: string, input: object, options: { readonly runId?: string } = {}): Promise<T> {
    const start = registered;
    if (!live || !start) throw new DbosRuntimeError("This DbosWorker has stopped; start a new one to run workflows.");
    if (!Object.hasOwn(live.workflows, workflow)) {
      throw new DbosRuntimeError(`No workflow named "${workflow}" on this worker; it runs ${Object.keys(live.workflows).join(", ")}.`);
    }
    const runId = options.runId ?? newRunId();
    const handle = await DBOS.startWorkflow(start, { workflowID: runId })(workflow, input as Json, "process");
    return settle<T>(runId, await handle.getResult());
  }

  /**
   * Puts the unfinished runs of the worker `workerId`, which is dead, back on the queue now,
   * where workers take them and go on from their last checkpoints; resolves with their ids.
   * Throws `DbosRuntimeError` if that worker has beaten lately (it looks alive: its runs would
   * run twice), or if it is this worker.
   * @example
   * const runIds = await worker.recover("worker-7");
   */
  async recover(workerId: string): Promise<string[]> {
    if (!live) throw new DbosRuntimeError("This DbosWorker has stopped; start a new one to recover runs.");
    return [...(await this.#heartbeats.takeOver(workerId)).runs];
  }

  /**
   * Stops taking runs and disconnects. Runs under way here stay unfinished in the database: a
   * live worker takes them over at its next heartbeat, or a worker started with this worker's
   * id recovers them.
   */
  async stop(): Promise<void> {
    const sessionTurns = live?.sessionTurns;
    live = undefined;
    await this.#heartbeats.stop();
    await DBOS.shutdown({ deregister: true });
    registered = undefined;
    registeredPart = undefined;
    await this.#heartbeats.handOver().catch(() => undefined); // else taken over after takeoverAfter
    await sessionTurns?.close();
    for (const pool of this.#pools) await pool.end();
  }
}

function checkOptions(options: DbosWorkerOptions): {
  queue: string;
  workerId: string;
  workerConcurrency: number;
  answerTimeout: number;
  connections: number;
  takeoverAfter: number | undefined;
  outageTolerance: number;
} {
  if (typeof options !== "object" || options === null) throw new ConfigurationError("DbosWorker.start takes { database, workflows }.", "options", options);
  const { workflows } = options;
  if (typeof workflows !== "object" || workflows === null || Object.keys(workflows).length === 0) {
    throw new ConfigurationError("DbosWorker.start needs the workflows it runs by name, like { workflows: { agent } }.", "workflows", workflows);
  }
  const positive = (name: string, value: number | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < 1) throw new ConfigurationError(`${name} must be a whole number of at least 1; got ${String(value)}.`, name, value);
    return value;
  };
  const concurrency = positive("concurrency", options.concurrency, Number.MAX_SAFE_INTEGER);
  const workerConcurrency = positive("workerConcurrency", options.workerConcurrency, Math.min(10, concurrency));
  if (workerConcurrency > concurrency) {
    throw new ConfigurationError(
      `workerConcurrency (${workerConcurrency}, runs at once in this worker) must not exceed concurrency (${concurrency}, runs at once in all workers together).`,
      "workerConcurrency",
      workerConcurrency,
    );
  }
  positive("pollingInterval", options.pollingInterval, 1000);
  const { streamEvents, takeoverAfter } = options;
  if (takeoverAfter !== undefined && takeoverAfter !== false && !(typeof takeoverAfter === "number" && Number.isFinite(takeoverAfter) && takeoverAfter >= 1)) {
    throw new ConfigurationError(
      `takeoverAfter must be a number of seconds of at least 1 (or false, to never take a dead worker over); got ${String(takeoverAfter)}.`,
      "takeoverAfter",
      takeoverAfter,
    );
  }
  if (streamEvents !== undefined && typeof streamEvents !== "boolean" && typeof streamEvents !== "function") {
    throw new ConfigurationError("streamEvents takes true, false, or a function of an event that says whether to stream it.", "streamEvents", streamEvents);
  }
  const text = (name: string, value: string | undefined, fallback: string) => {
    if (value === undefined) return fallback;
    if (typeof value !== "string" || !/^[\w.:-]{1,100}$/.test(value)) {
      throw new ConfigurationError(`${name} must be 1 to 100 letters, digits, or . _ : -; got ${JSON.stringify(value)}.`, name, value);
    }
    return value;
  };
  return {
    queue: text("queue", options.queue, DEFAULT_QUEUE),
    workerId: text("workerId", options.workerId, "local"),
    workerConcurrency,
    answerTimeout: positive("answerTimeout", options.answerTimeout, 30 * 24 * 3600),
    connections: positive("connections", options.connections, 10),
    takeoverAfter: takeoverAfter === false ? undefined : (takeoverAfter ?? 30),
    outageTolerance: positive("outageTolerance", options.outageTolerance, DEFAULT_OUTAGE_TOLERANCE),
  };
}
