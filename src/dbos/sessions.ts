/**
 * Sessions on DBOS: a session's next turn is a durable run that any worker takes. The client
 * (`DbosSessions`) notes which session a turn belongs to and puts the turn on the sessions'
 * queue, partitioned by session, so that two turns of one session never run at once. The worker
 * (`SessionTurns`, through the hooks of a run's parts) starts the turn's run from the session
 * stored in the same PostgreSQL (the tables `Sessions` and `stepflow sessions` use), and saves
 * the turn when the run finishes: with the version it loaded, so that a turn that lost a race
 * saves nothing and fails with `SessionConflictError`. Before saving, an attempt at the turn notes
 * what it saves (a hash of it) and the run's outcome: an attempt that runs the part again after a
 * save (its worker killed before the run's end was recorded) recognises that save as the turn's
 * own, though it computed other messages (new ids and times, another model reply), and ends the
 * run with the outcome noted with it, the one that matches the stored session.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Pool } from "pg";
import { Context, ContextSerdeError } from "../core/internal.ts";
import type { ContextJSON, Json, AnyWorkflow } from "../core/internal.ts";
import { PostgresSessionStore } from "../sessions/postgres-store.ts";
import { sessionMemoryOf } from "../sessions/session-memory.ts";
import type { MessageWindow, SessionMemory } from "../sessions/session-memory.ts";
import { SessionConflictError, SessionStoreError, checkSessionId } from "../sessions/types.ts";
import type { SessionRecord, StoredMessage } from "../sessions/types.ts";
import { createTable as createTableOnce, describeDatabase, failedWith, openPool, unreachable } from "./checkpoints.ts";
import type { RecordedOutcome } from "./checkpoints.ts";
import { DbosRuns } from "./client.ts";
import type { DbosRunsOptions } from "./client.ts";
import { DbosDatabaseError, DbosRuntimeError } from "./errors.ts";
import { ConfigurationError } from "../index.ts";
import { DEFAULT_QUEUE, sessionQueue } from "./protocol.ts";
import { DEFAULT_OUTAGE_TOLERANCE, retrying } from "./retry.ts";

const SCHEMA = `CREATE TABLE IF NOT EXISTS stepflow_dbos_session_turns (
  run_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  loaded_version INTEGER,
  first_seq INTEGER,
  total INTEGER,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now());
ALTER TABLE stepflow_dbos_session_turns ADD COLUMN IF NOT EXISTS saves JSONB`;

export { sessionQueue };

/** The name workers know the workflow of session turns by when none is given. */
const DEFAULT_WORKFLOW = "agent";

async function createTable(pool: Pool, database: string): Promise<void> {
  const client = await pool.connect();
  try {
    await createTableOnce(client, SCHEMA);
  } catch (error) {
    throw new DbosDatabaseError(`Cannot create the table of session turns in ${database}: ${(error as Error).message}`, database, { cause: error });
  } finally {
    client.release();
  }
}

/** Which session a run is a turn of, and what it loaded. */
interface TurnRow {
  readonly sessionId: string;
  readonly loadedVersion: number | null;
  readonly firstSeq: number | null;
  readonly total: number | null;
  /** What the attempts at the turn saved or were about to save, by hash (see `SessionTurns.finish`). */
  readonly saves: Saves | null;
}

/** An attempt's save, noted before it is sent: how many messages it appended, and how the run ended with it. */
interface NotedSave {
  readonly count: number;
  readonly outcome: RecordedOutcome;
}

/** The saves the attempts at a turn noted, by the hash of what each saved (`saveHash`). */
type Saves = Readonly<Record<string, NotedSave>>;

/** What identifies a save: its snapshot and the messages it appends, as stored (the text of each). */
function saveHash(snapshot: string, append: readonly string[]): string {
  return createHash("sha256")
    .update(JSON.stringify([snapshot, append]))
    .digest("hex");
}

