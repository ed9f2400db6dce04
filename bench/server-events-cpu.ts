/**
 * The server's CPU per event sent into a waiting run, in process (the app's `fetch` called with
 * Requests, no HTTP): `node --import tsx bench/server-events-cpu.ts ROOT [STORE] [PAD]` serves
 * ROOT's `WorkflowServer` on STORE (default `memory:`), starts 8 runs that wait for `Note`s for
 * ever (their store padded with PAD lines of 1,000 characters), sends each 100 events to warm up,
 * then 400 more, one after another per run, and prints the CPU time (all threads) and the wall
 * time per event. Run it once per checkout, alternating, for an A/B.
 *
 * MODE `held` (a fourth argument): the runs wait for another event, so every Note is held
 * untaken (in memory and in each save) and checked against the server's bounds on what a run
 * holds: 20 to warm up, then 79 more per run, under the default limit of 100.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Context, StartEvent as StartEventOf, StopEvent as StopEventOf } from "../src/index.ts";

const [root = ".", store = "memory:", padText = "0", mode = "taken"] = process.argv.slice(2);
const core = (await import(pathToFileURL(join(root, "src/index.ts")).href)) as typeof import("../src/index.ts");
const { WorkflowServer } = (await import(pathToFileURL(join(root, "src/server/index.ts")).href)) as typeof import("../src/server/index.ts");
const { Event, StartEvent, StopEvent, Workflow, step } = core;

class Note extends Event<{ i: number }> {}
class Go extends Event<object> {}
class Inbox extends Workflow<{ pad?: number }, number> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async read(ctx: Context, ev: StartEventOf<{ pad?: number }>): Promise<StopEventOf<number>> {
    if (ev.pad)
      await ctx.store.set(
        "history",
        Array.from({ length: ev.pad }, (_, i) => String(i).padEnd(1000, ".")),
      );
    for (;;) await ctx.waitForEvent(mode === "held" ? Go : Note);
  }
}

const server = new WorkflowServer({ workflows: { inbox: { workflow: new Inbox({ timeout: null }), events: [Note, Go] } }, store });
await server.ready();
const app = server.app;
async function post(path: string, body: unknown): Promise<{ id: string }> {
  const text = JSON.stringify(body);
  const res = await app.fetch(
    new Request(`http://127.0.0.1${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Length": String(text.length) },
      body: text,
    }),
  );
  const answer = (await res.json()) as { id: string };
  if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
}

const runs = await Promise.all(Array.from({ length: 8 }, () => post("/api/workflows/inbox/start", { input: { pad: Number(padText) } })));
// Each run waits for its first Note once its step has begun: sent before, a Note waits for it too.
async function send(count: number): Promise<void> {
  await Promise.all(
    runs.map(async ({ id }) => {
      for (let i = 0; i < count; i++) await post(`/api/handlers/${id}/events`, { type: "Note", data: { i } });
    }),
  );
}
await send(mode === "held" ? 20 : 100);
const EVENTS = mode === "held" ? 79 : 400;
const cpuBefore = process.cpuUsage();
const began = performance.now();
await send(EVENTS);
const cpu = process.cpuUsage(cpuBefore);
const events = EVENTS * runs.length;
console.log(
  JSON.stringify({
    root,
    store,
    pad: Number(padText),
    mode,
    cpuUsPerEvent: Math.round((cpu.user + cpu.system) / events),
    wallMsPerEvent: +((performance.now() - began) / EVENTS).toFixed(2),
  }),
);
await server.close();
process.exit(0);
