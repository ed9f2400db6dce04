/**
 * Worker processes share the runs of one queue, each taking no more at once than its
 * concurrency; a run's events are read from a process that runs no worker.
 */
import { describe, expect, it } from "vitest";
import type { DbosRuns } from "../../src/dbos/index.ts";
import type { DbosRunStatus } from "../../src/dbos/index.ts";
import { startWorker } from "../support/dbos-workers.ts";
import { dbosTestBed } from "../support/dbos-test-bed.ts";

const DATABASE_URL = process.env.DATABASE_URL;

describe.skipIf(!DATABASE_URL)("durable runs on several workers", () => {
  const bed = dbosTestBed("stepflow_dbos_workers");
  let runs: DbosRuns;

  const deletes = () => bed.hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path);
  const statuses = async (ids: string[]) => {
    const counts: Partial<Record<DbosRunStatus, number>> = {};
    for (const id of ids) {
      const status = await runs.status(id);
      counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  };

  it("spread over two workers of concurrency 1: each holds one run, the third waits on the queue", { timeout: 120_000 }, async () => {
    bed.gates.hold("llm-1");
    await startWorker([bed.db.url, "w1", bed.hr.baseURL, bed.gates.baseURL, "", "1"]);
    runs = await bed.connect();
    const ids = [
      await runs.start("agent", { input: "Fire Lawson" }),
      await runs.start("agent", { input: "Fire Lawson" }),
      await runs.start("agent", { input: "Fire Lawson" }),
    ];
    expect(await bed.gates.reached("llm-1", 1)).toBe("w1");
    expect(await statuses(ids)).toEqual({ pending: 1, enqueued: 2 });

    await startWorker([bed.db.url, "w2", bed.hr.baseURL, bed.gates.baseURL, "", "1"]);
    expect(await bed.gates.reached("llm-1", 2)).toBe("w2");
    expect(await statuses(ids)).toEqual({ pending: 2, enqueued: 1 });

    bed.gates.open("llm-1");
    for (const id of ids) expect((await runs.result<{ response: { content: string } }>(id)).response.content).toBe("Done.");
    const workers = await Promise.all(ids.map((id) => runs.workerOf(id)));
    expect(new Set(workers)).toEqual(new Set(["w1", "w2"]));
    expect(await statuses(ids)).toEqual({ succeeded: 3 });
  });

  it("with a queue-wide concurrency of 1 on two workers: never two runs at once", { timeout: 120_000 }, async () => {
    const queueWide = (id: string) => [bed.db.url, id, bed.hr.baseURL, bed.gates.baseURL, "", "1", JSON.stringify({ concurrency: 1 })];
    bed.gates.hold("llm-1");
    await startWorker(queueWide("w1"));
    runs = await bed.connect();
    const first = await runs.start("agent", { input: "Fire Lawson" });
    expect(await bed.gates.reached("llm-1", 1)).toBe("w1");
    // w2 is idle, and runs wait on the queue: the queue's limit keeps them there.
    await startWorker(queueWide("w2"));
    const ids = [first, await runs.start("agent", { input: "Fire Lawson" }), await runs.start("agent", { input: "Fire Lawson" })];
    expect(await statuses(ids)).toEqual({ pending: 1, enqueued: 2 });
    for (let k = 1; k <= ids.length; k++) {
      await bed.gates.reached("llm-1", k);
      // The k-th run has reached the model, held there: none after it has started.
      expect(bed.gates.hits("llm-1")).toHaveLength(k);
      expect((await statuses(ids)).enqueued ?? 0).toBe(ids.length - k);
      bed.gates.open("llm-1");
      bed.gates.hold("llm-1");
    }
    bed.gates.open("llm-1");
    for (const id of ids) expect((await runs.result<{ response: { content: string } }>(id)).response.content).toBe("Done.");
    // Each run went through the model, the tool and the model again before the next reached the model.
    expect(bed.gates.log().map((hit) => hit.split(" ")[0])).toEqual(Array.from({ length: ids.length }, () => ["llm-1", "tool", "llm-2"]).flat());
    expect(deletes()).toEqual(ids.map(() => "/api/users/7"));
  });

  it("streams a run's events to a process that runs no worker, as they happen", { timeout: 120_000 }, async () => {
    bed.gates.hold("llm-2");
    await startWorker([bed.db.url, "w1", bed.hr.baseURL, bed.gates.baseURL]);
    runs = await bed.connect();
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    const seen: string[] = [];
    for await (const ev of runs.events(runId)) {
      seen.push(ev.type);
      // The tool's output arrives while the run still waits at the model's second reply.
      if (ev.type === "agent.FunctionOutputEvent") {
        expect(await bed.gates.reached("llm-2")).toBe("w1");
        expect(await runs.status(runId)).toBe("pending");
        bed.gates.open("llm-2");
      }
    }
    expect(seen).toEqual(["agent.ToolCallEvent", "agent.TokenUsageEvent", "agent.FunctionOutputEvent", "agent.StreamEvent", "agent.TokenUsageEvent"]);
    // The worker closes the stream before DBOS records the run's end: the result waits for that.
    await runs.result(runId);
    expect(await runs.status(runId)).toBe("succeeded");
  });
});
