/** A DBOS worker in this process: runs, failures, answers, and the mistakes it names. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError, Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import { DbosRunFailedError, DbosRuns, DbosRuntimeError, DbosWorker } from "../../src/dbos/index.ts";
import { freshDatabase } from "../support/postgres-database.ts";
import { gate } from "../support/gate.ts";

const DATABASE_URL = process.env.DATABASE_URL;

class Doubled extends Event<{ n: number }> {}
class Note extends Event<{ text: string }> {}

class Arithmetic extends Workflow<{ n: number }, number> {
  @step({ accepts: [StartEvent], emits: [Doubled] })
  async double(ctx: Context, ev: StartEvent<{ n: number }>) {
    if (ev.n < 0) throw new RangeError(`n must not be negative; got ${ev.n}`);
    ctx.writeEventToStream(new Note({ text: "not streamed: the worker's streamEvents leaves notes out" }));
    ctx.writeEventToStream(new Doubled({ n: ev.n * 2 }));
    return new Doubled({ n: ev.n * 2 });
  }

  @step({ accepts: [Doubled], emits: [StopEvent] })
  async plusOne(_ctx: Context, ev: Doubled) {
    return new StopEvent({ result: ev.n + 1 });
  }
}

/** Keeps a function in its store: a run that cannot be saved. */
class Unsaveable extends Workflow<{}, string> {
  @step({ accepts: [StartEvent], emits: [Doubled] })
  async keep(ctx: Context) {
    await ctx.store.set("callback", () => "not JSON");
    return new Doubled({ n: 1 });
  }

  @step({ accepts: [Doubled], emits: [StopEvent] })
  async done() {
    return new StopEvent({ result: "should not get here" });
  }
}

/** Waits in its step until the run is cancelled, and says when it was. */
const entered = gate();
const aborted = gate<string>();
class Patient extends Workflow<{}, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async wait(ctx: Context) {
    entered.open();
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
    aborted.open((ctx.signal.reason as Error).name);
    return new StopEvent({ result: "cancelled" });
  }
}

class Question extends Workflow<{ item: string }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async ask(ctx: Context, ev: StartEvent<{ item: string }>) {
    const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: `Buy ${ev.item}?` }) });
    return new StopEvent({ result: `${ev.item}: ${answer.response}` });
  }
}

