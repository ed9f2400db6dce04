/** Workers started at the same moment on a new database: DBOS makes its tables once, and every worker comes up. */
import { afterEach, describe, expect, it } from "vitest";
import { DbosDatabaseError, DbosRuns } from "../../src/dbos/index.ts";
import { freshDatabase } from "../support/postgres-database.ts";
import { startGateServer } from "../support/gate-server.ts";
import type { GateServer } from "../support/gate-server.ts";
import { startHrApiServer } from "../support/hr-api-server.ts";
import type { HrApiServer } from "../support/hr-api-server.ts";
import { killAllWorkers, startWorker } from "../support/dbos-workers.ts";

const DATABASE_URL = process.env.DATABASE_URL;

describe.skipIf(!DATABASE_URL)("workers starting together on a new database", () => {
  let db: { url: string; drop: () => Promise<void> } | undefined;
  let hr: HrApiServer | undefined;
  let gates: GateServer | undefined;
  let runs: DbosRuns | undefined;
  afterEach(async () => {
    await killAllWorkers();
    await runs?.close();
    await gates?.close();
    await hr?.close();
    await db?.drop();
  });

  it("all come up, with a client connecting meanwhile, and take runs", { timeout: 120_000 }, async () => {
    db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_startup");
    hr = await startHrApiServer();
    gates = await startGateServer();
    const args = (id: string) => [(db as { url: string }).url, id, (hr as HrApiServer).baseURL, (gates as GateServer).baseURL];
    const [connected] = await Promise.all([
      DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 }),
      startWorker(args("w1")),
      startWorker(args("w2")),
      startWorker(args("w3")),
    ]);
    runs = connected;
    const runId = await runs.start("agent", { input: "Fire Lawson" });
    expect((await runs.result<{ response: { content: string } }>(runId)).response.content).toBe("Done.");
  });

  it("says to start a worker first when a run is started where none ever has, and starts it once one has", { timeout: 120_000 }, async () => {
    db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_no_worker");
    hr = await startHrApiServer();
    gates = await startGateServer();
    runs = await DbosRuns.connect({ database: db.url, pollingInterval: 100, connections: 2 });
    const error = await runs.start("agent", { input: "Fire Lawson" }, { runId: "first-run" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DbosDatabaseError);
    expect((error as Error).message).toMatch(
      /^No DBOS worker has started on postgres:\/\/.* yet, so the queue's tables are missing and run "first-run" was not started\. Start a worker there first \(npx stepflow worker --database …, or DbosWorker\.start\), then start the run again\.$/,
    );
    await startWorker([db.url, "w1", hr.baseURL, gates.baseURL]);
    await runs.start("agent", { input: "Fire Lawson" }, { runId: "first-run" });
    expect((await runs.result<{ response: { content: string } }>("first-run")).response.content).toBe("Done.");
  });
});
