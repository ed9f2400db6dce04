/**
 * A run that waits for a human takes no slot of its worker's concurrency: with
 * `workerConcurrency: 1`, another run goes through while the first waits, and the first
 * then goes on when it is answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import { DbosRuns, DbosWorker } from "../../src/dbos/index.ts";
import type { DbosRunStatus } from "../../src/dbos/index.ts";
import { freshDatabase } from "../support/postgres-database.ts";

const DATABASE_URL = process.env.DATABASE_URL;

class Doubled extends Event<{ n: number }> {}

class Arithmetic extends Workflow<{ n: number }, number> {
  @step({ accepts: [StartEvent], emits: [Doubled] })
  async double(_ctx: Context, ev: StartEvent<{ n: number }>) {
    return new Doubled({ n: ev.n * 2 });
  }

  @step({ accepts: [Doubled], emits: [StopEvent] })
  async plusOne(_ctx: Context, ev: Doubled) {
    return new StopEvent({ result: ev.n + 1 });
  }
}

class Answered extends Event<{ item: string; response: string }> {}

/** Asks twice, in two steps. */
class Question extends Workflow<{ item: string }, string> {
  @step({ accepts: [StartEvent], emits: [Answered] })
  async ask(ctx: Context, ev: StartEvent<{ item: string }>) {
    const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: `Buy ${ev.item}?` }) });
    return new Answered({ item: ev.item, response: answer.response });
  }

  @step({ accepts: [Answered], emits: [StopEvent] })
  async confirm(ctx: Context, ev: Answered) {
    const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: "Sure?" }) });
    return new StopEvent({ result: `${ev.item}: ${ev.response}, ${answer.response}` });
  }
}

describe.skipIf(!DATABASE_URL)("a parked run on a worker of concurrency 1", () => {
  let db: { url: string; drop: () => Promise<void> };
  let worker: DbosWorker;
  let runs: DbosRuns;

  beforeAll(async () => {
    db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_parked");
    worker = await DbosWorker.start({
      database: db.url,
      workflows: { arithmetic: new Arithmetic({ timeout: 30 }), question: new Question({ timeout: 30 }) },
      workerConcurrency: 1,
      concurrency: 1,
      pollingInterval: 100,
      connections: 3,
    });
    runs = await DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 });
  }, 60_000);
  afterAll(async () => {
    await runs?.close();
    await worker?.stop();
    await db?.drop();
  });

  it("lets other runs through while it waits, each time it waits, and goes on when answered", { timeout: 90_000 }, async () => {
    const asked = await runs.start("question", { item: "a desk" });
    expect(await runs.parked(asked)).toBe(1);
    expect(await runs.status(asked)).toBe("pending");
    // The worker's only slot (and the queue's) is free: another run is taken and ends.
    const other = await runs.start("arithmetic", { n: 4 });
    expect(await runs.result(other)).toBe(9);
    expect(await runs.status(asked)).toBe("pending");

    await runs.respond(asked, new HumanResponseEvent({ response: "yes" }));
    expect(await runs.parked(asked)).toBe(1); // resolves at once: it had parked once; wait for the second below
    let parkings = 1;
    while (parkings < 2) parkings = await runs.parked(asked, 1);
    const third = await runs.start("arithmetic", { n: 10 });
    expect(await runs.result(third)).toBe(21);

    await runs.respond(asked, new HumanResponseEvent({ response: "sure" }));
    expect(await runs.result(asked)).toBe("a desk: yes, sure");
    const questions: string[] = [];
    for await (const ev of runs.events(asked)) questions.push((ev.data as { prefix: string }).prefix);
    expect(questions).toEqual(["Buy a desk?", "Sure?"]);
    const statuses: DbosRunStatus[] = await Promise.all([asked, other, third].map((id) => runs.status(id)));
    expect(statuses).toEqual(["succeeded", "succeeded", "succeeded"]);
  });
});
