/**
 * A reader that stops reading an event stream: how much the server queues for it. A run writes
 * EVENTS events of 1 KB; a raw socket asks for its NDJSON stream, reads the headers, then reads
 * nothing for HOLD ms; the server's socket for it is sampled: bytes handed to the socket
 * (bytesWritten, which counts what is still queued) and bytes queued in Node (writableLength).
 * Without backpressure both would reach the whole run (EVENTS KB); with it they stop at what the
 * kernel's buffers hold. Then the reader reads to the end, to show the run was all there.
 *
 * Run: npx tsx bench/slow-reader.ts [EVENTS=20000] [HOLD=2000]
 */
import { connect, type Socket } from "node:net";
import { serve } from "@hono/node-server";
import { Event, StartEvent, StopEvent, Workflow, step } from "../src/index.ts";
import type { Context } from "../src/index.ts";
import { WorkflowServer } from "../src/server/workflow-server.ts";

const EVENTS = Number(process.argv[2] ?? 20_000);
const HOLD = Number(process.argv[3] ?? 2000);

class Chunk extends Event<{ text: string }> {}
class Chatty extends Workflow<object, number> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async talk(ctx: Context) {
    const text = "x".repeat(1000);
    for (let i = 0; i < EVENTS; i++) ctx.writeEventToStream(new Chunk({ text }));
    return new StopEvent({ result: EVENTS });
  }
}

const server = new WorkflowServer({ workflows: { chatty: new Chatty({ timeout: null }) }, store: "memory:" });
await server.ready();
const sockets: Socket[] = [];
const http = serve({ fetch: server.app.fetch, port: 0, hostname: "127.0.0.1" });
http.on("connection", (socket: Socket) => sockets.push(socket));
await new Promise((resolve) => http.once("listening", resolve));
const port = (http.address() as { port: number }).port;
const base = `http://127.0.0.1:${port}`;
const started = (await (
  await fetch(`${base}/api/workflows/chatty/run`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"input":{}}' })
).json()) as { id: string };

const before = sockets.length;
const reader = connect(port, "127.0.0.1");
reader.write(`GET /api/handlers/${started.id}/events?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/x-ndjson\r\n\r\n`);
let received = 0;
await new Promise<void>((resolve) =>
  reader.once("data", (chunk) => {
    received += chunk.length;
    reader.pause();
    resolve();
  }),
);
const serverSide = sockets[before] as Socket;
const samples: string[] = [];
for (let t = 0; t <= HOLD; t += HOLD / 4) {
  await new Promise((r) => setTimeout(r, HOLD / 4));
  samples.push(
    `${Math.round(t + HOLD / 4)} ms: handed ${(serverSide.bytesWritten / 1024).toFixed(0)} KB, queued in Node ${(serverSide.writableLength / 1024).toFixed(0)} KB`,
  );
}
reader.on("data", (chunk) => (received += chunk.length));
reader.resume();
await new Promise((resolve) => reader.once("end", resolve).once("close", resolve));
console.log(`run: ${EVENTS} events of 1 KB (${((EVENTS * 1000) / 1024).toFixed(0)} KB of text)`);
for (const line of samples) console.log(`reader paused, ${line}`);
console.log(`then read to the end: ${(received / 1024).toFixed(0)} KB received`);
reader.destroy();
http.close();
await server.close();
