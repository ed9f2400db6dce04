/**
 * Sessions on DBOS: a session's turns run on whichever worker takes them, each starting from
 * the history the turns before saved (in the tables `Sessions` reads), one turn of a session at
 * a time, a retried request being the same turn, a turn cut short by SIGKILL finishing with its
 * tool's side effect once, a turn whose worker was killed after saving it saved once (its run
 * ending with the answer stored), and a turn that lost a race saving nothing.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import pg from "pg";
import { Context } from "../../src/index.ts";
import { DbosRunFailedError, DbosRuntimeError, DbosSessions } from "../../src/dbos/index.ts";
import type { RecordedOutcome } from "../../src/dbos/checkpoints.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { PostgresSessionStore } from "../../src/sessions/postgres-store.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import { SessionTurns } from "../../src/dbos/sessions.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { freshDatabase } from "../support/postgres-database.ts";
import { startGateServer } from "../support/gate-server.ts";
import type { GateServer } from "../support/gate-server.ts";
import { startHrApiServer } from "../support/hr-api-server.ts";
import type { HrApiServer } from "../support/hr-api-server.ts";
import { killAllWorkers, startWorker } from "../support/dbos-workers.ts";

const DATABASE_URL = process.env.DATABASE_URL;
const CHILD = join(import.meta.dirname, "../support/dbos-session-worker-child.ts");

interface AgentResult {
  response: { content: string };
  sources: { content: string }[];
}

describe.skipIf(!DATABASE_URL)("sessions on DBOS", () => {
  let db: { url: string; drop: () => Promise<void> };
  let hr: HrApiServer;
  let gates: GateServer;
  let sessions: DbosSessions;
  let store: PostgresSessionStore;
  /** The stored sessions as the in-process `Sessions` (and `stepflow sessions show`) read them. */
  let local: Sessions<{ input: string }, unknown>;

  beforeAll(async () => {
    db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_sessions");
    sessions = await DbosSessions.connect({ database: db.url, pollingInterval: 100, connections: 2 });
    store = await PostgresSessionStore.open(db.url);
    const agent = new FunctionCallingAgent({ llm: new ScriptedLLM(() => ({ text: "Saved in process." })), tools: [], timeout: 60 });
    local = new Sessions(agent, store, { windowCache: { sessions: 0 } });
  }, 60_000);
  afterAll(async () => {
    await sessions?.close();
    await store?.close();
    await db?.drop();
  });
  beforeEach(async () => {
    hr = await startHrApiServer();
    gates = await startGateServer();
  });
  afterEach(async () => {
    await killAllWorkers();
    await gates.close();
    await hr.close();
  });

  const worker = (id: string, mode = "", options: { takeoverAfter?: number } = {}) =>
    startWorker([db.url, id, hr.baseURL, gates.baseURL, mode, JSON.stringify(options)], CHILD);
  const turn = async (session: string, input: string, options: { turnId?: string } = {}) => {
    const id = await sessions.start(session, { input }, options);
    return { id, result: await sessions.runs.result<AgentResult>(id) };
  };
  const stored = async (session: string) => (await local.messages(session)).map((m) => `${m.message.role}: ${String(m.message.content)}`);
  const deletes = () => hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path);

  it("runs three turns of one session on three workers, each seeing the turns before", { timeout: 180_000 }, async () => {
    const w1 = await worker("w1");
    const first = await turn("ada", "My name is Ada.");
    expect(first.result.response.content).toBe("Heard: My name is Ada.");

    // The worker that ran a turn is gone: the next turn runs on the one that is there.
    const w2 = await worker("w2");
    expect(await w1.stop()).toBe(0);
    const second = await turn("ada", "What is my name?");
    expect(second.result.response.content).toBe("Heard: My name is Ada. | What is my name?");

    await worker("w3");
    expect(await w2.stop()).toBe(0);
    const third = await turn("ada", "Say it again.");
    expect(third.result.response.content).toBe("Heard: My name is Ada. | What is my name? | Say it again.");

    expect([await sessions.runs.workerOf(first.id), await sessions.runs.workerOf(second.id), await sessions.runs.workerOf(third.id)]).toEqual([
      "w1",
      "w2",
      "w3",
    ]);
    expect(await stored("ada")).toEqual([
      "user: My name is Ada.",
      "assistant: Heard: My name is Ada.",
      "user: What is my name?",
      "assistant: Heard: My name is Ada. | What is my name?",
      "user: Say it again.",
      "assistant: Heard: My name is Ada. | What is my name? | Say it again.",
    ]);
    // An in-process turn goes on from the same session.
    await local.run("ada", { input: "And in process?" });
    expect((await stored("ada")).slice(-2)).toEqual(["user: And in process?", "assistant: Saved in process."]);
  });

  it("finishes a turn whose worker was killed in its tool call: the DELETE happens once", { timeout: 180_000 }, async () => {
    const first = await worker("w1");
    await turn("bob", "My name is Bob.");
    gates.hold("tool");
    const id = await sessions.start("bob", { input: "fire 7" });
    expect(await gates.reached("tool")).toBe("w1");
    await first.kill();
    expect(deletes()).toEqual([]);
    expect(await sessions.runs.status(id)).toBe("pending");

    gates.open("tool");
    await worker("w1"); // DBOS recovers a worker's runs when a worker with its id starts again
    const result = await sessions.runs.result<AgentResult>(id);
    expect(result.response.content).toBe("Heard: My name is Bob. | fire 7");
    expect(result.sources.map((s) => s.content)).toEqual(["Employee 7: HTTP 204"]);
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(gates.hits("tool")).toEqual(["w1", "w1"]); // cut short before its DELETE, then made again
    expect(await stored("bob")).toEqual([
      "user: My name is Bob.",
      "assistant: Heard: My name is Bob.",
      "user: fire 7",
      "assistant: ",
      "user: Employee 7: HTTP 204",
      "assistant: Heard: My name is Bob. | fire 7",
    ]);
    expect((await store.load("bob"))?.version).toBe(2);
  });

  it("hands a turn whose worker was killed in its tool call to a live worker, which finishes it: the DELETE once", { timeout: 180_000 }, async () => {
    const first = await worker("w1", "", { takeoverAfter: 3 });
    await turn("cid", "My name is Cid.");
    gates.hold("tool");
    const id = await sessions.start("cid", { input: "fire 7" });
    expect(await gates.reached("tool")).toBe("w1");
    // Started now, so that the turn is w1's; it takes w1 over once w1 has been silent for 3 seconds.
    const second = await worker("w2", "", { takeoverAfter: 3 });
    const next = await sessions.start("cid", { input: "after" });
    await first.kill();
    gates.open("tool");
    expect(await second.printed("took over w1:")).toBe(`took over w1: ${id}`);

    expect((await sessions.runs.result<AgentResult>(id)).response.content).toBe("Heard: My name is Cid. | fire 7");
    expect((await sessions.runs.result<AgentResult>(next)).response.content).toBe("Heard: My name is Cid. | fire 7 | after");
    expect(await sessions.runs.workerOf(id)).toBe("w2");
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(gates.hits("tool")).toEqual(["w1", "w2"]); // cut short before its DELETE, then made again on w2
    expect((await stored("cid")).filter((m) => m.startsWith("user:"))).toEqual([
      "user: My name is Cid.",
      "user: fire 7",
      "user: Employee 7: HTTP 204",
      "user: after",
    ]);
    expect((await store.load("cid"))?.version).toBe(3);
  });

  it("parks a turn for approval, the session's next turn waiting behind it, and goes on once answered", { timeout: 180_000 }, async () => {
    const asking = await worker("w1", "approval");
    await turn("hal", "My name is Hal.");
    const firing = await sessions.start("hal", { input: "fire 7" });
    expect(await sessions.runs.parked(firing)).toBe(1);
    let approvalId = "";
    for await (const ev of sessions.runs.events(firing)) {
      if (ev.type !== "agent.ToolApprovalRequestEvent") continue;
      approvalId = (ev.data as { approvalId: string }).approvalId;
      break;
    }
    const next = await sessions.start("hal", { input: "after" });
    expect(await asking.stop()).toBe(0);
    // The parked turn holds its session: the next one stays on the queue, however long the answer takes.
    expect(await sessions.runs.status(next)).toBe("enqueued");
    await sessions.runs.respond(firing, { type: "agent.ToolApprovalEvent", data: { approvalId, approved: true } });

    await worker("w1", "approval");
    expect((await sessions.runs.result<AgentResult>(firing)).response.content).toBe("Heard: My name is Hal. | fire 7");
    expect((await sessions.runs.result<AgentResult>(next)).response.content).toBe("Heard: My name is Hal. | fire 7 | after");
    expect(deletes()).toEqual(["/api/users/7"]);
    expect((await stored("hal")).filter((m) => m.startsWith("user:"))).toEqual([
      "user: My name is Hal.",
      "user: fire 7",
      "user: Employee 7: HTTP 204",
      "user: after",
    ]);
  });

  it("runs two turns of one session started at once one after the other: no message lost or doubled", { timeout: 180_000 }, async () => {
    await worker("w1");
    await worker("w2");
    gates.hold("llm");
    const [a, b] = await Promise.all([sessions.start("cat", { input: "one" }), sessions.start("cat", { input: "two" })]);
    await gates.reached("llm");
    // One turn runs (held at the model); the other waits on the queue, not beside it.
    expect([await sessions.runs.status(a), await sessions.runs.status(b)].sort()).toEqual(["enqueued", "pending"]);
    gates.open("llm");
    const results = [await sessions.runs.result<AgentResult>(a), await sessions.runs.result<AgentResult>(b)].map((r) => r.response.content);
    // Whichever ran first, the second heard it.
    expect([
      ["Heard: one", "Heard: one | two"],
      ["Heard: two", "Heard: two | one"],
    ]).toContainEqual(results.sort());
    const messages = await stored("cat");
    expect(messages).toHaveLength(4);
    expect(messages.filter((m) => m.startsWith("user:")).sort()).toEqual(["user: one", "user: two"]);
    expect(gates.hits("llm")).toHaveLength(2);
  });

  it("takes a retried request (the same turn id) as the same turn", { timeout: 180_000 }, async () => {
    await worker("w1");
    const first = await turn("dan", "hello", { turnId: "request-1" });
    const again = await turn("dan", "hello", { turnId: "request-1" });
    expect(again).toEqual(first);
    expect(first.id).toBe("request-1");
    expect(await stored("dan")).toEqual(["user: hello", "assistant: Heard: hello"]);
    expect(gates.hits("llm")).toHaveLength(1);
    await expect(sessions.start("eve", { input: "hello" }, { turnId: "request-1" })).rejects.toThrow(DbosRuntimeError);
    await expect(sessions.start("eve", { input: "hello" }, { turnId: "request-1" })).rejects.toThrow('already a turn of session "dan"');
  });

  it("fails a turn with SessionConflictError, saving nothing, when the session was saved after it loaded", { timeout: 180_000 }, async () => {
    await worker("w1");
    gates.hold("llm");
    const id = await sessions.start("fay", { input: "from DBOS" });
    await gates.reached("llm"); // the turn has loaded the (new) session
    await local.run("fay", { input: "from in process" });
    gates.open("llm");
    const failed = await sessions.runs.result(id).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(DbosRunFailedError);
    expect(failed).toMatchObject({ errorName: "SessionConflictError", runId: id });
    expect(await stored("fay")).toEqual(["user: from in process", "assistant: Saved in process."]);
  });

  it("saves a turn once, and succeeds, when its worker is killed after the save, before the run's end is recorded", { timeout: 180_000 }, async () => {
    const first = await worker("w1");
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const HOLD = 748_200_001;
    try {
      // The write that records the run's end waits for a lock this test holds: the worker is killed there.
      await admin.query("SELECT pg_advisory_lock($1)", [HOLD]);
      await admin.query(`CREATE FUNCTION hold_end() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock(${HOLD}); RETURN NEW; END $$`);
      await admin.query(
        "CREATE TRIGGER hold_end BEFORE INSERT OR UPDATE ON stepflow_dbos_checkpoints FOR EACH ROW WHEN (NEW.run_id = 'ivy-1' AND NEW.outcome IS NOT NULL) EXECUTE FUNCTION hold_end()",
      );
      const id = await sessions.start("ivy", { input: "I am Ivy." }, { turnId: "ivy-1" });
      const waiting = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = $1 AND NOT granted";
      let rows: { pid: number }[] = [];
      while ((rows = (await admin.query(waiting, [HOLD])).rows as { pid: number }[]).length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      // The session is saved; the run's end is not recorded.
      expect(await stored("ivy")).toEqual(["user: I am Ivy.", "assistant: Heard: I am Ivy."]);
      await first.kill();
      for (const { pid } of rows) await admin.query("SELECT pg_terminate_backend($1)", [pid]); // the held write never commits
      await admin.query("DROP TRIGGER hold_end ON stepflow_dbos_checkpoints");
      await admin.query("DROP FUNCTION hold_end()");
      await admin.query("SELECT pg_advisory_unlock($1)", [HOLD]);

      // Started again, the worker runs the turn's last step again, the model's reply taken from
      // the journal: the messages it makes are new ones (new ids and times), not saved.
      await worker("w1");
      const result = await sessions.runs.result<AgentResult>(id);
      expect(await sessions.runs.status(id)).toBe("succeeded");
      expect(gates.hits("llm")).toEqual(["w1"]);
      expect((await store.load("ivy"))?.version).toBe(1);
      expect(await stored("ivy")).toEqual(["user: I am Ivy.", "assistant: Heard: I am Ivy."]);
      expect(result.response.content).toBe("Heard: I am Ivy.");
    } finally {
      await admin.end();
    }
  });

  it("saves a turn once when its last part runs again after the save, and passes other runs through", { timeout: 60_000 }, async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const turns = await SessionTurns.open(pool, db.url);
    const other = await SessionTurns.open(pool, db.url);
    const agent = (text: string) => new FunctionCallingAgent({ llm: new ScriptedLLM(() => ({ text })), tools: [], timeout: 60 });
    const finished = (response: string): RecordedOutcome => ({ kind: "finished", result: { response } });
    try {
      const hi = agent("Hi Gus.");
      expect(await turns.start("not-a-turn", hi)).toBeUndefined();
      expect(await turns.finish("not-a-turn", hi, new Context(hi), finished("as it was"))).toEqual(finished("as it was"));
      await pool.query("INSERT INTO stepflow_dbos_session_turns (run_id, session_id) VALUES ('gus-1', 'gus'), ('gus-2', 'gus')");
      const ctx = await turns.start("gus-1", hi);
      if (!ctx) throw new Error("gus-1 is a turn");
      const loaded = ctx.toJSON(); // what the run's first checkpoint holds
      await hi.run({ input: "I am Gus." }, { ctx });
      expect(await turns.finish("gus-1", hi, ctx, finished("Hi Gus."))).toEqual(finished("Hi Gus."));
      // A worker killed after the save and before the run's end was recorded: another runs the
      // part again, and its messages differ (new ids and times, another model reply). It saves
      // nothing, and the run ends as the attempt that saved did, whether this one finishes or fails.
      const hello = agent("Hello Gus.");
      const again = Context.fromJSON(hello, structuredClone(loaded));
      await hello.run({ input: "I am Gus." }, { ctx: again });
      expect(await other.finish("gus-1", hello, again, finished("Hello Gus."))).toEqual(finished("Hi Gus."));
      expect(await other.finish("gus-1", hello, again, { kind: "failed", error: { name: "Error", message: "The model is down." } })).toEqual(
        finished("Hi Gus."),
      );
      // Run again where it was saved, with the same context: nothing is saved again.
      expect(await turns.finish("gus-1", hi, ctx, finished("Hi Gus."))).toEqual(finished("Hi Gus."));
      expect(await stored("gus")).toEqual(["user: I am Gus.", "assistant: Hi Gus."]);
      expect((await store.load("gus"))?.version).toBe(1);

      // A turn that loaded version 1, saved over by another: a conflict, not a second save.
      const late = await turns.start("gus-2", hi);
      if (!late) throw new Error("gus-2 is a turn");
      await local.run("gus", { input: "in between" });
      await hi.run({ input: "Late." }, { ctx: late });
      expect(await turns.finish("gus-2", hi, late, finished("late"))).toMatchObject({ kind: "failed", error: { name: "SessionConflictError" } });
      expect(await stored("gus")).toEqual(["user: I am Gus.", "assistant: Hi Gus.", "user: in between", "assistant: Saved in process."]);
    } finally {
      await turns.close();
      await other.close();
      await pool.end();
    }
  });
});
