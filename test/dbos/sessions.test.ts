/**
 * Sessions on DBOS: a session's turns run on whichever worker takes them, each starting from
 * the history the turns before saved (in the tables `Sessions` reads), one turn of a session at
 * a time, a retried request being the same turn, a turn cut short by SIGKILL finishing with its
 * tool's side effect once, and a turn that lost a race saving nothing.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { DbosRunFailedError, DbosRuntimeError, DbosSessions } from "../../src/dbos/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { PostgresSessionStore } from "../../src/sessions/postgres-store.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
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

  const worker = (id: string) => startWorker([db.url, id, hr.baseURL, gates.baseURL], CHILD);
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
});
