/**
 * A DBOS worker process for the tests of steps that ask several questions:
 * `node --import tsx dbos-questions-worker-child.ts DATABASE_URL WORKER_ID GATE_BASE_URL`.
 * Its workflow `survey` asks the questions of its input one after the other in one step
 * execution; between two questions it records the answer with `ctx.once`, whose work first
 * passes the gate `answered-N` (N: the question answered, from 1): that is where a test
 * kills it. Its workflow `intake` asks a name, sends a `Badge` to a step that prints it (gate
 * `print`, in `ctx.once`) and whose `Printed` a third step reports (gate `notify`), passes the
 * gates `reserve` then `between` (each in `ctx.once`), and asks a colour: a test holds them to
 * kill it between the questions after other steps have finished (and been checkpointed).
 * Prints "ready" once it takes runs; SIGTERM stops it cleanly.
 */
import { DbosWorker } from "../../src/dbos/index.ts";
import { Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
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

class Badge extends Event<{ name: string }> {}
class Printed extends Event<{ name: string }> {}

class Intake extends Workflow<{}, string> {
  @step({ accepts: [StartEvent], emits: [Badge, StopEvent] })
  async ask(ctx: Context) {
    const name = await ctx.waitForEvent(Reply, { waiterEvent: new InputRequiredEvent({ prefix: "Name?" }) });
    ctx.sendEvent(new Badge({ name: name.response }));
    await ctx.once("reserve", () => pass("reserve"));
    await ctx.once("confirm", () => pass("between"), { rerunUnfinished: true });
    const colour = await ctx.waitForEvent(Reply, { waiterEvent: new InputRequiredEvent({ prefix: "Colour?" }) });
    return new StopEvent({ result: `${name.response} likes ${colour.response}` });
  }

  @step({ accepts: [Badge], emits: [Printed] })
  async badge(ctx: Context, ev: Badge) {
    await ctx.once("print", () => pass("print"));
    return new Printed({ name: ev.name });
  }

  @step({ accepts: [Printed], emits: [] })
  async notify(_ctx: Context, _ev: Printed) {
    await pass("notify"); // no ctx.once: every execution passes
  }
}

const worker = await DbosWorker.start({
  database,
  // badge and notify are a side branch that ends nowhere: the graph checks would refuse it.
  workflows: { survey: new Survey({ timeout: 60 }), intake: new Intake({ timeout: 60, validate: false }) },
  workerId,
  pollingInterval: 100,
  connections: 3,
});
process.on("SIGTERM", () => {
  void worker.stop().then(() => process.exit(0));
});
process.stdout.write("ready\n");