/**
 * The worker's side of session turns: a run that is a turn starts from its session, and the
 * session is saved when the run finishes. Every other run passes through untouched.
 */
export class SessionTurns {
  #store: Promise<PostgresSessionStore> | undefined;
  /** What `start` learnt of the runs it started in this process, for their `finish` (`null`: not a turn): two round trips fewer a run. */
  readonly #started = new Map<string, { readonly turn: TurnRow; readonly window: MessageWindow } | null>();

  private constructor(
    private readonly pool: Pool,
    private readonly url: string,
    private readonly database: string,
    /** Seconds the turns' database work rides through an outage. */
    private readonly tolerance: number,
  ) {}

  /** Makes the table of turns if needed. */
  static async open(pool: Pool, url: string, tolerance = DEFAULT_OUTAGE_TOLERANCE): Promise<SessionTurns> {
    const database = describeDatabase(url);
    await retrying(() => createTable(pool, database), { database, what: "the session turns of durable runs", tolerance });
    return new SessionTurns(pool, url, database, tolerance);
  }

  /** The context run `runId` starts from: its session's, if it is a session turn (`undefined` otherwise). */
  async start(runId: string, workflow: AnyWorkflow): Promise<Context | undefined> {
    const turn = await this.#turn(runId);
    if (!turn) {
      this.#remember(runId, null);
      return undefined;
    }
    const store = await this.#sessions();
    const memory = sessionMemoryOf(workflow);
    const id = turn.sessionId;
    const record = await this.#riding(() => store.load(id, { newest: memory.initialWindow }));
    let ctx: Context;
    let window: MessageWindow = { messages: [], firstSeq: 1, total: 0 };
    if (!record) ctx = new Context(workflow);
    else {
      window = await this.#riding(() => loadWindow(store, memory, record));
      let snapshot: unknown;
      try {
        snapshot = JSON.parse(record.snapshot);
      } catch (error) {
        throw new ContextSerdeError(`Session "${id}" (version ${record.version}) has a corrupt context snapshot: ${(error as Error).message}.`);
      }
      try {
        ctx = Context.fromJSON(workflow, memory.restore(snapshot as ContextJSON, window));
      } catch (error) {
        if (!(error instanceof ContextSerdeError)) throw error;
        throw new ContextSerdeError(`Session "${id}" (version ${record.version}): ${error.message}`, { cause: error });
      }
    }
    // Noted before the run's first checkpoint: a worker that takes the turn over saves it against the same version.
    await this.#query("UPDATE stepflow_dbos_session_turns SET loaded_version = $2, first_seq = $3, total = $4 WHERE run_id = $1", [
      runId,
      record?.version ?? 0,
      window.firstSeq,
      window.total,
    ]);
    this.#remember(runId, {
      turn: { sessionId: id, loadedVersion: record?.version ?? 0, firstSeq: window.firstSeq, total: window.total, saves: null },
      window,
    });
    return ctx;
  }

  /**
   * Saves the turn `runId` has ended, if it is one, and returns the outcome to record for the
   * run: `outcome`; the error that fails the turn if the session changed since it was loaded (or
   * the context cannot be saved); or, if an earlier attempt at this part saved the turn (its
   * worker killed before the run's end was recorded), the outcome that attempt noted with its
   * save, so that the run's result is the answer stored in the session. Throws if the database
   * could not be used (the part then runs again).
   */
  async finish(runId: string, workflow: AnyWorkflow, ctx: Context, outcome: RecordedOutcome): Promise<RecordedOutcome> {
    const started = this.#started.get(runId);
    this.#started.delete(runId);
    if (started === null) return outcome;
    const turn = started?.turn ?? (await this.#turn(runId));
    if (!turn) return outcome;
    // An earlier attempt at this part may have saved the turn and been cut short before the run's
    // end was recorded (its worker killed): the run ends as that attempt did, and nothing is saved
    // again. Its note is known already if the turn was read above; a finishing attempt that
    // started here finds it when its own save conflicts, a failing one reads it now.
    const saves = started ? (outcome.kind === "failed" ? (await this.#turn(runId))?.saves : null) : turn.saves;
    if (saves) {
      const before = await this.#savedBefore(runId, turn, saves);
      if (before) return before;
    }
    return outcome.kind === "finished" ? this.#save(runId, workflow, ctx, turn, started?.window, outcome) : outcome;
  }

  /** Saves the turn `runId` finished with `outcome` (see `finish`). */
  async #save(
    runId: string,
    workflow: AnyWorkflow,
    ctx: Context,
    turn: TurnRow,
    loaded: MessageWindow | undefined,
    outcome: RecordedOutcome,
  ): Promise<RecordedOutcome> {
    const { sessionId: id, loadedVersion: version, firstSeq, total } = turn;
    if (version === null || firstSeq === null || total === null)
      throw new DbosRuntimeError(`Turn ${runId} of session "${id}" finished, but its load was not noted.`);
    const store = await this.#sessions();
    const memory = sessionMemoryOf(workflow);
    let window = loaded;
    if (!window) {
      // Started by another worker: the window it loaded is read again. Messages are only appended, so they are there unless the session was deleted.
      const stored = total >= firstSeq ? await this.#riding(() => store.readMessages(id, { from: firstSeq, to: total })) : [];
      if (stored.length !== total - firstSeq + 1) return failedWith(new SessionConflictError(id, version, undefined));
      window = { messages: stored.map(parseMessage(id)), firstSeq, total };
    }
    let saved: { readonly snapshot: ContextJSON; readonly append: readonly Json[] };
    try {
      saved = memory.saveContext ? memory.saveContext(ctx, window) : memory.save(ctx.toJSON(), window);
    } catch (error) {
      if (!(error instanceof ContextSerdeError)) throw error;
      return failedWith(new ContextSerdeError(`Session "${id}": ${error.message} The stored session was not changed.`, { cause: error }));
    }
    const snapshot = JSON.stringify(saved.snapshot);
    const append = saved.append.map((message) => JSON.stringify(message));
    // Noted before the save is sent, so that whichever attempt's save lands is noted: an attempt
    // that runs this part again computes other messages (new ids and times, another model reply).
    const noted: NotedSave = { count: append.length, outcome };
    await this.#query(
      "UPDATE stepflow_dbos_session_turns SET saves = COALESCE(saves, '{}'::jsonb) || jsonb_build_object($2::text, $3::jsonb) WHERE run_id = $1",
      [runId, saveHash(snapshot, append), JSON.stringify(noted)],
    );
    try {
      // A save whose reply an outage lost is tried again, and then conflicts with itself: recognised as the turn's below.
      await this.#riding(() => store.save(id, { expectedVersion: version, snapshot, append }));
    } catch (error) {
      if (!(error instanceof SessionConflictError)) throw error;
      return (await this.#savedBefore(runId, turn)) ?? failedWith(error);
    }
    return outcome;
  }

  /**
   * The outcome noted with the save of turn `runId` that the session holds, if one of the turn's
   * attempts saved it: the session is at the version after the one the turn loaded, and its
   * snapshot and newest messages are what that attempt noted.
   */
  async #savedBefore(runId: string, turn: TurnRow, known?: Saves): Promise<RecordedOutcome | undefined> {
    const saves = known ?? (await this.#turn(runId))?.saves;
    const noted = Object.entries(saves ?? {});
    if (noted.length === 0 || turn.loadedVersion === null) return undefined;
    const store = await this.#sessions();
    const newest = Math.max(...noted.map(([, save]) => save.count));
    const now = await this.#riding(() => store.load(turn.sessionId, { newest }));
    if (now?.version !== turn.loadedVersion + 1) return undefined;
    const messages = now.messages.map((m) => m.json);
    for (const [hash, save] of noted) {
      if (save.count > messages.length) continue;
      if (saveHash(now.snapshot, messages.slice(messages.length - save.count)) === hash) return save.outcome;
    }
    return undefined;
  }

  /** Closes the session store, if a turn opened it. */
  async close(): Promise<void> {
    const store = this.#store;
    this.#store = undefined;
    await (await store?.catch(() => undefined))?.close();
  }

  #remember(runId: string, started: { readonly turn: TurnRow; readonly window: MessageWindow } | null): void {
    // Runs that fail never reach `finish`: the oldest entries go.
    if (this.#started.size >= 1000) this.#started.delete(this.#started.keys().next().value as string);
    this.#started.set(runId, started);
  }

  async #turn(runId: string): Promise<TurnRow | undefined> {
    const found = await this.#query("SELECT session_id, loaded_version, first_seq, total, saves FROM stepflow_dbos_session_turns WHERE run_id = $1", [runId]);
    const row = found.rows[0] as
      { session_id: string; loaded_version: number | null; first_seq: number | null; total: number | null; saves: Saves | null } | undefined;
    return row && { sessionId: row.session_id, loadedVersion: row.loaded_version, firstSeq: row.first_seq, total: row.total, saves: row.saves };
  }

  /** `work` on the session store, retried through an outage. */
  #riding<T>(work: () => Promise<T>): Promise<T> {
    return retrying(work, { database: this.database, what: "the sessions", tolerance: this.tolerance });
  }

  #sessions(): Promise<PostgresSessionStore> {
    this.#store ??= this.#riding(() => PostgresSessionStore.open(this.url));
    this.#store.catch(() => (this.#store = undefined)); // opened again by the next turn
    return this.#store;
  }

  async #query(sql: string, args: unknown[]) {
    try {
      return await this.#riding(() => this.pool.query(sql, args));
    } catch (error) {
      if (error instanceof DbosDatabaseError) throw error;
      throw new DbosDatabaseError(`Cannot use the session turns of durable runs in ${this.database}: ${(error as Error).message}`, this.database, {
        cause: error,
      });
    }
  }
}

