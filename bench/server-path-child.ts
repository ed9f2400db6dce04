/**
 * One side of the request-path benchmark, in a process of its own:
 * `node --import tsx --expose-gc bench/server-path-child.ts ROOT MODE STORE`. MODE `stepflow`
 * serves a one-step workflow with ROOT's `WorkflowServer` on STORE (`POST
 * /api/workflows/echo/run`); MODE `hono` is the floor: bare Hono on `@hono/node-server`
 * awaiting the same workflow's `run()` at the same path. Both also serve `ticks`, a run that
 * writes 100 events to its stream: `WorkflowServer` at `POST /api/workflows/ticks/start` then
 * `GET /api/handlers/:id/events`, Hono at `POST /ticks/sse`, its `streamSSE` writing each event
 * of `handler.streamEvents()` as it comes. Prints its URL; answers an IPC
 * "heap" message with the heap in use after a full GC.
 */
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

let url: string;
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
  url = await new Promise<string>((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(`http://127.0.0.1:${info.port}`));
    void server;
  });
} else {
  const { WorkflowServer } = (await import(pathToFileURL(join(root, "src/server/index.ts")).href)) as ServerModule;
  const server = new WorkflowServer({ workflows: { echo, ticks }, store });
  url = (await server.listen({ port: 0 })).url;
}
process.on("message", (message) => {
  if (message !== "heap") return;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  process.send?.({ heap: process.memoryUsage().heapUsed });
});
process.stdout.write(`${url}\n`);
