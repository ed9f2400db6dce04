/**
 * A DBOS worker process for the throughput benchmark: the calculator agent on the 50 ms
 * scripted model. `node --import tsx bench/dbos-worker-child.ts DATABASE_URL WORKER_ID CONCURRENCY stream|nostream`;
 * prints "ready", stops on SIGTERM.
 */
import { DbosWorker } from "../src/dbos/index.ts";
import { newAgent } from "./sessions-scale.ts";

const [database, workerId, concurrency, stream] = process.argv.slice(2) as [string, string, string, string];
const worker = await DbosWorker.start({
  database,
  workflows: { agent: newAgent(50) },
  workerId,
  workerConcurrency: Number(concurrency),
  pollingInterval: 50,
  connections: 5,
  streamEvents: stream === "stream",
});
process.on("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
process.stdout.write("ready\n");