const parseMessage =
  (id: string) =>
  (stored: StoredMessage): Json => {
    try {
      return JSON.parse(stored.json) as Json;
    } catch {
      throw new ContextSerdeError(`Session "${id}" has a corrupt message #${stored.seq}: it is not JSON.`);
    }
  };

/** The newest messages a turn needs, as `Sessions` loads them: those of `record`, and older ones while the memory asks for more. */
async function loadWindow(store: PostgresSessionStore, memory: SessionMemory, record: SessionRecord): Promise<MessageWindow> {
  const parse = parseMessage(record.id);
  const total = record.messageCount;
  let messages = record.messages.map(parse);
  let firstSeq = total - messages.length + 1;
  for (;;) {
    const window = { messages, firstSeq, total };
    if (firstSeq <= 1) return window;
    const more = memory.more(window);
    if (!Number.isSafeInteger(more) || more < 0)
      throw new SessionStoreError(`SessionMemory.more must return a whole number ≥ 0 (how many older messages to load); got ${String(more)}.`);
    if (more === 0) return window;
    const from = Math.max(1, firstSeq - more);
    const older = await store.readMessages(record.id, { from, to: firstSeq - 1 });
    if (older.length !== firstSeq - from) throw new SessionConflictError(record.id, record.version, undefined);
    messages = [...older.map(parse), ...messages];
    firstSeq = from;
  }
}

