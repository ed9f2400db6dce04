/**
 * A handler's events over HTTP: Server-Sent Events for browsers, NDJSON for programs, both
 * from any offset, both following the run until it ends. A reader that goes away only stops
 * reading: the run goes on.
 */
import type { Context } from "hono";
import { stream, streamSSE } from "hono/streaming";
import type { StreamedEvent } from "../client/types.ts";
import type { HandlerRegistry } from "./handler-registry.ts";
import type { ServedHandler } from "./served-handler.ts";

/** Writes the events after `after` with `write`, following the run; says how the reading ended. */
async function follow(
  registry: HandlerRegistry,
  served: ServedHandler,
  after: number,
  write: (ev: StreamedEvent) => Promise<unknown>,
  signal: AbortSignal,
): Promise<"ended" | "aborted" | "closing"> {
  served.readers++;
  try {
    let next = after;
    for (;;) {
      const events = await registry.events(served);
      while (next < served.visibleCount && !signal.aborted) {
        await write(events[next] as StreamedEvent);
        next++;
      }
      if (signal.aborted) return "aborted";
      if (served.finished && next >= served.visibleCount) return "ended";
      if (registry.closing) return "closing";
      // Another server runs it: its events are read from the store as they are saved.
      if (served.heldBy !== undefined) {
        if (!(await registry.refresh(served, signal))) return "closing";
        continue;
      }
      await served.changed(signal);
    }
  } finally {
    served.readers--;
  }
}

/** `text/event-stream`: `id` is the event's seq, `event` its type; an `end` event closes a finished run's stream. */
export function sseResponse(c: Context, registry: HandlerRegistry, served: ServedHandler, after: number, heartbeatMs: number): Response {
  c.header("X-Accel-Buffering", "no");
  return streamSSE(c, async (sse) => {
    const aborted = new AbortController();
    sse.onAbort(() => aborted.abort());
    const heartbeat = setInterval(() => void sse.write(": ping\n\n").catch(() => aborted.abort()), heartbeatMs);
    try {
      const how = await follow(registry, served, after, (ev) => sse.writeSSE({ id: String(ev.seq), event: ev.type, data: JSON.stringify(ev) }), aborted.signal);
      if (how === "ended") await sse.writeSSE({ event: "end", data: JSON.stringify({ end: true, status: served.state.status }) });
    } finally {
      clearInterval(heartbeat);
    }
  });
}

/**
 * `application/x-ndjson`: one event per line, then `{ "end": true, "status": … }` once the run
 * has ended; an empty line every `heartbeatMs` (NDJSON readers skip empty lines), so that
 * proxies keep the stream open and a client can tell a quiet run from a dead connection.
 */
export function ndjsonResponse(c: Context, registry: HandlerRegistry, served: ServedHandler, after: number, heartbeatMs: number): Response {
  c.header("Content-Type", "application/x-ndjson; charset=utf-8");
  c.header("Cache-Control", "no-cache");
  c.header("X-Accel-Buffering", "no");
  return stream(c, async (out) => {
    const aborted = new AbortController();
    out.onAbort(() => aborted.abort());
    const heartbeat = setInterval(() => void out.write("\n").catch(() => aborted.abort()), heartbeatMs);
    try {
      const how = await follow(registry, served, after, (ev) => out.write(`${JSON.stringify(ev)}\n`), aborted.signal);
      if (how === "ended") await out.write(`${JSON.stringify({ end: true, status: served.state.status })}\n`);
    } finally {
      clearInterval(heartbeat);
    }
  });
}
