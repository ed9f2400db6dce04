/**
 * A dead worker's runs are taken over by a live worker with another id: automatically, once its
 * heartbeat is older than `takeoverAfter` (or than two beats, once its process is gone, even by a worker
 * that has just started), by exactly one of the live workers; or when a worker
 * is asked to recover them. The agent fires employee 7 through the HR API; the test server
 * counts the DELETEs, the gate server who reached each point.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { ToolApprovalEvent } from "../../events/index.ts";
import type { DbosRuns } from "../../src/dbos/index.ts";
import { startWorker } from "../support/dbos-workers.ts";
import { dbosTestBed } from "../support/dbos-test-bed.ts";

const DATABASE_URL = process.env.DATABASE_URL;

interface AgentResult {
  response: { content: string };
  sources: { content: string }[];
}

describe.skipIf(!DATABASE_URL)("a dead worker's runs, taken over by a worker with another id", () => {
  const bed = dbosTestBed("stepflow_dbos_takeover");
  let runs: DbosRuns;

  const deletes = () => bed.hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path);
  const args = (workerId: string, options: object, mode = "") => [bed.db.url, workerId, bed.hr.baseURL, bed.gates.baseURL, mode, "10", JSON.stringify(options)];

  /** Worker w1 takes a run and is killed with SIGKILL inside the tool, before its DELETE; resolves with the run's id. */
  const killedInTheTool = async (takeoverAfter: number) => {
    bed.gates.hold("tool");
    const first = await startWorker(args("w1", { takeoverAfter }));
    runs = await bed.connect();
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect(await bed.gates.reached("tool")).toBe("w1");
    return { first, runId };
  };

  const expectFinishedOnceBy = async (runId: string, worker: string) => {
    const result = await runs.result<AgentResult>(runId);
    expect(result.response.content).toBe("Done.");
    expect(result.sources.map((s) => s.content)).toEqual(["Employee 7: HTTP 204"]);
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(bed.gates.hits("llm-1")).toEqual(["w1"]); // recorded before the kill: not asked again
    expect(bed.gates.hits("tool")).toEqual(["w1", worker]);
    expect(bed.gates.hits("llm-2")).toEqual([worker]);
    expect(await runs.workerOf(runId)).toBe(worker);
    expect(await runs.status(runId)).toBe("succeeded");
  };

  it("once its heartbeat is older than takeoverAfter: a worker already running finishes the run, the DELETE once", { timeout: 120_000 }, async () => {
    const { first, runId } = await killedInTheTool(3);
    const second = await startWorker(args("w2", { takeoverAfter: 3 }));
    await first.kill();
    expect(await runs.status(runId)).toBe("pending");
    bed.gates.open("tool");
    expect(await second.printed("took over w1:")).toBe(`took over w1: ${runId}`);
    await expectFinishedOnceBy(runId, "w2");
  });

  it("once its process is gone: after two missed beats, without waiting for takeoverAfter", { timeout: 240_000 }, async () => {
    const takeoverAfter = 30;
    const { first, runId } = await killedInTheTool(takeoverAfter);
    const second = await startWorker(args("w2", { takeoverAfter }));
    const client = new pg.Client({ connectionString: bed.db.url });
    await client.connect();
    try {
      // A worker takes others over only once it has itself beaten for takeoverAfter: w1 is killed after that.
      const streak = "SELECT up_since <= now() - make_interval(secs => $1) AS ok FROM stepflow_dbos_workers WHERE worker_id = 'w2'";
      while (!((await client.query(streak, [takeoverAfter])).rows[0] as { ok: boolean }).ok) {
        await new Promise((resolve) => setTimeout(resolve, 500)); // polling the database, not waiting for an outcome
      }
      await first.kill();
      bed.gates.open("tool");
      expect(await second.printed("took over w1:")).toBe(`took over w1: ${runId}`);
      await expectFinishedOnceBy(runId, "w2");
      // Measured by the database's clock: from w1's last beat to its takeover.
      const { rows } = await client.query(
        "SELECT EXTRACT(EPOCH FROM taken_over_at - heartbeat_at)::float8 AS silent, taken_over_by FROM stepflow_dbos_workers WHERE worker_id = 'w1'",
      );
      const row = rows[0] as { silent: number; taken_over_by: string };
      expect(row.taken_over_by).toBe("w2");
      expect(row.silent).toBeLessThan(takeoverAfter);
    } finally {
      await client.end();
    }
  });

  it("by a worker that has just started: after two of its beats, without first beating for takeoverAfter", { timeout: 240_000 }, async () => {
    // Two beats are 24 s of it: the margin to 60 s leaves room for a slow start on a loaded machine.
    const takeoverAfter = 60;
    const { first, runId } = await killedInTheTool(takeoverAfter);
    await first.kill();
    const second = await startWorker(args("w2", { takeoverAfter }));
    bed.gates.open("tool");
    expect(await second.printed("took over w1:")).toBe(`took over w1: ${runId}`);
    await expectFinishedOnceBy(runId, "w2");
    // By the database's clock: w2 took w1 over before it had itself beaten for takeoverAfter (its lock said w1 was gone).
    const client = new pg.Client({ connectionString: bed.db.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT EXTRACT(EPOCH FROM dead.taken_over_at - live.up_since)::float8 AS streak, dead.taken_over_by
         FROM stepflow_dbos_workers dead, stepflow_dbos_workers live WHERE dead.worker_id = 'w1' AND live.worker_id = 'w2'`,
      );
      const row = rows[0] as { streak: number; taken_over_by: string };
      expect(row.taken_over_by).toBe("w2");
      expect(row.streak).toBeLessThan(takeoverAfter);
    } finally {
      await client.end();
    }
  });

  it("by one live worker only when two see it dead", { timeout: 120_000 }, async () => {
    const { first, runId } = await killedInTheTool(3);
    const others = [await startWorker(args("w2", { takeoverAfter: 3 })), await startWorker(args("w3", { takeoverAfter: 3 }))];
    await first.kill();
    bed.gates.open("tool");
    const result = await runs.result<AgentResult>(runId);
    expect(result.response.content).toBe("Done.");
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(bed.gates.hits("tool")).toHaveLength(2);
    expect(bed.gates.hits("llm-2")).toHaveLength(1);

    const client = new pg.Client({ connectionString: bed.db.url });
    await client.connect();
    const row = (await client.query("SELECT taken_over_by FROM stepflow_dbos_workers WHERE worker_id = 'w1'")).rows[0] as { taken_over_by: string };
    await client.end();
    expect(["w2", "w3"]).toContain(row.taken_over_by);
    // Each has stopped cleanly and printed everything: one of them took w1 over, with the run.
    for (const worker of others) expect(await worker.stop()).toBe(0);
    const lines = others.flatMap((w) => w.stdout().split("\n")).filter((line) => line.startsWith("took over w1:"));
    expect(lines).toEqual([`took over w1: ${runId}`]);
    expect(others[row.taken_over_by === "w2" ? 0 : 1]?.stdout()).toContain(`took over w1: ${runId}`);
  });

  it("when a worker is asked to recover it (takeoverAfter off), and not while it is alive", { timeout: 120_000 }, async () => {
    const { first, runId } = await killedInTheTool(3);
    const refused = await startWorker(args("w3", { takeoverAfter: false, recover: "w1" }));
    expect(await refused.printed("cannot recover w1:")).toBe(
      'cannot recover w1: Worker "w1" is alive (it beat while waiting to recover its runs, which would then run twice): stop it first, then recover its runs.',
    );
    await refused.stop();
    await first.kill();
    bed.gates.open("tool");
    const second = await startWorker(args("w2", { takeoverAfter: false, recover: "w1" }));
    expect(await second.printed("recovered w1:")).toBe(`recovered w1: ${runId}`);
    await expectFinishedOnceBy(runId, "w2");
  });

  it("a run parked on a worker that died is answered, taken over, and finished by another", { timeout: 120_000 }, async () => {
    const first = await startWorker(args("w1", { takeoverAfter: 3 }, "approval"));
    runs = await bed.connect();
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect(await runs.parked(runId)).toBe(1);
    let approvalId = "";
    for await (const ev of runs.events(runId)) {
      if (ev.type !== "agent.ToolApprovalRequestEvent") continue;
      approvalId = (ev.data as { approvalId: string }).approvalId;
      break;
    }
    const second = await startWorker(args("w2", { takeoverAfter: 3 }, "approval"));
    await first.kill();
    await runs.respond(runId, new ToolApprovalEvent({ approvalId, approved: true }));
    expect(await second.printed("took over w1:")).toBe(`took over w1: ${runId}`);
    const result = await runs.result<AgentResult>(runId);
    expect(result.sources.map((s) => s.content)).toEqual(["Employee 7: HTTP 204"]);
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(bed.gates.hits("llm-1")).toEqual(["w1"]);
    expect(bed.gates.hits("tool")).toEqual(["w2"]);
    expect(await runs.workerOf(runId)).toBe("w2");
  });
});
