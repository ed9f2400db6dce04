/**
 * Worker processes share the runs of one queue, each taking no more at once than its
 * concurrency; a run's events are read from a process that runs no worker.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DbosRuns } from "../../src/dbos/index.ts";
import type { DbosRunStatus } from "../../src/dbos/index.ts";
import { freshDatabase } from "../support/postgres-database.ts";
import { startGateServer } from "../support/gate-server.ts";
import type { GateServer } from "../support/gate-server.ts";
import { startHrApiServer } from "../support/hr-api-server.ts";
import type { HrApiServer } from "../support/hr-api-server.ts";
import { killAllWorkers, startWorker } from "../support/dbos-workers.ts";

const DATABASE_URL = process.env.DATABASE_URL;

describe.skipIf(!DATABASE_URL)("durable runs on several workers", () => {
  let db: { url: string; drop: () => Promise<void> };
  let hr: HrApiServer;
  let gates: GateServer;
  let runs: DbosRuns;

  beforeEach(async () => {
    db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_workers");
    hr = await startHrApiServer();
    gates = await startGateServer();
  });
  afterEach(async () => {
    await killAllWorkers();
    await runs?.close();
    await gates.close();
    await hr.close();
    await db.drop();
  });

  const deletes = () => hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path);
  const statuses = async (ids: string[]) => {
    const counts: Partial<Record<DbosRunStatus, number>> = {};
    for (const id of ids) {
      const status = await runs.status(id);
      counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  };

  it("spread over two workers of concurrency 1: each holds one run, the third waits on the queue", { timeout: 120_000 }, async () => {
    gates.hold("llm-1");
    await startWorker([db.url, "w1", hr.baseURL, gates.baseURL, "", "1"]);
    runs = await DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 });
    const ids = [
      await runs.start("agent", { input: "Fire Lawson" }),
      await runs.start("agent", { input: "Fire Lawson" }),
      await runs.start("agent", { input: "Fire Lawson" }),
    ];
    expect(await gates.reached("llm-1", 1)).toBe("w1");
    expect(await statuses(ids)).toEqual({ pending: 1, enqueued: 2 });

    await startWorker([db.url, "w2", hr.baseURL, gates.baseURL, "", "1"]);
    expect(await gates.reached("llm-1", 2)).toBe("w2");
    expect(await statuses(ids)).toEqual({ pending: 2, enqueued: 1 });

    gates.open("llm-1");
    for (const id of ids) expect((await runs.result<{ response: { content: string } }>(id)).response.content).toBe("Done.");
    const workers = await Promise.all(ids.map((id) => runs.workerOf(id)));
    expect(new Set(workers)).toEqual(new Set(["w1", "w2"]));
    expect(await statuses(ids)).toEqual({ succeeded: 3 });
  });

  it("with a queue-wide concurrency of 1 on two workers: never two runs at once", { timeout: 120_000 }, async () => {
    const queueWide = (id: string) => [db.url, id, hr.baseURL, gates.baseURL, "", "1", JSON.stringify({ concurrency: 1 })];
    gates.hold("llm-1");
    await startWorker(queueWide("w1"));
    runs = await DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 });
    const first = await runs.start("agent", { input: "Fire Lawson" });
    expect(await gates.reached("llm-1", 1)).toBe("w1");
    // w2 is idle, and runs wait on the queue: the queue's limit keeps them there.
    await startWorker(queueWide("w2"));
    const ids = [first, await runs.start("agent", { input: "Fire Lawson" }), await runs.start("agent", { input: "Fire Lawson" })];
    expect(await statuses(ids)).toEqual({ pending: 1, enqueued: 2 });
    for (let k = 1; k <= ids.length; k++) {
      await gates.reached("llm-1", k);
      // The k-th run has reached the model, held there: none after it has started.
      expect(gates.hits("llm-1")).toHaveLength(k);
      expect((await statuses(ids)).enqueued ?? 0).toBe(ids.length - k);
      gates.open("llm-1");
      gates.hold("llm-1");
    }
    gates.open("llm-1");
    for (const id of ids) expect((await runs.result<{ response: { content: string } }>(id)).response.content).toBe("Done.");
    // Each run went through the model, the tool and the model again before the next reached the model.
    expect(gates.log().map((hit) => hit.split(" ")[0])).toEqual(Array.from({ length: ids.length }, () => ["llm-1", "tool", "llm-2"]).flat());
    expect(deletes()).toEqual(ids.map(() => "/api/users/7"));
  });

  it("streams a run's events to a process that runs no worker, as they happen", { timeout: 120_000 }, async () => {
    gates.hold("llm-2");
    await startWorker([db.url, "w1", hr.baseURL, gates.baseURL]);
    runs = await DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 });
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    const seen: string[] = [];
    for await (const ev of runs.events(runId)) {
      seen.push(ev.type);
      // The tool's output arrives while the run still waits at the model's second reply.
      if (ev.type === "agent.FunctionOutputEvent") {
        expect(await gates.reached("llm-2")).toBe("w1");
        expect(await runs.status(runId)).toBe("pending");
        gates.open("llm-2");
      }
    }
    expect(seen).toEqual(["agent.ToolCallEvent", "agent.TokenUsageEvent", "agent.FunctionOutputEvent", "agent.StreamEvent", "agent.TokenUsageEvent"]);
    // The worker closes the stream before DBOS records the run's end: the result waits for that.
    await runs.result(runId);
    expect(await runs.status(runId)).toBe("succeeded");
  });
});
