/**
 * A run answered after a question goes on in a part of its own; a run that waits for that part
 * longer than a minute looks at the part's status, as its wait for the part's word times out. That look must never hold one of DBOS's connections while it
 * takes another: a worker whose runs all looked at once (one that had just taken many runs
 * over) held every connection of its pool and waited for ever, and none of its parts could
 * record anything again. Here the worker has two connections, one of them DBOS's listener.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { ToolApprovalEvent } from "../../events/index.ts";
import { startWorker } from "../support/dbos-workers.ts";
import { dbosTestBed } from "../support/dbos-test-bed.ts";

const DATABASE_URL = process.env.DATABASE_URL;

describe.skipIf(!DATABASE_URL)("a durable run whose part takes longer than its wait for it", () => {
  const bed = dbosTestBed("stepflow_dbos_connections");

  it("finishes on a worker with one free connection: looking at its part holds no second one", { timeout: 300_000 }, async () => {
    bed.gates.hold("llm-2");
    await startWorker([bed.db.url, "w1", bed.hr.baseURL, bed.gates.baseURL, "approval", "10", JSON.stringify({ connections: 2, timeout: 240 })]);
    const runs = await bed.connect();
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect(await runs.parked(runId)).toBe(1);
    for await (const ev of runs.events(runId)) {
      if (ev.type !== "agent.ToolApprovalRequestEvent") continue;
      await runs.respond(runId, new ToolApprovalEvent({ approvalId: (ev.data as { approvalId: string }).approvalId, approved: true }));
      break;
    }
    // The part after the answer makes the call, then waits at the model's next reply.
    expect(await bed.gates.reached("llm-2")).toBe("w1");
    // The run's wait for its part's word ends without one (after a minute) and is recorded: next, it looks at the part.
    const watcher = new pg.Client({ connectionString: bed.db.url });
    await watcher.connect();
    try {
      const waited = "SELECT count(*)::int AS n FROM dbos.operation_outputs WHERE workflow_uuid = $1 AND function_name = 'DBOS.recv' AND output IS NULL";
      while (((await watcher.query(waited, [runId])).rows[0] as { n: number }).n === 0) await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      await watcher.end();
    }
    bed.gates.open("llm-2");
    const result = await runs.result<{ response: { content: string } }>(runId);
    expect(result.response.content).toBe("Done.");
    expect(await runs.status(runId)).toBe("succeeded");
    expect(bed.hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path)).toEqual(["/api/users/7"]);
  });
});