describe.skipIf(!DATABASE_URL)("DbosWorker in this process", () => {
  let db: { url: string; drop: () => Promise<void> };
  let worker: DbosWorker;
  let runs: DbosRuns;

  beforeAll(async () => {
    db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_worker");
    worker = await DbosWorker.start({
      database: db.url,
      workflows: {
        arithmetic: new Arithmetic({ timeout: 30 }),
        question: new Question({ timeout: 30 }),
        unsaveable: new Unsaveable({ timeout: 30 }),
        patient: new Patient({ timeout: 60 }),
      },
      pollingInterval: 100,
      connections: 3,
      streamEvents: (ev) => !(ev instanceof Note),
    });
    runs = await DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 });
  }, 60_000);
  afterAll(async () => {
    await runs?.close();
    await worker?.stop();
    await db?.drop();
  });

  it("runs a workflow here, and one put on the queue, to their results", { timeout: 60_000 }, async () => {
    expect(await worker.run("arithmetic", { n: 20 })).toBe(41);
    const runId = await runs.start("arithmetic", { n: 3 });
    expect(await runs.result(runId)).toBe(7);
    expect(await runs.workerOf(runId)).toBe("local");
    const streamed = [];
    for await (const ev of runs.events(runId)) streamed.push(ev);
    expect(streamed).toEqual([{ type: "Doubled", data: { n: 6 } }]);
  });

  it("starts nothing new when started again with the same runId", { timeout: 60_000 }, async () => {
    expect(await runs.start("arithmetic", { n: 5 }, { runId: "once" })).toBe("once");
    expect(await runs.start("arithmetic", { n: 5 }, { runId: "once" })).toBe("once");
    expect(await runs.result("once")).toBe(11);
    expect(await worker.run("arithmetic", { n: 5 }, { runId: "once" })).toBe(11);
  });

  it("reports a run whose workflow failed with the error's class and message", { timeout: 60_000 }, async () => {
    const failed = await worker.run("arithmetic", { n: -1 }, { runId: "negative" }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(DbosRunFailedError);
    expect(failed).toMatchObject({ runId: "negative", errorName: "RangeError" });
    expect((failed as Error).message).toBe("Run negative failed with RangeError: n must not be negative; got -1");
    expect(await runs.status("negative")).toBe("succeeded"); // for DBOS the run ended; its record says how
  });

  it("fails a run that cannot be saved, saying why, instead of running it without checkpoints", { timeout: 60_000 }, async () => {
    const failed = await worker.run("unsaveable", {}).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(DbosRunFailedError);
    expect(failed).toMatchObject({ errorName: "ContextSerdeError" });
  });

  it("cancels a run in the middle of its step, and one parked waiting for an answer", { timeout: 60_000 }, async () => {
    const running = await runs.start("patient", {});
    await entered.promise;
    await runs.cancel(running);
    expect(await aborted.promise).toBe("WorkflowCancelledByUser");
    await expect(runs.result(running)).rejects.toMatchObject({ name: "DbosRunFailedError", errorName: "WorkflowCancelledByUser" });
    expect(await runs.status(running)).toBe("cancelled");

    const parked = await runs.start("question", { item: "a boat" });
    expect(await runs.parked(parked)).toBe(1);
    await runs.cancel(parked);
    await expect(runs.result(parked)).rejects.toThrow(`Run ${parked} was cancelled.`);
  });

  it("keeps an answer sent before the question for it", { timeout: 60_000 }, async () => {
    const runId = await runs.start("question", { item: "a laptop" });
    await runs.respond(runId, new HumanResponseEvent({ response: "yes" }));
    expect(await runs.result(runId)).toBe("a laptop: yes");
  });

  it("answers a run that parked, and streams its question", { timeout: 60_000 }, async () => {
    const runId = await runs.start("question", { item: "a chair" });
    expect(await runs.parked(runId)).toBe(1);
    const [question] = await (async () => {
      for await (const ev of runs.events(runId)) return [ev];
      return [];
    })();
    expect(question).toEqual({ type: "InputRequiredEvent", data: { prefix: "Buy a chair?" } });
    await runs.respond(runId, { type: "HumanResponseEvent", data: { response: "no" } });
    expect(await runs.result(runId)).toBe("a chair: no");
  });

  it("names the workflows it knows when asked for another", async () => {
    await expect(worker.run("poem", {})).rejects.toThrow(
      new DbosRuntimeError('No workflow named "poem" on this worker; it runs arithmetic, question, unsaveable, patient.'),
    );
  });

  it("refuses a second worker in the process, and bad options", async () => {
    await expect(DbosWorker.start({ database: db.url, workflows: { arithmetic: new Arithmetic() } })).rejects.toThrow(
      "A DbosWorker already runs in this process (DBOS allows one per process). Stop it first, or give it every workflow.",
    );
  });
});

describe("DbosWorker options", () => {
  it("says which option is wrong, before connecting", async () => {
    const url = "postgres://nobody@127.0.0.1:1/none";
    const zero = await DbosWorker.start({ database: url, workflows: { a: new Arithmetic() }, workerConcurrency: 0 }).catch((error: unknown) => error);
    expect(zero).toBeInstanceOf(ConfigurationError);
    expect(zero).toMatchObject({ option: "workerConcurrency", received: 0 });
    const none = await DbosWorker.start({ database: url, workflows: {} }).catch((error: unknown) => error);
    expect(none).toMatchObject({ option: "workflows" });
    const id = await DbosWorker.start({ database: url, workflows: { a: new Arithmetic() }, workerId: "two words" }).catch((error: unknown) => error);
    expect(id).toMatchObject({ option: "workerId", message: 'workerId must be 1 to 100 letters, digits, or . _ : -; got "two words".' });
    const over = await DbosWorker.start({ database: url, workflows: { a: new Arithmetic() }, workerConcurrency: 4, concurrency: 2 }).catch(
      (error: unknown) => error,
    );
    expect(over).toMatchObject({
      option: "workerConcurrency",
      message: "workerConcurrency (4, runs at once in this worker) must not exceed concurrency (2, runs at once in all workers together).",
    });
    const takeover = await DbosWorker.start({ database: url, workflows: { a: new Arithmetic() }, takeoverAfter: 0 }).catch((error: unknown) => error);
    expect(takeover).toBeInstanceOf(ConfigurationError);
    expect(takeover).toMatchObject({ option: "takeoverAfter", received: 0 });
  });
});
