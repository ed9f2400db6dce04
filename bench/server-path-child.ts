/**
 * One side of the request-path benchmark, in a process of its own:
 * `node --import tsx --expose-gc bench/server-path-child.ts ROOT MODE STORE`. MODE `stepflow`
 * serves a one-step workflow with ROOT's `WorkflowServer` on STORE (`POST
 * /api/workflows/echo/run`); MODE `hono` is the floor: bare Hono on `@hono/node-server`
 * awaiting the same workflow's `run()` at the same path. Both also serve `ticks`, a run that
 * writes 100 events to its stream: `WorkflowServer` at `POST /api/workflows/ticks/start` then
 * `GET /api/handlers/:id/events`, Hono at `POST /ticks/sse`, its `streamSSE` writing each event
 * of `handler.streamEvents()` as it comes. And `inbox`, a run that waits for `Note`s for ever:
 * `WorkflowServer` at `POST /api/workflows/inbox/start`, Hono at `POST /inbox/start`, then
 * both at `POST /api/handlers/:id/events`. Prints its URL; answers an IPC
 * "heap" message with the heap in use after a full GC, "used" with the CPU time the process has
 * used so far (µs, all threads), and `{ cpu: RUNS }` with the CPU time
 * (all threads) and the garbage collector's time per run-and-wait of RUNS runs driven in this
 * process through the app's `fetch` (no HTTP), 32 at a time.
 */
import { PerformanceObserver } from "node:perf_hooks";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [root = ".", mode = "stepflow", store = "memory:"] = process.argv.slice(2);
import type { Context, EventClass, StartEvent as StartEventOf, StopEvent as StopEventOf } from "../src/index.ts";

type Core = typeof import("../src/index.ts");
type ServerModule = typeof import("../src/server/index.ts");
const core = (await import(pathToFileURL(join(root, "src/index.ts")).href)) as Core;
const { Event, StartEvent, StopEvent, Workflow, eventTypeName, step } = core;

class Echo extends Workflow<{ n: number }, number> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async answer(_ctx: Context, ev: StartEventOf<{ n: number }>): Promise<StopEventOf<number>> {
    return new StopEvent({ result: ev.n + 1 });
  }
}
const echo = new Echo({ timeout: null });

class Tick extends Event<{ i: number }> {}
class Ticks extends Workflow<object, number> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async tick(ctx: Context): Promise<StopEventOf<number>> {
    for (let i = 0; i < 100; i++) ctx.writeEventToStream(new Tick({ i }));
    return new StopEvent({ result: 100 });
  }
}
const ticks = new Ticks({ timeout: null });

/** What a client sends into an `inbox` run, again and again: the run waits for the next one each time. */
class Note extends Event<{ i: number }> {}
/** Waits for `Note`s for ever; `pad` lines of 1,000 characters in its store make its context that much larger. */
class Inbox extends Workflow<{ pad?: number }, number> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async read(ctx: Context, ev: StartEventOf<{ pad?: number }>): Promise<StopEventOf<number>> {
    if (ev.pad)
      await ctx.store.set(
        "history",
        Array.from({ length: ev.pad }, (_, i) => String(i).padEnd(1000, ".")),
      );
    for (;;) await ctx.waitForEvent(Note);
  }
}
const inbox = new Inbox({ timeout: null });

let url: string;
let fetchApp: (request: Request) => Response | Promise<Response>;
if (mode === "hono") {
  const { Hono } = await import("hono");
  const { serve } = await import("@hono/node-server");
  const app = new Hono();
  app.post("/api/workflows/echo/run", async (c) => {
    const body = (await c.req.json()) as { input: { n: number } };
    const result = await echo.run(body.input);
    return c.json({ status: "succeeded", result }, 200);
  });
  const { streamSSE } = await import("hono/streaming");
  app.post("/ticks/sse", (c) =>
    streamSSE(c, async (sse) => {
      const handler = ticks.run({});
      let seq = 0;
      for await (const ev of handler.streamEvents()) {
        const type = eventTypeName(ev.constructor as EventClass);
        await sse.writeSSE({ id: String(seq), event: type, data: JSON.stringify({ seq: seq++, type, data: ev, at: new Date().toISOString() }) });
      }
      await handler;
      await sse.writeSSE({ event: "end", data: JSON.stringify({ end: true, status: "succeeded" }) });
    }),
  );
  // The floor of sending an event: the run in a map, the event sent into it, 202.
  const inboxRuns = new Map<string, { ctx: { sendEvent: (event: InstanceType<typeof Note>) => void } }>();
  app.post("/inbox/start", async (c) => {
    const body = (await c.req.json()) as { input: { pad?: number } };
    const id = String(inboxRuns.size);
    inboxRuns.set(id, inbox.run(body.input));
    return c.json({ id }, 202);
  });
  app.post("/api/handlers/:id/events", async (c) => {
    const body = (await c.req.json()) as { type: string; data: { i: number } };
    const run = inboxRuns.get(c.req.param("id"));
    if (!run || body.type !== "Note") return c.json({ error: "no such run or type" }, 404);
    run.ctx.sendEvent(new Note(body.data));
    return c.json({ accepted: true }, 202);
  });
  fetchApp = app.fetch;
  url = await new Promise<string>((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(`http://127.0.0.1:${info.port}`));
    void server;
  });
} else {
  const { WorkflowServer } = (await import(pathToFileURL(join(root, "src/server/index.ts")).href)) as ServerModule;
  const server = new WorkflowServer({ workflows: { echo, ticks, inbox: { workflow: inbox, events: [Note] } }, store });
  url = (await server.listen({ port: 0 })).url;
  fetchApp = server.app.fetch;
}

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ["gc"] });

/** `runs` run-and-waits through the app's `fetch`, 32 at a time: µs of CPU and of GC per run. */
async function cpu(runs: number): Promise<{ cpu: number; gc: number }> {
  const target = `${url}/api/workflows/echo/run`;
  let next = 0;
  const gcBefore = gcMs;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < runs) {
        const body = JSON.stringify({ input: { n: next++ } });
        const res = await fetchApp(
          new Request(target, { method: "POST", headers: { "Content-Type": "application/json", "Content-Length": String(body.length) }, body }),
        );
        if (res.status !== 200) throw new Error(`run-and-wait answered ${res.status}: ${await res.text()}`);
        await res.text();
      }
    }),
  );
  const used = process.cpuUsage(before);
  return { cpu: (used.user + used.system) / runs, gc: ((gcMs - gcBefore) * 1000) / runs };
}

// Counted by valgrind (bench/server-instructions.ts): so many runs in process, then exit.
const countRuns = Number(process.env.BENCH_SERVER_CHILD_RUNS ?? 0);
if (countRuns > 0) {
  await cpu(countRuns);
  process.exit(0);
}

process.on("message", (message) => {
  if (typeof message === "object" && message !== null && "cpu" in message) {
    void cpu(Number((message as { cpu: number }).cpu)).then((r) => process.send?.(r));
    return;
  }
  if (message === "used") {
    const { user, system } = process.cpuUsage();
    return void process.send?.({ used: user + system });
  }
  if (message !== "heap") return;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  process.send?.({ heap: process.memoryUsage().heapUsed });
});
process.stdout.write(`${url}\n`);
