/**
 * A step that asks several questions (`ctx.waitForEvent` after `ctx.waitForEvent`) on DBOS:
 * each question parks the run, and each part after an answer executes the step again from its
 * input event. Each answer must go to its own question, a question answered must not be asked
 * again, and a worker killed between two questions must leave a run that the next worker
 * finishes, as the same step does in process.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import type { DbosRuns } from "../../src/dbos/index.ts";
import { HumanResponseEvent } from "../../src/index.ts";
import { startWorker } from "../support/dbos-workers.ts";
import { dbosTestBed } from "../support/dbos-test-bed.ts";

const DATABASE_URL = process.env.DATABASE_URL;
const CHILD = join(import.meta.dirname, "..", "support", "dbos-questions-worker-child.ts");
const QUESTIONS = ["Name?", "Colour?", "Size?"];
const REPLIES: Record<string, string> = { "Name?": "Ada", "Colour?": "green", "Size?": "M" };

describe.skipIf(!DATABASE_URL)("a step that asks three questions in a row, on DBOS", () => {
  const bed = dbosTestBed("stepflow_dbos_questions");
  const worker = (id: string) => startWorker([bed.db.url, id, bed.gates.baseURL], CHILD);

  /** Answers each question the run streams as it comes (`before`: called at each, first); resolves with the questions, in order. */
  const answerAll = async (runs: DbosRuns, runId: string, before: (question: string) => Promise<void> = async () => undefined) => {
    const asked: string[] = [];
    for await (const ev of runs.events(runId)) {
      if (ev.type !== "InputRequiredEvent") continue;
      const question = (ev.data as { prefix: string }).prefix;
      asked.push(question);
      await before(question);
      await runs.respond(runId, new HumanResponseEvent({ response: REPLIES[question] ?? "?" }));
    }
    return asked;
  };

  it("gives each answer to its own question, asks each once, and does the work between them once", { timeout: 120_000 }, async () => {
    await worker("w1");
    const runs = await bed.connect();
    const runId = await runs.start("survey", { questions: QUESTIONS });
    const [asked, result] = await Promise.all([answerAll(runs, runId), runs.result(runId)]);
    expect(result).toBe("Name? Ada / Colour? green / Size? M");
    expect(asked).toEqual(QUESTIONS);
    expect(bed.gates.log()).toEqual(["answered-1 w1", "answered-2 w1"]);
    expect(await runs.status(runId)).toBe("succeeded");
  });

  it("keeps answers sent before their questions, each for its own", { timeout: 120_000 }, async () => {
    await worker("w1");
    const runs = await bed.connect();
    const runId = await runs.start("survey", { questions: QUESTIONS });
    for (const question of QUESTIONS) await runs.respond(runId, new HumanResponseEvent({ response: REPLIES[question] as string }));
    expect(await runs.result(runId)).toBe("Name? Ada / Colour? green / Size? M");
    const asked: string[] = [];
    for await (const ev of runs.events(runId)) if (ev.type === "InputRequiredEvent") asked.push((ev.data as { prefix: string }).prefix);
    expect(asked).toEqual(QUESTIONS);
  });

  it("goes on after its worker is killed between two questions, without asking the first again", { timeout: 120_000 }, async () => {
    bed.gates.hold("answered-1");
    const first = await worker("w1");
    const runs = await bed.connect();
    const runId = await runs.start("survey", { questions: QUESTIONS });
    let passedBeforeColour: string[] = [];
    const asked = answerAll(runs, runId, async (question) => {
      if (question === "Colour?") passedBeforeColour = bed.gates.hits("answered-1");
    });
    await bed.gates.reached("answered-1"); // the first answer is in; the work after it has started
    await first.kill();
    expect(await runs.status(runId)).toBe("pending");

    bed.gates.open("answered-1");
    await worker("w1"); // recovers w1's runs
    expect(await runs.result(runId)).toBe("Name? Ada / Colour? green / Size? M");
    expect(await asked).toEqual(QUESTIONS);
    expect(passedBeforeColour).toEqual(["w1", "w1"]); // the second question came from the worker started after the kill
    expect(bed.gates.log()).toEqual(["answered-1 w1", "answered-1 w1", "answered-2 w1"]);
  });

  it(
    "goes on after its worker is killed between two questions once other steps have finished, without asking the first again",
    { timeout: 120_000 },
    async () => {
      bed.gates.hold("reserve");
      bed.gates.hold("between");
      const first = await worker("w1");
      const runs = await bed.connect();
      const runId = await runs.start("intake", {});
      const asked = answerAll(runs, runId);
      // The name is in; the badge's steps have finished, and the run was saved with the name taken.
      await bed.gates.reached("notify");
      bed.gates.open("reserve");
      await bed.gates.reached("between"); // started once the checkpoints of the steps finished before it were written
      await first.kill();

      bed.gates.open("between");
      await worker("w1"); // recovers w1's runs from that checkpoint
      expect(await runs.result(runId)).toBe("Ada likes green");
      expect(await asked).toEqual(["Name?", "Colour?"]);
      expect(bed.gates.hits("reserve")).toEqual(["w1"]);
      expect(bed.gates.hits("between")).toEqual(["w1", "w1"]);
    },
  );
});