/**
 * Options of {@link DbosSessions.connect}: those of `DbosRuns.connect`, and the workflow.
 * @example
 * const options: DbosSessionsOptions = { database: "postgres://localhost/stepflow", workflow: "agent" };
 */
export interface DbosSessionsOptions extends DbosRunsOptions {
  /** The name the workers know the session's workflow by. Default `"agent"`. */
  readonly workflow?: string;
}

/**
 * Sessions whose turns run durably on DBOS workers: each turn is a run of the workflow on the
 * session stored in the workers' PostgreSQL (the sessions `Sessions` and `stepflow sessions`
 * see with a `PostgresSessionStore` there). Turns of one session run one at a time, in the
 * order they were started; follow a turn with `runs` (its events, answers, result).
 * @example
 * import { DbosSessions } from "stepflow/dbos";
 * const sessions = await DbosSessions.connect({ database: process.env.DATABASE_URL!, workflow: "agent" });
 * const turn = await sessions.start("alice", { input: "Hello! My name is Logan." });
 * console.log(await sessions.runs.result(turn));
 * await sessions.close();
 */
export class DbosSessions {
  readonly #pool: Pool;
  readonly #queue: string;

  private constructor(
    /** The turns' runs: read a turn's events, answer its questions, get its result, by its id. */
    readonly runs: DbosRuns,
    pool: Pool,
    queue: string,
    /** The name the workers know the workflow by. */
    readonly workflow: string,
  ) {
    this.#pool = pool;
    this.#queue = queue;
  }

