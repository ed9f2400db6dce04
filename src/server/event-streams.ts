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
import { eventJson } from "./event-json.ts";

/** How a stream writes each event, and the end of a finished run's stream. */
interface Framing {
  readonly event: (ev: StreamedEvent) => string;
  readonly end: (served: ServedHandler) => string;
}

/** Up to this much text goes in one write: the events a reader has not seen go together, not one write each. */
const MAX_CHUNK = 64 * 1024;

/**
 * Writes the events after `after` with `write`, following the run, then the end once it has
 * ended (not when the reader went away or the server is closing). The events ready when the
 * reader gets to them go in one chunk (the end with the last): each write is a trip through
 * the response's streams and a system call, which a write per event made most of a stream's cost.
 */
async function follow(
  registry: HandlerRegistry,
  served: ServedHandler,
  after: number,
  framing: Framing,
  write: (text: string) => Promise<unknown>,
  signal: AbortSignal,
): Promise<void> {
  served.readers++;
  try {
    let next = after;
    let ended = false;
    for (;;) {
      const events = await registry.events(served);
      while (next < served.visibleCount && !signal.aborted) {
        let chunk = "";
        try {
          while (next < served.visibleCount && chunk.length < MAX_CHUNK) chunk += framing.event(events[next++] as StreamedEvent);
        } catch (error) {
          // An event that cannot be written ends the stream, after those before it.
          if (chunk !== "") await write(chunk);
          throw error;
        }
        if (served.endShown && next >= served.visibleCount) {
          chunk += framing.end(served);
          ended = true;
        }
        await write(chunk);
      }
      if (signal.aborted) return;
      if (served.endShown && next >= served.visibleCount) {
        if (!ended) await write(framing.end(served));
        return;
      }
      if (registry.closing) return;
      // Another server runs it: its events are read from the store as they are saved.
      if (served.heldBy !== undefined) {
        if (!(await registry.refresh(served, signal))) return;
        continue;
      }
      await served.changed(signal);
    }
  } finally {
    served.readers--;
  }
}

/**
 * An SSE message as Hono's `writeSSE` writes it (`event`, `data` a line each, `id`), made here
 * so that many go in one write; like `writeSSE`, a field that would break the framing throws.
 */
function sseMessage(event: string, data: string, id?: string): string {
  if (/[\r\n]/.test(event) || (id !== undefined && /[\r\n]/.test(id)))
    throw new Error(`${/[\r\n]/.test(event) ? "event" : "id"} must not contain "\\r" or "\\n"`);
  const lines = /[\r\n]/.test(data) ? data.split(/\r\n|\r|\n/).join("\ndata: ") : data;
  return `${event ? `event: ${event}\n` : ""}data: ${lines}\n${id !== undefined ? `id: ${id}\n` : ""}\n`;
}

const SSE_FRAMING: Framing = {
  event: (ev) => sseMessage(ev.type, eventJson(ev), String(ev.seq)),
  end: (served) => sseMessage("end", endJson(served)),
};

const NDJSON_FRAMING: Framing = {
  event: (ev) => `${eventJson(ev)}\n`,
  end: (served) => `${endJson(served)}\n`,
};

/** The end of a finished run's stream: its status, and `notSaved` when the store does not have it. */
function endJson(served: ServedHandler): string {
  const { notSaved } = served;
  return JSON.stringify(notSaved === undefined ? { end: true, status: served.state.status } : { end: true, status: served.state.status, notSaved });
}

/** `text/event-stream`: `id` is the event's seq, `event` its type; an `end` event closes a finished run's stream. */
export function sseResponse(c: Context, registry: HandlerRegistry, served: ServedHandler, after: number, heartbeatMs: number): Response {
  c.header("X-Accel-Buffering", "no");
  return streamSSE(c, async (sse) => {
    const aborted = new AbortController();
    sse.onAbort(() => aborted.abort());
    const heartbeat = setInterval(() => void sse.write(": ping\n\n").catch(() => aborted.abort()), heartbeatMs);
    try {
      await follow(registry, served, after, SSE_FRAMING, (text) => sse.write(text), aborted.signal);
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
      await follow(registry, served, after, NDJSON_FRAMING, (text) => out.write(text), aborted.signal);
    } finally {
      clearInterval(heartbeat);
    }
  });
}
