/**
 * What each durable-run test of a `describe` block starts with: a fresh database, the HR API
 * and the gate server, and a client it may connect; after the test, its workers are killed and
 * all of it closed.
 */
import { afterEach, beforeEach } from "vitest";
import { DbosRuns } from "../../src/dbos/index.ts";
import { killAllWorkers } from "./dbos-workers.ts";
import { startGateServer } from "./gate-server.ts";
import type { GateServer } from "./gate-server.ts";
import { startHrApiServer } from "./hr-api-server.ts";
import type { HrApiServer } from "./hr-api-server.ts";
import { freshDatabase } from "./postgres-database.ts";

export interface DbosTestBed {
  readonly db: { readonly url: string };
  readonly hr: HrApiServer;
  readonly gates: GateServer;
  /** A client of the test's database (closed after the test). */
  connect(): Promise<DbosRuns>;
}

/**
 * Registers the set-up and clean-up of each test of the enclosing `describe` block; the
 * database's name starts with `prefix`.
 * @example const bed = dbosTestBed("stepflow_dbos_crash"); // then bed.db.url, bed.hr, await bed.connect()
 */
export function dbosTestBed(prefix: string): DbosTestBed {
  let current: { db: { url: string; drop: () => Promise<void> }; hr: HrApiServer; gates: GateServer; runs: DbosRuns[] } | undefined;
  const now = () => {
    if (!current) throw new Error("The DBOS test bed is used outside a test.");
    return current;
  };
  beforeEach(async () => {
    current = {
      db: await freshDatabase(process.env.DATABASE_URL as string, prefix),
      hr: await startHrApiServer(),
      gates: await startGateServer(),
      runs: [],
    };
  });
  afterEach(async () => {
    const { db, hr, gates, runs } = now();
    current = undefined;
    await killAllWorkers();
    for (const client of runs) await client.close();
    await gates.close();
    await hr.close();
    await db.drop();
  });
  return {
    get db() {
      return now().db;
    },
    get hr() {
      return now().hr;
    },
    get gates() {
      return now().gates;
    },
    async connect() {
      const client = await DbosRuns.connect({ database: now().db.url, pollingInterval: 100, connections: 2 });
      now().runs.push(client);
      return client;
    },
  };
}
