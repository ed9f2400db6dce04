/**
 * The CLI on DBOS: `stepflow worker` runs the agent's durable runs, and
 * `stepflow --runtime dbos --database URL "question"` puts a question on their queue and
 * streams the answer from whichever worker takes it; with `--session NAME`, each message is
 * the session's next turn, run by a worker on the session kept in that PostgreSQL.
 * `stepflow/dbos` is loaded only here, when asked for, so the CLI runs without
 * `@dbos-inc/dbos-sdk` installed.
 */
import { eventTypeName, decodeEvent, WorkflowCancelledByUser } from "../core/internal.ts";
import type { Event, EventClass, SavedEvent } from "../core/internal.ts";
import type { Readable } from "node:stream";
import { FunctionOutputEvent, StreamEvent, ToolApprovalRequestEvent, ToolCallEvent } from "../../events/index.ts";
import type { AgentResult, FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import type { DbosSessions } from "../dbos/sessions.ts";
import { PostgresSessionStore } from "../sessions/postgres-store.ts";
import { ask, chat } from "./chat.ts";
import type { Turn } from "./chat.ts";
import { renderTurn } from "./render.ts";
import type { Terminal } from "./render.ts";
import { UsageError } from "./errors.ts";

/** The name the CLI's workers know the agent by. */
const AGENT = "agent";
const SHOWN: readonly EventClass[] = [StreamEvent, ToolCallEvent, FunctionOutputEvent];
const SHOWN_BY_NAME = new Map(SHOWN.map((type) => [eventTypeName(type), type]));

async function loadDbos(): Promise<typeof import("../dbos/index.ts")> {
  try {
    return await import("../dbos/index.ts");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" && String((error as Error).message).includes("@dbos-inc/dbos-sdk")) {
      throw new UsageError(
        "The DBOS runtime needs the package @dbos-inc/dbos-sdk, which is not installed. Install it next to stepflow: npm install @dbos-inc/dbos-sdk",
      );
    }
    throw error;
  }
}

/** The database option, or a usage error saying how to give it. */
export function databaseOption(database: string | undefined, env: NodeJS.ProcessEnv, command: string, usage: string): string {
  const url = database ?? env.DATABASE_URL;
  if (!url)
    throw new UsageError(
      `${usage} needs PostgreSQL: pass --database postgres://user:password@host:5432/db (or set DATABASE_URL). Example: ${command} ${usage} --database postgres://localhost/stepflow`,
    );
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new UsageError(`--database takes a PostgreSQL URL like postgres://user:password@host:5432/db; got "${url.split("@").at(-1)}".`);
  return url;
}

/**
 * Puts `question` on the queue, streams the run's answer from the worker that takes it, and
 * prints it (or `{ response, sources }` with `json`).
 * @example await askOnDbos("What is 2 + 2?", { database, term, json: false });
 */
export async function askOnDbos(question: string, options: { readonly database: string; readonly term: Terminal; readonly json: boolean }): Promise<void> {
  const { DbosRuns } = await loadDbos();
  const runs = await DbosRuns.connect({ database: options.database });
  try {
    const runId = await runs.start(AGENT, { input: question });
    options.term.err.write(options.term.colors.dim(`Run ${runId} is on the queue of ${runs.database}; a worker (stepflow worker) takes it.\n`));
    if (options.json) {
      options.term.out.write(`${JSON.stringify(await runs.result<AgentResult>(runId), null, 2)}\n`);
      return;
    }
    await renderTurn(shownEvents(runs.events(runId)), options.term);
    await runs.result(runId); // a failed run throws here
  } finally {
    await runs.close();
  }
}

/** The events the terminal shows, as the agent's classes; the others are skipped. */
async function* shownEvents(saved: AsyncIterable<SavedEvent>, shown = SHOWN_BY_NAME): AsyncGenerator<Event> {
  for await (const event of saved) if (shown.has(event.type)) yield decodeEvent(event, shown, "an event of the run");
}

/** A session turn also shows its approval questions, which the chat answers. */
const SESSION_SHOWN = new Map([...SHOWN_BY_NAME, [eventTypeName(ToolApprovalRequestEvent), ToolApprovalRequestEvent as EventClass]]);

/**
 * Runs a conversation whose turns are the turns of stored session `sessionId`, each run by a
 * worker (stepflow worker) on the session kept in `database`: one question when `question` is
 * given, else a chat on `input`. Resolves with how many turns failed.
 * @example const failed = await sessionOnDbos({ database, sessionId: "alice", agent, term, json: false, input: process.stdin });
 */
