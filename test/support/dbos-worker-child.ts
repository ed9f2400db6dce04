/**
 * A DBOS worker process running the "Fire Lawson" agent, for the durable-run tests:
 * `node --import tsx dbos-worker-child.ts DATABASE_URL WORKER_ID HR_BASE_URL GATE_BASE_URL [approval] [concurrency] [options as JSON]`
 * (options: `takeoverAfter`, `concurrency` queue-wide, `unannotated`: the tool does not say its DELETE is idempotent, `toolTimeout` (the agent's, default 60 s), `connections` (DBOS's, default 3), `timeout` (the agent's, default 60 s), `recover`: a dead worker's id to recover once started, `inline`: how many
 * runs to start in this process with `worker.run` once started, each printed as "running ID", `gateQueues`: pass the gate
 * "queues" once DBOS has launched, before the worker registers its queues — where a test cuts the database off).
 * It prints "took over ID: RUNS" when it takes a dead worker's runs over, "lost lease: ID EPOCH BY" when it learns it was taken over.
 * Before each model reply and inside the tool (before its DELETE), it asks the test's gate
 * server (`GET /gate/NAME?worker=ID`), which answers when the test lets it: that is where the
 * test kills it. Prints "ready" once it takes runs; SIGTERM stops it cleanly.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import { DBOS } from "@dbos-inc/dbos-sdk";
import { DbosWorker } from "../../src/dbos/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { fireEmployeeTool } from "./fire-employee-tool.ts";

const [database, workerId, hrURL, gateURL, mode = "", concurrency = "10", more = "{}"] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string?,
  string?,
  string?,
];
const options = JSON.parse(more) as {
  takeoverAfter?: number | false;
  concurrency?: number;
  recover?: string;
  inline?: number;
  connections?: number;
  timeout?: number;
  gateQueues?: boolean;
  unannotated?: boolean;
  toolTimeout?: number;
};

const pass = async (name: string) => {
  const response = await fetch(`${gateURL}/gate/${name}?worker=${workerId}`);
  if (!response.ok) throw new Error(`gate ${name}: ${response.status}`);
};

/** The model: fire employee 7, then say "Done." once it has read the tool's result; each reply first passes its gate. */
class GatedLLM extends ScriptedLLM {
  protected override async reply(messages: ChatMessage[], tools: string[]) {
    await pass(messages.some((m) => m.options && "toolResult" in m.options) ? "llm-2" : "llm-1");
    return super.reply(messages, tools);
  }
}

const fire = fireEmployeeTool(hrURL, pass, { unannotated: options.unannotated === true });

const agent = new FunctionCallingAgent({
  llm: new GatedLLM((request) =>
    request.messages.some((m) => m.options && "toolResult" in m.options)
      ? { text: "Done." }
      : { toolCalls: [{ id: "fire-7", name: "fire_employee", input: { id: 7 } }] },
  ),
  tools: [fire],
  ...(mode === "approval" ? { needsApproval: ["fire_employee"] } : {}),
  timeout: options.timeout ?? 60,
  ...(options.toolTimeout === undefined ? {} : { toolTimeout: options.toolTimeout }),
});

if (options.gateQueues) {
  // DBOS has launched (and recovered this id's runs) when the worker registers its first queue: the gate holds it there.
  const register = DBOS.registerQueue.bind(DBOS);
  let gated = false;
  DBOS.registerQueue = async (...args: Parameters<typeof DBOS.registerQueue>) => {
    if (!gated) {
      gated = true;
      await pass("queues");
    }
    return register(...args);
  };
}

const worker = await DbosWorker.start({
  database,
  workflows: { agent },
  workerId,
  workerConcurrency: Number(concurrency),
  pollingInterval: 100,
  connections: options.connections ?? 3,
  ...(options.takeoverAfter !== undefined ? { takeoverAfter: options.takeoverAfter } : {}),
  ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
  onTakeover: ({ workerId: dead, runs }) => process.stdout.write(`took over ${dead}: ${runs.join(",")}\n`),
  onLeaseLost: ({ workerId: me, epoch, takenOverBy }) => process.stdout.write(`lost lease: ${me} ${epoch} ${takenOverBy ?? "-"}\n`),
});
process.on("SIGTERM", () => {
  void worker.stop().then(() => process.exit(0));
});
process.stdout.write("ready\n");
if (options.recover !== undefined) {
  await worker.recover(options.recover).then(
    (runs) => process.stdout.write(`recovered ${options.recover}: ${runs.join(",")}\n`),
    (error: unknown) => process.stdout.write(`cannot recover ${options.recover}: ${(error as Error).message}\n`),
  );
}
for (let i = 1; i <= (options.inline ?? 0); i++) {
  const runId = `${workerId}-inline-${i}`;
  process.stdout.write(`running ${runId}\n`);
  // Its result is read by the test from the database: this process may be killed first.
  worker.run("agent", { input: "Fire Lawson" }, { runId }).catch(() => undefined);
}