  /** Connects to the workers' database; a `DbosDatabaseError` says what is missing if it cannot be used. */
  static async connect(options: DbosSessionsOptions): Promise<DbosSessions> {
    const workflow = options.workflow ?? DEFAULT_WORKFLOW;
    if (typeof workflow !== "string" || workflow.length === 0)
      throw new ConfigurationError(
        `workflow is the name the workers know the session's workflow by, like "agent"; got ${String(workflow)}.`,
        "workflow",
        workflow,
      );
    const pool = await openPool(options.database, 2);
    try {
      await createTable(pool, describeDatabase(options.database));
      const runs = await DbosRuns.connect(options);
      return new DbosSessions(runs, pool, sessionQueue(options.queue ?? DEFAULT_QUEUE), workflow);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error instanceof DbosDatabaseError || error instanceof DbosRuntimeError ? error : unreachable(options.database, error);
    }
  }

  /**
   * Puts the next turn of session `sessionId` (created by its first turn) on the queue, with
   * the fields of the workflow's StartEvent (`{ input }` for the agent); returns the turn's id,
   * the id of its run. Starting again with the same `turnId` (a retried request) starts nothing
   * new. The turn fails with `errorName` `SessionConflictError`, saving nothing, if the session
   * was saved by someone else (an in-process `Sessions`) after the turn loaded it.
   * @example
   * const turn = await sessions.start("alice", { input: "What is my name?" }, { turnId: requestId });
   */
  async start(sessionId: string, input: object, options: { readonly turnId?: string } = {}): Promise<string> {
    checkSessionId(sessionId);
    const turnId = options.turnId ?? randomUUID();
    if (typeof turnId !== "string" || turnId.length === 0 || turnId.length > 200)
      throw new DbosRuntimeError(`turnId must be 1 to 200 characters; got ${JSON.stringify(turnId)}.`);
    // Noted before the turn is queued: a worker that takes it knows it is a turn.
    let owner: string | undefined;
    try {
      const inserted = await this.#pool.query(
        "INSERT INTO stepflow_dbos_session_turns (run_id, session_id) VALUES ($1, $2) ON CONFLICT (run_id) DO NOTHING RETURNING session_id",
        [turnId, sessionId],
      );
      owner =
        inserted.rows.length > 0
          ? sessionId
          : (await this.#pool.query("SELECT session_id FROM stepflow_dbos_session_turns WHERE run_id = $1", [turnId])).rows[0]?.session_id;
    } catch (error) {
      throw new DbosDatabaseError(`Cannot note the turn in ${this.runs.database}: ${(error as Error).message}`, this.runs.database, { cause: error });
    }
    if (owner !== undefined && owner !== sessionId)
      throw new DbosRuntimeError(`Turn id "${turnId}" is already a turn of session "${owner}"; give each turn its own id.`);
    return this.runs.start(this.workflow, input, { runId: turnId, queue: this.#queue, partitionKey: sessionId });
  }

  /** Disconnects. */
  async close(): Promise<void> {
    await this.runs.close();
    await this.#pool.end();
  }
}
