/**
 * stepflow writes a run's events into DBOS's stream table itself. A DBOS whose table differs
 * (another version) makes that write fail with an error that names the supported version,
 * not with a database error that reads like an outage.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import { DbosRuntimeError, DbosWorker } from "../../src/dbos/index.ts";
import { RunStreams } from "../../src/dbos/run-stream.ts";
import { freshDatabase } from "../support/postgres-database.ts";

const DATABASE_URL = process.env.DATABASE_URL;

class Echo extends Workflow<{ text: string }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async echo(_ctx: unknown, ev: StartEvent<{ text: string }>) {
    return new StopEvent({ result: ev.text });
  }
}

describe.skipIf(!DATABASE_URL)("a DBOS whose stream table is not the one stepflow supports", () => {
  let db: { url: string; drop: () => Promise<void> };
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_version");
    // A worker's start makes DBOS's tables and stepflow's.
    const worker = await DbosWorker.start({ database: db.url, workflows: { echo: new Echo({ timeout: 30 }) }, connections: 3 });
    await worker.stop();
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it("fails a run's event write with a DbosRuntimeError naming the supported version", { timeout: 30_000 }, async () => {
    const streams = new RunStreams(pool, "postgres://test@localhost/stepflow_dbos_version", 5);
    const fence = { lease: { holder: "w1", epoch: 1, signal: new AbortController().signal }, part: "run-1", owner: undefined };
    await pool.query('ALTER TABLE dbos.streams RENAME COLUMN "offset" TO position');
    const written = streams.write("run-1", "stepflow.events", [{ type: "ProgressEvent", data: {} }], fence);
    await expect(written).rejects.toThrow(DbosRuntimeError);
    await expect(written).rejects.toThrow(/stream table is not the one stepflow writes .*"offset".*supports @dbos-inc\/dbos-sdk 5\.3\.x/);
  });
});