export async function sessionOnDbos(options: {
  readonly database: string;
  readonly sessionId: string;
  /** The agent the workers run (its tools describe the approval questions). */
  readonly agent: FunctionCallingAgent;
  readonly term: Terminal;
  readonly json: boolean;
  readonly question?: string | undefined;
  readonly input: Readable;
  readonly report?: (error: unknown) => unknown;
}): Promise<number> {
  const { DbosSessions } = await loadDbos();
  const sessions = await DbosSessions.connect({ database: options.database, workflow: AGENT });
  const { term, sessionId } = options;
  const turns = {
    turn: (input: string) => sessionTurn(sessions, sessionId, input, term),
    reset: async () => {
      const store = await PostgresSessionStore.open(options.database);
      try {
        await store.delete(sessionId);
      } finally {
        await store.close();
      }
      return `Started a new conversation (deleted the stored session "${sessionId}").`;
    },
  };
  try {
    const chatOptions = { agent: options.agent, term, turns };
    if (options.question !== undefined) {
      await ask(options.question, { ...chatOptions, json: options.json, input: options.input });
      return 0;
    }
    return await chat({ ...chatOptions, ...(options.report ? { report: options.report } : {}) }, options.input);
  } finally {
    await sessions.close();
  }
}

/** The next turn of `sessionId` on the queue, followed from here: its events, its answers, its result. */
function sessionTurn(sessions: DbosSessions, sessionId: string, input: string, term: Terminal): Turn {
  const started = sessions.start(sessionId, { input }).then((id) => {
    term.err.write(
      term.colors.dim(`Turn ${id} of session "${sessionId}" is on the queue of ${sessions.runs.database}; a worker (stepflow worker) takes it.\n`),
    );
    return id;
  });
  const result = started.then(async (id) => {
    try {
      return await sessions.runs.result<AgentResult>(id);
    } catch (error) {
      if ((error as { errorName?: string }).errorName === "WorkflowCancelledByUser") throw new WorkflowCancelledByUser(`Turn ${id} was cancelled.`);
      throw error;
    }
  });
  result.catch(() => {});
  const withId = (use: (id: string) => Promise<unknown>) => void started.then(use).catch(() => {});
  return {
    async *streamEvents() {
      let id: string;
      try {
        id = await started;
      } catch {
        return; // awaiting the turn reports why
      }
      yield* shownEvents(sessions.runs.events(id), SESSION_SHOWN);
    },
    cancel: () => withId((id) => sessions.runs.cancel(id)),
    sendEvent: (event) => withId((id) => sessions.runs.respond(id, event)),
    then: (onFulfilled, onRejected) => result.then(onFulfilled, onRejected),
  };
}

function describeRuns(runs: readonly string[]): string {
  return runs.length === 0 ? "no unfinished run" : `${runs.length} unfinished run${runs.length === 1 ? "" : "s"} (${runs.join(", ")})`;
}

/**
 * Runs a worker for `agent` until SIGINT or SIGTERM; resolves once it has stopped.
 * @example await runWorker({ database, agent, term, workerId: "w1", workerConcurrency: 4 });
 */
export async function runWorker(options: {
  readonly database: string;
  readonly agent: FunctionCallingAgent;
  readonly term: Terminal;
  readonly workerId?: string | undefined;
  readonly workerConcurrency?: number | undefined;
  readonly concurrency?: number | undefined;
  /** Seconds of silence after which another worker's runs are taken over; `false`: never. */
  readonly takeoverAfter?: number | false | undefined;
  /** Dead workers whose runs to take over once started. */
  readonly recover?: readonly string[] | undefined;
}): Promise<void> {
  const { DbosWorker } = await loadDbos();
  const worker = await DbosWorker.start({
    database: options.database,
    workflows: { [AGENT]: options.agent },
    ...(options.workerId !== undefined ? { workerId: options.workerId } : {}),
    ...(options.workerConcurrency !== undefined ? { workerConcurrency: options.workerConcurrency } : {}),
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.takeoverAfter !== undefined ? { takeoverAfter: options.takeoverAfter } : {}),
    onTakeover: ({ workerId, runs }) => options.term.err.write(`Took over worker "${workerId}", silent too long: ${describeRuns(runs)} back on the queue.\n`),
  });
  const stopped = new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  options.term.err.write(
    `Worker "${worker.workerId}" takes runs from ${worker.database}. Ctrl-C stops it; runs it leaves unfinished continue on another worker, or when a worker with this id starts again.\n`,
  );
  try {
    for (const dead of options.recover ?? [])
      options.term.err.write(`Recovered worker "${dead}": ${describeRuns(await worker.recover(dead))} back on the queue.\n`);
  } catch (error) {
    await worker.stop();
    throw error;
  }
  await stopped;
  await worker.stop();
}
