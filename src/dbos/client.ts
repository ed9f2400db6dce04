/**
 * Starting durable runs and following them from any process (a CLI, a server, a script):
 * runs are put on the queue the workers take them from; their events, answers and results go
 * through the database. A client needs no worker in its own process.
 */
import { DBOSClient } from "@dbos-inc/dbos-sdk";
import type { Pool } from "pg";
import { isEvent, encodeEvent, newRunId } from "../core/internal.ts";
import type { Event, Json, SavedEvent } from "../core/internal.ts";
import { describeDatabase, openPool, unreachable, whileStartingAlone } from "./checkpoints.ts";
import { DbosDatabaseError, DbosRunFailedError, DbosRuntimeError } from "./errors.ts";
import { retryPromptly } from "./retry.ts";
import { ConfigurationError } from "../index.ts";
import { ANSWER_TOPIC, DEFAULT_QUEUE, DEFAULT_VERSION, EVENTS_STREAM, PARKED_EVENT, RUN_WORKFLOW, sessionQueue, settle } from "./protocol.ts";
import type { RunPlacement, RunRecord } from "./protocol.ts";

/**
 * Options of {@link DbosRuns.connect}.
 * @example
 * const options: DbosRunsOptions = { database: "postgres://localhost/stepflow" };
 */
export interface DbosRunsOptions {
  /** The PostgreSQL the workers use. */
  readonly database: string;
  /** The queue runs are put on. Default `"stepflow"`. */
  readonly queue?: string;
  /** The version of the workers that may take the runs started here. Default `"stepflow-dbos-5"`. */
  readonly version?: string;
  /** PostgreSQL connections the client opens. Default 10. */
  readonly connections?: number;
  /** How often (milliseconds) `result()`, `events()` and `parked()` look for news in the database. Default 1000. */
  readonly pollingInterval?: number;
}

/** Where a durable run is: waiting on the queue, running (or waiting for an answer), or ended. @example `if ((await runs.status(id)) === "succeeded") …` */
export type DbosRunStatus = "enqueued" | "pending" | "succeeded" | "failed" | "cancelled" | "unknown";

/**
 * Durable runs, seen from any process.
 * @example
 * import { DbosRuns } from "stepflow/dbos";
 * const runs = await DbosRuns.connect({ database: process.env.DATABASE_URL! });
 * const runId = await runs.start("agent", { input: "Fire Lawson" });
 * for await (const ev of runs.events(runId)) console.log(ev.type);
 * console.log(await runs.result(runId));
 * await runs.close();
 */
export class DbosRuns {
  readonly #client: DBOSClient;
  readonly #pool: Pool;
  readonly #queue: string;
  readonly #version: string;
  readonly #polling: number;

  private constructor(
    client: DBOSClient,
    pool: Pool,
    queue: string,
    version: string,
    polling: number,
    /** The database, without its password. */
    readonly database: string,
  ) {
    this.#client = client;
    this.#pool = pool;
    this.#queue = queue;
    this.#version = version;
    this.#polling = polling;
  }

  /** Connects to the workers' database; a `DbosDatabaseError` says what is missing if it cannot be used. */
  static async connect(options: DbosRunsOptions): Promise<DbosRuns> {
    // Checked (and the checkpoint table made) first, so an unreachable database is reported as such. DBOS's client
    // uses this pool, whose connections all listen for errors: a PostgreSQL restart never ends the process.
    const pool = await openPool(options.database, Math.max(2, options.connections ?? 10));
    let client: DBOSClient;
    retryPromptly();
    try {
      client = await whileStartingAlone(pool, () =>
        DBOSClient.create({ systemDatabaseUrl: options.database, systemDatabasePool: pool, systemDatabaseIdleTransactionTimeoutMs: 0 }),
      );
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw unreachable(options.database, error);
    }
    return new DbosRuns(
      client,
      pool,
      options.queue ?? DEFAULT_QUEUE,
      options.version ?? DEFAULT_VERSION,
      options.pollingInterval ?? 1000,
      describeDatabase(options.database),
    );
  }

