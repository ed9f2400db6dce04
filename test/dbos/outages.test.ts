/**
 * Durable runs ride through PostgreSQL restarts. The tests run a PostgreSQL server of their own
 * (the other tests' server is never restarted) and stop it while a run is in the middle of a tool
 * call: the run finishes once its worker reaches the database again, nothing happens twice, no
 * worker process dies, and an outage longer than `takeoverAfter` takes no live worker over.
 * An outage's length is the fault under test, so it is a fixed wait; everything else waits on
 * events.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DbosRuns } from "../../src/dbos/index.ts";
import { killAllWorkers, startWorker } from "../support/dbos-workers.ts";
import type { WorkerProcess } from "../support/dbos-workers.ts";
import { startGateServer } from "../support/gate-server.ts";
import type { GateServer } from "../support/gate-server.ts";
import { startHrApiServer } from "../support/hr-api-server.ts";
import type { HrApiServer } from "../support/hr-api-server.ts";
import { freshDatabase } from "../support/postgres-database.ts";
import { postgresBin, startPostgresServer } from "../support/postgres-server.ts";
import type { PostgresServer } from "../support/postgres-server.ts";

interface AgentResult {
  response: { content: string };
  sources: { content: string }[];
}

const outage = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!process.env.DATABASE_URL || !postgresBin())("durable runs through a PostgreSQL restart", () => {
  let server: PostgresServer;
  let db: { url: string; drop: () => Promise<void> };
  let hr: HrApiServer;
  let gates: GateServer;
  let runs: DbosRuns | undefined;

  beforeAll(async () => {
    server = await startPostgresServer();
  }, 120_000);
  afterAll(async () => {
    await server.close();
  });
  beforeEach(async () => {
    db = await freshDatabase(server.url, "stepflow_dbos_outage");
    hr = await startHrApiServer();
    gates = await startGateServer();
  });
  afterEach(async () => {
    await killAllWorkers();
    await runs?.close();
    runs = undefined;
    await gates.close();
    await hr.close();
    await db.drop();
  });

  const args = (workerId: string, options: object) => [db.url, workerId, hr.baseURL, gates.baseURL, "", "10", JSON.stringify(options)];
  const deletes = () => hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path);
  const alive = (worker: WorkerProcess) => worker.proc.exitCode === null && worker.proc.signalCode === null;

  it("a restart during a tool call: the run finishes, the DELETE once, the worker alive", { timeout: 240_000 }, async () => {
    gates.hold("tool");
    const worker = await startWorker(args("w1", {}));
    runs = await DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 });
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect(await gates.reached("tool")).toBe("w1");
    await server.stop();
    // The DELETE goes out while the database is away: the journal's record of it, and the next checkpoint, meet the outage.
    gates.open("tool");
    // Longer than DBOS's retries of a failing part (3 attempts, 1 s apart): before, the run failed for good here.
    await outage(8_000);
    await server.start();

    const result = await runs.result<AgentResult>(runId);
    expect(result.response.content).toBe("Done.");
    expect(result.sources.map((s) => s.content)).toEqual(["Employee 7: HTTP 204"]);
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(gates.hits("tool")).toEqual(["w1"]);
    expect(gates.hits("llm-2")).toEqual(["w1"]);
    expect(alive(worker), worker.stderr()).toBe(true);
    expect(worker.stderr()).not.toMatch(/Unhandled 'error' event/);
  });

  it("a worker restarted during an outage: it starts once the database is back, and finishes its runs once", { timeout: 240_000 }, async () => {
    gates.hold("tool");
    const first = await startWorker(args("w1", {}));
    runs = await DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 });
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect(await gates.reached("tool")).toBe("w1");
    await first.kill();

    // Restarted under its id: DBOS launches and recovers the run; the database goes away before the worker registers its queues.
    gates.hold("queues");
    const starting = startWorker(args("w1", { gateQueues: true }));
    expect(await gates.reached("queues")).toBe("w1");
    await server.stop();
    gates.open("queues");
    gates.open("tool");
    await outage(5_000);
    await server.start();

    const second = await starting;
    const result = await runs.result<AgentResult>(runId);
    expect(result.response.content).toBe("Done.");
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(gates.hits("tool")).toEqual(["w1", "w1"]); // cut short by the kill, then done once
    expect(await runs.workerOf(runId)).toBe("w1");
    expect(alive(second), second.stderr()).toBe(true);
  });

  it("an outage longer than takeoverAfter takes no live worker over", { timeout: 240_000 }, async () => {
    const takeoverAfter = 3;
    gates.hold("tool");
    const first = await startWorker(args("w1", { takeoverAfter }));
    runs = await DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 });
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect(await gates.reached("tool")).toBe("w1");
    const second = await startWorker(args("w2", { takeoverAfter }));
    await server.stop();
    await outage(2.5 * takeoverAfter * 1000);
    await server.start();

    // Both workers beat again for longer than takeoverAfter: had either taken the other over, it would have by then.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const since = (await client.query("SELECT now() + make_interval(secs => $1) AS t", [takeoverAfter + 1])).rows[0] as { t: Date };
      for (;;) {
        const beaten = await client.query("SELECT count(*)::int AS n FROM stepflow_dbos_workers WHERE worker_id IN ('w1', 'w2') AND heartbeat_at > $1", [
          since.t,
        ]);
        if ((beaten.rows[0] as { n: number }).n === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 200)); // polling the database, not waiting for an outcome
      }
    } finally {
      await client.end();
    }
    gates.open("tool");

    const result = await runs.result<AgentResult>(runId);
    expect(result.response.content).toBe("Done.");
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(gates.hits("tool")).toEqual(["w1"]);
    expect(gates.hits("llm-2")).toEqual(["w1"]);
    expect(await runs.workerOf(runId)).toBe("w1");
    expect(second.stdout()).not.toContain("took over");
    expect(first.stdout()).not.toContain("took over");
    expect(first.stdout()).not.toContain("lost lease");
    expect(alive(first) && alive(second)).toBe(true);
  });
});
