/**
 * A DBOS worker process for the tests of steps that ask several questions:
 * `node --import tsx dbos-questions-worker-child.ts DATABASE_URL WORKER_ID GATE_BASE_URL`.
 * Its workflow `survey` asks the questions of its input one after the other in one step
 * execution; between two questions it records the answer with `ctx.once`, whose work first
 * passes the gate `answered-N` (N: the question answered, from 1): that is where a test
 * kills it. Prints "ready" once it takes runs; SIGTERM stops it cleanly.
 */
import { DbosWorker } from "../../src/dbos/index.ts";
import { HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";

const [database, workerId, gateURL] = process.argv.slice(2) as [string, string, string];

const pass = async (name: string) => {
  const response = await fetch(`${gateURL}/gate/${name}?worker=${workerId}`);
  if (!response.ok) throw new Error(`gate ${name}: ${response.status}`);
};

const Reply = HumanResponseEvent<{ response: string }>;

class Survey extends Workflow<{ questions: string[] }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async ask(ctx: Context, ev: StartEvent<{ questions: string[] }>) {
    const answers: string[] = [];
    for (const [i, prefix] of ev.questions.entries()) {
      const answer = await ctx.waitForEvent(Reply, { waiterEvent: new InputRequiredEvent({ prefix }) });
      answers.push(`${prefix} ${answer.response}`);
      // Work between two questions (a write somewhere, say): done once, and done again if a worker died in it.
      if (i < ev.questions.length - 1) await ctx.once(`record-${i + 1}`, () => pass(`answered-${i + 1}`), { rerunUnfinished: true });
    }
    return new StopEvent({ result: answers.join(" / ") });
  }
}

const worker = await DbosWorker.start({
  database,
  workflows: { survey: new Survey({ timeout: 60 }) },
  workerId,
  pollingInterval: 100,
  connections: 3,
});
process.on("SIGTERM", () => {
  void worker.stop().then(() => process.exit(0));
});
process.stdout.write("ready\n");