  /**
   * Puts a run of the workflow named `workflow` on the queue, with the fields of its
   * StartEvent; returns its id. Starting again with the same `runId` starts nothing new.
   * `queue` and `partitionKey` put the run, which only waits for its parts, on another queue
   * than the client's runs queue, such as the partitioned queue of session turns
   * (`DbosSessions`), where runs of one key run one at a time; its parts still take the slots of
   * the client's queue.
   */
  async start(
    workflow: string,
    input: object,
    options: { readonly runId?: string; readonly queue?: string; readonly partitionKey?: string } = {},
  ): Promise<string> {
    if (typeof workflow !== "string" || workflow.length === 0)
      throw new ConfigurationError(`start() takes the name a worker knows the workflow by, like "agent"; got ${String(workflow)}.`, "workflow", workflow);
    const runId = options.runId ?? newRunId();
    try {
      const session = options.partitionKey !== undefined;
      // A run takes a slot of the client's queue and runs its first part there itself; a session turn waits on its
      // session's partition instead, its parts taking the slots.
      await this.#client.enqueue(
        {
          workflowName: RUN_WORKFLOW,
          queueName: options.queue ?? this.#queue,
          workflowID: runId,
          appVersion: this.#version,
          ...(session ? { queuePartitionKey: options.partitionKey } : {}),
        },
        workflow,
        input as Json,
        (session ? "session" : "queue") satisfies RunPlacement,
      );
    } catch (error) {
      // DBOS's tables are made by the first worker that starts there; without them the queue does not exist yet.
      if ((error as { code?: unknown }).code === "42P01")
        throw new DbosDatabaseError(
          `No DBOS worker has started on ${this.database} yet, so the queue's tables are missing and run "${runId}" was not started. Start a worker there first (npx stepflow worker --database …, or DbosWorker.start), then start the run again.`,
          this.database,
          { cause: error },
        );
      throw error;
    }
    return runId;
  }

  /**
   * The events the run writes to its stream, as saved events (`{ type, data }`), from the
   * first; ends when the run ends. A part of a run that a worker takes over after a crash
   * streams its events again.
   */
  async *events(runId: string): AsyncGenerator<SavedEvent, void, undefined> {
    // Every part writes to the run's stream, which ends when the run does. A value is the events one write of a part took together.
    for await (const value of this.#client.readStream<SavedEvent[]>(runId, EVENTS_STREAM, { pollingIntervalMs: this.#polling })) yield* value;
  }

  /**
   * Answers the question the run waits for (a `HumanResponseEvent`, a `ToolApprovalEvent`…):
   * the run goes on on a worker, however long it has waited. An answer sent before the
   * question is kept for it.
   */
  async respond(runId: string, answer: Event | SavedEvent): Promise<void> {
    const saved = isEvent(answer) ? encodeEvent(answer, "the answer") : answer;
    if (typeof saved?.type !== "string")
      throw new DbosRuntimeError('respond() takes an event, like new HumanResponseEvent({ response: "yes" }), or a saved one ({ type, data }).');
    await this.#client.send(runId, saved, ANSWER_TOPIC);
  }

  /**
   * Waits (up to `timeout` seconds, default 60) until the run has parked in the database to
   * wait for an answer, its question on its stream; resolves with how many times it has
   * parked so far, or 0 if it did not park in time.
   */
  async parked(runId: string, timeout = 60): Promise<number> {
    return (await this.#client.getEvent<number>(runId, PARKED_EVENT, { timeoutSeconds: timeout, pollingIntervalMs: this.#polling })) ?? 0;
  }

  /**
   * The run's result (its StopEvent's, as JSON) once it ends; throws `DbosRunFailedError` if
   * it failed or was cancelled (`errorName` then `WorkflowCancelledByUser`), or
   * `DbosAnswerTimeoutError`.
   */
  async result<T = unknown>(runId: string): Promise<T> {
    const handle = this.#client.retrieveWorkflow<RunRecord>(runId);
    let record: RunRecord;
    try {
      record = await handle.getResult({ pollingIntervalMs: this.#polling });
    } catch (error) {
      if ((await handle.getStatus())?.status !== "CANCELLED") throw error;
      throw new DbosRunFailedError(`Run ${runId} was cancelled.`, runId, "WorkflowCancelledByUser");
    }
    return settle<T>(runId, record);
  }

  /**
   * Cancels the run: a run on the queue never starts, a parked one stops waiting, and a running
   * one is cancelled at once on its worker (its steps see `ctx.signal` aborted). Its result
   * then throws `DbosRunFailedError`.
   */
  async cancel(runId: string): Promise<void> {
    await this.#client.cancelWorkflow(runId);
    const part = await this.#newestPart(runId);
    if (part !== undefined) await this.#client.cancelWorkflow(part);
  }

  /**
   * Where the run is: `enqueued` while it (or its next part) waits for a worker's slot,
   * `pending` while a worker runs it or it waits for an answer.
   */
  async status(runId: string): Promise<DbosRunStatus> {
    const run = await this.#client.retrieveWorkflow(runId).getStatus();
    const status = run?.status;
    if (status === "PENDING") {
      // After a question, the run's newest part says whether a worker has taken it; a session turn's parts all do.
      const part = await this.#newestPart(runId);
      const partStatus = part === undefined ? undefined : (await this.#client.retrieveWorkflow(part).getStatus())?.status;
      if (part === undefined) return run?.queueName === sessionQueue(this.#queue) ? "enqueued" : "pending";
      return partStatus === undefined || partStatus === "ENQUEUED" || partStatus === "DELAYED" ? "enqueued" : "pending";
    }
    const known: Record<string, DbosRunStatus> = { ENQUEUED: "enqueued", DELAYED: "enqueued", SUCCESS: "succeeded", ERROR: "failed", CANCELLED: "cancelled" };
    return (status ? known[status] : undefined) ?? "unknown";
  }

  /** Which worker (its id) runs or ran `runId`'s newest part (the run's own workflow runs its first), if one took it. */
  async workerOf(runId: string): Promise<string | undefined> {
    const part = await this.#newestPart(runId);
    if (part !== undefined) return (await this.#client.retrieveWorkflow(part).getStatus())?.executorId;
    const run = await this.#client.retrieveWorkflow(runId).getStatus();
    // A session turn's run only waits on its partition: a worker takes the turn with its first part.
    return run === null || run.queueName === sessionQueue(this.#queue) || run.status === "ENQUEUED" ? undefined : run.executorId;
  }

  /** The id of the run's newest part, if it has one (a run's first part runs in the run's own workflow, but a session turn's). */
  async #newestPart(runId: string): Promise<string | undefined> {
    const parts = await this.#client.listWorkflows({ workflow_id_prefix: `${runId}.part-`, sortDesc: true, limit: 10, loadInput: false, loadOutput: false });
    const ours = new RegExp(`^${runId.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.part-\\d+$`);
    return parts.map((status) => status.workflowID).find((id) => ours.test(id));
  }

  /** Disconnects. */
  async close(): Promise<void> {
    await this.#client.destroy();
    await this.#pool.end();
  }
}
