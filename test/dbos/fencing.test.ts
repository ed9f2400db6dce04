/**
 * A run is executed by one worker at a time, and never again once its end is recorded: a worker
 * taken over while alive (here, stopped with SIGSTOP past `takeoverAfter`) finds its lease gone
 * when it wakes, says so, and runs nothing of the run again; a part delivered again after the
 * run's end was recorded returns that end; and a dead worker's runs come back within the taking
 * worker's `workerConcurrency`. The agent fires employee 7 through the HR API (which counts the
 * DELETEs); the gate server counts who reached each model reply and tool call.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { DbosRuns } from "../../src/dbos/index.ts";
import { startWorker } from "../support/dbos-workers.ts";
import { dbosTestBed } from "../support/dbos-test-bed.ts";

const DATABASE_URL = process.env.DATABASE_URL;

interface AgentResult {
  response: { content: string };
  sources: { content: string }[];
}

describe.skipIf(!DATABASE_URL)("fencing of durable runs", () => {
  const bed = dbosTestBed("stepflow_dbos_fencing");
  let runs: DbosRuns;

  const deletes = () => bed.hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path);
  const args = (workerId: string, options: object, concurrency = "10") => [
    bed.db.url,
    workerId,
    bed.hr.baseURL,
    bed.gates.baseURL,
    "",
    concurrency,
    JSON.stringify(options),
  ];

  it("a worker taken over while alive stops its part when it wakes, says so, and runs nothing again", { timeout: 240_000 }, async () => {
    bed.gates.hold("llm-2");
    const first = await startWorker(args("w1", { takeoverAfter: 3 }));
    runs = await bed.connect();
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect(await bed.gates.reached("llm-2")).toBe("w1"); // the tool's step has finished; the model is asked again
    const second = await startWorker(args("w2", { takeoverAfter: 3 }));
    first.proc.kill("SIGSTOP"); // alive, but silent: past takeoverAfter it is taken over
    expect(await second.printed("took over w1:")).toBe(`took over w1: ${runId}`);
    expect(await bed.gates.reached("llm-2", 2)).toBe("w2");
    bed.gates.open("llm-2"); // w1's model reply is waiting for it when it wakes
    const result = await runs.result<AgentResult>(runId);
    expect(result.response.content).toBe("Done.");

    first.proc.kill("SIGCONT");
    expect(await first.printed("lost lease:")).toMatch(/^lost lease: w1 \d+ w2$/);
    expect(await first.stop()).toBe(0);
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(bed.gates.hits("llm-1")).toEqual(["w1"]);
    expect(bed.gates.hits("tool")).toEqual(["w1"]);
    expect(bed.gates.hits("llm-2")).toEqual(["w1", "w2"]);
    expect(await runs.status(runId)).toBe("succeeded");
    expect(await runs.workerOf(runId)).toBe("w2");
  });

  it("a worker killed after the run's last step, before DBOS recorded the run's end: the run succeeds, nothing runs again", { timeout: 240_000 }, async () => {
    bed.gates.hold("llm-2");
    const first = await startWorker(args("w1", {}));
    runs = await bed.connect();
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect(await bed.gates.reached("llm-2")).toBe("w1"); // the last step has started
    // DBOS records a finished run's output in workflow_output: held back until the worker is killed.
    const blocker = new pg.Client({ connectionString: bed.db.url });
    await blocker.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query("LOCK TABLE dbos.workflow_output IN SHARE ROW EXCLUSIVE MODE");
      bed.gates.open("llm-2");
      const watcher = new pg.Client({ connectionString: bed.db.url });
      await watcher.connect();
      try {
        // The run's last step has finished and stepflow has written what it writes of it (the last checkpoint, or the run's end).
        const ended =
          "SELECT count(*)::int AS n FROM stepflow_dbos_checkpoints c WHERE run_id = $1 AND (to_jsonb(c) ->> 'outcome' IS NOT NULL OR c.context ->> 'running' = 'false')";
        while (((await watcher.query(ended, [runId])).rows[0] as { n: number }).n === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      } finally {
        await watcher.end();
      }
      await first.kill();
    } finally {
      await blocker.query("ROLLBACK");
      await blocker.end();
    }
    await startWorker(args("w1", {}));
    const result = await runs.result<AgentResult>(runId);
    expect(result.response.content).toBe("Done.");
    expect(result.sources.map((s) => s.content)).toEqual(["Employee 7: HTTP 204"]);
    expect(await runs.status(runId)).toBe("succeeded");
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(bed.gates.hits("llm-1")).toEqual(["w1"]);
    expect(bed.gates.hits("llm-2")).toEqual(["w1"]); // its reply was recorded with the run's end: not asked again
  });

  it("a dead worker's runs come back within the taking worker's workerConcurrency", { timeout: 240_000 }, async () => {
    bed.gates.hold("tool");
    const first = await startWorker(args("w1", { takeoverAfter: 3, inline: 3 }));
    runs = await bed.connect();
    for (let n = 1; n <= 3; n++) await bed.gates.reached("tool", n);
    await first.kill();
    const second = await startWorker(args("w2", { takeoverAfter: 3 }, "1"));
    await second.printed("took over w1:");
    expect(await bed.gates.reached("tool", 4)).toBe("w2");
    bed.gates.open("tool");
    for (let n = 1; n <= 3; n++) expect((await runs.result<AgentResult>(`w1-inline-${n}`)).response.content).toBe("Done.");
    // One at a time on w2: each run's tool call, then its last model reply, before the next run starts.
    const onSecond = bed.gates
      .log()
      .filter((line) => line.endsWith(" w2"))
      .map((line) => line.split(" ")[0]);
    expect(onSecond).toEqual(["tool", "llm-2", "tool", "llm-2", "tool", "llm-2"]);
    expect(deletes()).toHaveLength(3);
  });
});
