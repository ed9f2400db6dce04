/**
 * A durable run that asks a human parks in the database: the worker that asked exits, an
 * answer comes from another process, and a worker started later finishes the run.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DbosRuns } from "../../src/dbos/index.ts";
import { startWorker } from "../support/dbos-workers.ts";
import { dbosTestBed } from "../support/dbos-test-bed.ts";

const DATABASE_URL = process.env.DATABASE_URL;

/** Runs `dbos-answer-child.ts`: another process approves the call, then exits. */
function answerFromAnotherProcess(database: string, runId: string, approvalId: string): Promise<number | null> {
  const proc = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "..", "support", "dbos-answer-child.ts"), database, runId, approvalId], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  return new Promise((resolve) => proc.on("exit", resolve));
}

describe.skipIf(!DATABASE_URL)("a durable run waiting for approval", () => {
  const bed = dbosTestBed("stepflow_dbos_approval");
  let runs: DbosRuns;

  it("is answered from another process after the worker that asked has exited, and runs the approved DELETE once", { timeout: 120_000 }, async () => {
    const asking = await startWorker([bed.db.url, "w1", bed.hr.baseURL, bed.gates.baseURL, "approval"]);
    runs = await bed.connect();
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect(await runs.parked(runId)).toBe(1);
    let approvalId = "";
    for await (const ev of runs.events(runId)) {
      if (ev.type !== "agent.ToolApprovalRequestEvent") continue;
      approvalId = (ev.data as { approvalId: string }).approvalId;
      break;
    }
    expect(approvalId).not.toBe("");
    expect(await asking.stop()).toBe(0);
    expect(bed.gates.hits("tool")).toEqual([]);

    expect(await answerFromAnotherProcess(bed.db.url, runId, approvalId)).toBe(0);
    expect(await runs.status(runId)).toBe("pending");
    expect(bed.hr.requests.filter((r) => r.method === "DELETE")).toEqual([]);

    await startWorker([bed.db.url, "w1", bed.hr.baseURL, bed.gates.baseURL, "approval"]);
    const result = await runs.result<{ response: { content: string }; sources: { content: string }[] }>(runId);
    expect(result.response.content).toBe("Done.");
    expect(result.sources.map((s) => s.content)).toEqual(["Employee 7: HTTP 204"]);
    expect(bed.hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path)).toEqual(["/api/users/7"]);
    expect(bed.gates.hits("llm-1")).toHaveLength(1);
    expect(bed.gates.hits("tool")).toHaveLength(1);
  });
});
