/**
 * A DBOS worker of the chaos script (`bench/dbos-chaos.ts`):
 * `node --import tsx bench/dbos-chaos-worker.ts DATABASE_URL WORKER_ID API_URL TAKEOVER_AFTER`.
 * Its workflows reach the chaos script's side-effect API, which counts what they do:
 * - `agent`: a model (`POST /model`, one logical call per reply) calls `update_record`, a
 *   data-changing call (`POST /effect`, with the call's Idempotency-Key; the tool says nothing
 *   of being idempotent, so a call cut short is reported as of unknown outcome, not made
 *   again), then answers;
 * - `approval`: the same, the call approved (or not) by the script from its own process;
 * - `steps`: four plain steps, the third notifying once (`ctx.once("notify")`, no key).
 * Session turns run `agent` on a stored conversation. Prints how long it took to load and to
 * start (`timing: …`), then "ready"; SIGTERM stops it.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import { z } from "zod";
import { type Context, Event, StartEvent, StopEvent, Workflow, step } from "../src/index.ts";
import { DbosWorker } from "../src/dbos/index.ts";
import { ScriptedLLM } from "../src/llm/scripted-llm.ts";
import { tool } from "../src/tools/tool.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";

// Imports are evaluated before this line runs: the time since the process started is node's, the loader's and the imports'.
const loaded = performance.now();
const [database, workerId, api, takeoverAfter] = process.argv.slice(2) as [string, string, string, string];

/** Sends `body` to the API; a refused connection (the script itself is fine) is an error of the step, run again by its retries. */
async function post(path: string, body: object, key?: string): Promise<void> {
  const response = await fetch(`${api}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-worker": `${workerId}:${process.pid}`, ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
}

const text = (m: ChatMessage) => (typeof m.content === "string" ? m.content : "");
/** The job's tag, from the newest user message that names one ("job TAG: …"). */
const tagOf = (messages: ChatMessage[]) =>
  messages
    .filter((m) => m.role === "user")
    .map((m) => /^job (\S+):/.exec(text(m))?.[1])
    .filter((t) => t !== undefined)
    .at(-1) ?? "untagged";

/** A model that makes one logical call per reply (the job and how many tool results it has read), counted by the API. */
class CountedLLM extends ScriptedLLM {
  protected override async reply(messages: ChatMessage[], tools: string[]) {
    const tag = tagOf(messages);
    const results = messages.filter((m) => m.options && "toolResult" in m.options).length;
    // The agent's word for a call in doubt that it did not make again: counted, to show the faults reached that path.
    const unknownOutcome = results > 0 && /^The call to \S+ was started before/.test(text(messages.at(-1) as ChatMessage));
    await post("/model", { logical: `${tag}:reply-${results}`, ...(unknownOutcome ? { unknownOutcome: true } : {}) });
    return super.reply(messages, tools);
  }
}

const update = tool({
  name: "update_record",
  description: "Changes the job's record.",
  parameters: z.object({ tag: z.string() }),
  execute: async ({ tag }, _bound, call) => {
    await post("/effect", { logical: `${tag}:update`, kind: "update" }, call?.idempotencyKey);
    return `updated ${tag}`;
  },
});

const model = () =>
  new CountedLLM((request) => {
    const last = request.messages.at(-1);
    if (last && last.options && "toolResult" in last.options) return { text: "Done." };
    return { toolCalls: [{ id: "update-1", name: "update_record", input: { tag: tagOf(request.messages) } }] };
  });

class Tick extends Event<{ n: number }> {}

/** Four plain steps; the third notifies once (at most once: no key for the API to deduplicate by). */
class FourSteps extends Workflow<{ tag: string }, string> {
  @step({ accepts: [StartEvent], emits: [Tick] })
  async first(ctx: Context, ev: StartEvent<{ tag: string }>) {
    await ctx.store.set("tag", ev.tag);
    return new Tick({ n: 1 });
  }

  @step({ accepts: [Tick], emits: [Tick, StopEvent] })
  async next(ctx: Context, ev: Tick) {
    const tag = (await ctx.store.get("tag")) as string;
    await new Promise((resolve) => setTimeout(resolve, 50)); // work that takes a while
    if (ev.n === 2) await ctx.once("notify", () => post("/effect", { logical: `${tag}:notify`, kind: "notify" }));
    return ev.n < 3 ? new Tick({ n: ev.n + 1 }) : new StopEvent({ result: `steps ${tag}` });
  }
}

// The effect's call answers at once: 10 s bounds it, and so the wait of a call in doubt for the result of an attempt that
// may still be making it (the tool timeout and 5 s), after which the model reads that its outcome is unknown.
const toolTimeout = 10;

const worker = await DbosWorker.start({
  database,
  workflows: {
    agent: new FunctionCallingAgent({ llm: model(), tools: [update], timeout: 120, toolTimeout }),
    approval: new FunctionCallingAgent({ llm: model(), tools: [update], needsApproval: ["update_record"], timeout: 120, toolTimeout }),
    steps: new FourSteps({ timeout: 120 }),
  },
  workerId,
  workerConcurrency: 8,
  pollingInterval: 200,
  connections: 6,
  takeoverAfter: Number(takeoverAfter),
  streamEvents: false, // questions (approval requests) are streamed all the same
  onTakeover: ({ workerId: dead, runs }) => process.stdout.write(`took over ${dead}: ${runs.length} runs\n`),
  onLeaseLost: ({ epoch, takenOverBy }) => process.stdout.write(`lost lease: epoch ${epoch} to ${takenOverBy ?? "-"}\n`),
});
process.on("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
process.stdout.write(`timing: loaded ${(loaded / 1000).toFixed(1)} s, DbosWorker.start ${((performance.now() - loaded) / 1000).toFixed(1)} s\n`);
process.stdout.write("ready\n");
