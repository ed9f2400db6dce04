/**
 * Durable runs survive a worker killed with SIGKILL: a worker started after it (with the same
 * id, as DBOS recovers a worker's own runs) finishes the run, and nothing that was recorded
 * happens twice. The agent fires employee 7 through the HR API; the test server counts the
 * DELETEs, and the gate server counts the model's replies and the tool's starts.
 */
import { describe, expect, it } from "vitest";
import type { DbosRuns } from "../../src/dbos/index.ts";
import { startWorker } from "../support/dbos-workers.ts";
import { dbosTestBed } from "../support/dbos-test-bed.ts";

const DATABASE_URL = process.env.DATABASE_URL;

interface AgentResult {
  response: { content: string };
  sources: { content: string }[];
}

describe.skipIf(!DATABASE_URL)("a durable run on DBOS, its worker killed", () => {
  const bed = dbosTestBed("stepflow_dbos_crash");
  let runs: DbosRuns;

  /** How many times each kind of event was streamed: a step execution that ran twice would stream its events twice. */
  const streamed = async (runId: string) => {
    const counts: Record<string, number> = {};
    for await (const ev of runs.events(runId)) counts[ev.type] = (counts[ev.type] ?? 0) + 1;
    return counts;
  };
  const deletes = () => bed.hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path);
  const args = (workerId: string) => [bed.db.url, workerId, bed.hr.baseURL, bed.gates.baseURL];

  it("in the middle of a tool call: the next worker makes the call, and the DELETE happens once", { timeout: 120_000 }, async () => {
    bed.gates.hold("tool");
    const first = await startWorker(args("w1"));
    runs = await bed.connect();
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    await bed.gates.reached("tool"); // the tool has started; its DELETE is not sent yet
    await first.kill();
    expect(await runs.status(runId)).toBe("pending");
    expect(deletes()).toEqual([]);

    bed.gates.open("tool");
    await startWorker(args("w1"));
    const result = await runs.result<AgentResult>(runId);
    expect(result.response.content).toBe("Done.");
    expect(result.sources.map((s) => s.content)).toEqual(["Employee 7: HTTP 204"]);
    expect(deletes()).toEqual(["/api/users/7"]);
    // The model's first reply was recorded before the kill: the second worker did not ask again.
    expect(bed.gates.hits("llm-1")).toEqual(["w1"]);
    expect(bed.gates.hits("tool")).toEqual(["w1", "w1"]);
    expect(bed.gates.hits("llm-2")).toEqual(["w1"]);
    expect(await runs.status(runId)).toBe("succeeded");
    // The model's step finished before the kill: its ToolCallEvent is streamed once; the tool's step ran to its end once.
    expect(await streamed(runId)).toEqual({ "agent.ToolCallEvent": 1, "agent.FunctionOutputEvent": 1, "agent.StreamEvent": 1, "agent.TokenUsageEvent": 2 });
  });

  it(
    "in the middle of a call of a tool that does not say it is idempotent: it is not made again, the model reads its outcome is unknown",
    { timeout: 120_000 },
    async () => {
      const bare = (workerId: string) => [...args(workerId), "", "10", JSON.stringify({ unannotated: true, toolTimeout: 1 })];
      bed.gates.hold("tool");
      const first = await startWorker(bare("w1"));
      runs = await bed.connect();
      const runId = await runs.start("agent", { input: "Fire Lawson" });
      await bed.gates.reached("tool");
      await first.kill();

      bed.gates.open("tool");
      await startWorker(bare("w1"));
      const result = await runs.result<AgentResult>(runId);
      expect(result.sources.map((s) => s.content)).toEqual([
        expect.stringMatching(
          /^The call to fire_employee was started before, .* It was not made again, as that could apply it twice: it may or may not have taken effect\./,
        ),
      ]);
      expect(bed.gates.hits("tool")).toEqual(["w1"]); // the tool's function did not start again
      expect(deletes()).toEqual([]);
      expect(result.response.content).toBe("Done.");
    },
  );

  it("between two steps: the tool's step finished before the kill, and is not run again", { timeout: 120_000 }, async () => {
    bed.gates.hold("llm-2");
    const first = await startWorker(args("w1"));
    runs = await bed.connect();
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    await bed.gates.reached("llm-2"); // the tool's step has finished; the model is asked again
    await first.kill();
    expect(deletes()).toEqual(["/api/users/7"]);

    bed.gates.open("llm-2");
    await startWorker(args("w1"));
    const result = await runs.result<AgentResult>(runId);
    expect(result.response.content).toBe("Done.");
    expect(result.sources.map((s) => s.content)).toEqual(["Employee 7: HTTP 204"]);
    expect(deletes()).toEqual(["/api/users/7"]);
    expect(bed.gates.hits("llm-1")).toHaveLength(1);
    expect(bed.gates.hits("tool")).toHaveLength(1);
    // The step that was cut short runs again from its input: the model is asked a second time.
    expect(bed.gates.hits("llm-2")).toHaveLength(2);
    expect(await streamed(runId)).toEqual({ "agent.ToolCallEvent": 1, "agent.FunctionOutputEvent": 1, "agent.StreamEvent": 1, "agent.TokenUsageEvent": 2 });
  });
});
