/**
 * The page's side of the server's HTTP API (same origin, relative URLs): JSON calls, and the
 * event stream of a run read with fetch (not EventSource, which cannot send a bearer token),
 * resumed after the last event seen when the connection drops.
 */

// The server's JSON shapes are the client's: one definition, which the page only reads.
import type { Checkpoint, HandlerInfo, StreamedEvent, WorkflowInfo } from "../../client/types.ts";
export type { Checkpoint, HandlerInfo, HandlerStatus, StreamedEvent, WorkflowInfo } from "../../client/types.ts";

/** The server answered with an error (`{ error: { code, message } }`). */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = "stepflow.token";

/** Asked for when the server wants a bearer token; the page's shell sets how (a dialog). */
let askToken: () => Promise<string | undefined> = async () => undefined;

/** How the page asks the user for the server's token after a 401. */
export function onTokenNeeded(ask: () => Promise<string | undefined>): void {
  askToken = ask;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const token = sessionStorage.getItem(TOKEN_KEY);
  // The page names itself: the server records it (as the client's own word) with an approval decision.
  const named = { ...extra, "x-stepflow-client": "web page" };
  return token ? { ...named, authorization: `Bearer ${token}` } : named;
}

/** A fetch that asks for the token once on 401 and tries again with it. */
async function send(path: string, init: RequestInit = {}, extra: Record<string, string> = {}): Promise<Response> {
  let response = await fetch(path, { ...init, headers: headers(extra) });
  if (response.status === 401) {
    const token = await askToken();
    if (token) {
      sessionStorage.setItem(TOKEN_KEY, token);
      response = await fetch(path, { ...init, headers: headers(extra) });
    }
  }
  return response;
}

/** Tries of a call after the first, when the server could not be reached or a gateway said it is away. */
const RETRIES = 5;
const GATEWAY_DOWN: ReadonlySet<number> = new Set([502, 503, 504]);

/** Milliseconds between the tries of an action whose key another server is answering (the server's `Retry-After`). */
const IN_USE_WAIT_MS = 1000;

/** Whether a 409 says the action's key is being answered by another server (`idempotency_key_in_use`). */
async function inUse(response: Response): Promise<boolean> {
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: { code?: unknown } } | undefined;
  return body?.error?.code === "idempotency_key_in_use";
}

/** A new `Idempotency-Key`: a random UUID (`crypto.randomUUID` is missing on a page served over plain http). */
function newKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A call's JSON answer. A POST is one user action: it carries one `Idempotency-Key` over its
 * tries, so that when its answer was lost (a dropped connection, a proxy's 502 while the server
 * restarts) and it is sent again, the server does it once and answers as the first time.
 */
async function json<T>(path: string, init: RequestInit = {}): Promise<T> {
  const extra: Record<string, string> =
    init.body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" };
  if (init.method === "POST") extra["idempotency-key"] = newKey();
  let response: Response | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      response = await send(path, init, extra);
      // Another server sharing the store is still answering this action: its answer comes once it has one.
      if (response.status === 409 && (await inUse(response))) {
        attempt--;
        await new Promise((resolve) => setTimeout(resolve, IN_USE_WAIT_MS));
        continue;
      }
      if (!GATEWAY_DOWN.has(response.status) || attempt >= RETRIES) break;
    } catch (error) {
      if (init.signal?.aborted || attempt >= RETRIES) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  if (!response.ok) {
    const message = (body as { error?: { message?: string } } | undefined)?.error?.message ?? (typeof body === "string" && body ? body : response.statusText);
    throw new ApiError(response.status, `${response.status}: ${message}`);
  }
  return body as T;
}

const id = encodeURIComponent;

export const api = {
  workflows: () => json<{ workflows: WorkflowInfo[] }>("api/workflows").then((r) => r.workflows),
  /** Starts a run; `continueFrom` (a finished run's id) continues its conversation. */
  start: (workflow: string, input: unknown, continueFrom?: string) =>
    json<HandlerInfo>(`api/workflows/${id(workflow)}/start`, { method: "POST", body: JSON.stringify(continueFrom ? { input, continueFrom } : { input }) }),
  handlers: (limit = 50) => json<{ handlers: HandlerInfo[] }>(`api/handlers?limit=${limit}`).then((r) => r.handlers),
  handler: (handlerId: string) => json<HandlerInfo>(`api/handlers/${id(handlerId)}`),
  events: (handlerId: string) => json<{ events: StreamedEvent[] }>(`api/handlers/${id(handlerId)}/events?format=json`).then((r) => r.events),
  context: (handlerId: string) => json<unknown>(`api/handlers/${id(handlerId)}/context`),
  approve: (handlerId: string, approvalId: string, approved: boolean, reason?: string) =>
    json<HandlerInfo>(`api/handlers/${id(handlerId)}/approvals`, {
      method: "POST",
      body: JSON.stringify(reason ? { approvalId, approved, reason } : { approvalId, approved }),
    }),
  /** Sends an event into a run: a human's answer (`HumanResponseEvent` with `{ response }`), say. */
  sendEvent: (handlerId: string, type: string, data: Record<string, unknown>) =>
    json<unknown>(`api/handlers/${id(handlerId)}/events`, { method: "POST", body: JSON.stringify({ type, data }) }),
  cancel: (handlerId: string) => json<HandlerInfo>(`api/handlers/${id(handlerId)}/cancel`, { method: "POST" }),
  /** The points of an ended run a fork can start from. */
  checkpoints: (handlerId: string) => json<{ checkpoints: Checkpoint[] }>(`api/handlers/${id(handlerId)}/checkpoints`).then((r) => r.checkpoints),
  /** Starts a new run from the checkpoint `at` of an ended run. */
  fork: (handlerId: string, at: number) => json<HandlerInfo>(`api/handlers/${id(handlerId)}/fork`, { method: "POST", body: JSON.stringify({ at }) }),
};

/**
 * Calls `onEvent` for each event of a run, from after `after`, until the run ends (resolves
 * with its final status) or `signal` aborts. A dropped connection (a server restarting, say)
 * is resumed from the last event seen, so no event is missed or shown twice: the stream is
 * asked again from that event, which must come back the same. A server that stopped before it
 * saved its last events, and a run that went on from its last save, rewrite them: then, or
 * when the server says so (409 `events_lost`), it throws an {@link ApiError} saying so, rather
 * than skip what the run did since.
 */
export async function followEvents(handlerId: string, onEvent: (event: StreamedEvent) => void, signal?: AbortSignal, after = 0): Promise<string | undefined> {
  let last = after;
  let lastEvent: StreamedEvent | undefined;
  // About a minute of tries in all: long enough for a server to restart.
  for (let attempt = 0; attempt < 12; attempt++) {
    try {
      let check = lastEvent;
      const from = check ? check.seq - 1 : last;
      const response = await send(`api/handlers/${id(handlerId)}/events?after=${from}`, { signal }, { accept: "text/event-stream" });
      // 204: nothing after `from` in an ended run; 409: the server knows the reader is ahead of its log.
      if (response.status === 204 && !check) return undefined;
      if (response.status === 409 || response.status === 204) throw eventsLost(handlerId);
      if (!response.ok || !response.body) throw new ApiError(response.status, `${response.status}: the event stream could not be opened.`);
      for await (const frame of sseFrames(response.body)) {
        if (check) {
          const seen = check;
          check = undefined;
          const event = frame.event === "end" ? undefined : (JSON.parse(frame.data) as StreamedEvent);
          if (event?.seq === seen.seq && event.type === seen.type && event.at === seen.at) continue;
          throw eventsLost(handlerId);
        }
        if (frame.event === "end") return (JSON.parse(frame.data) as { status?: string }).status;
        const event = JSON.parse(frame.data) as StreamedEvent;
        if (event.seq <= last) continue;
        last = event.seq;
        lastEvent = event;
        attempt = 0;
        onEvent(event);
      }
    } catch (error) {
      if (signal?.aborted || error instanceof ApiError) throw error;
    }
    // The connection dropped: try again after a pause that grows, from the last event seen.
    await new Promise((resolve) => setTimeout(resolve, Math.min(8000, 250 * 2 ** attempt)));
  }
  throw new Error("The event stream kept breaking off; reload the page to try again.");
}

/** The error for a run whose events are no longer the ones shown. */
function eventsLost(handlerId: string): ApiError {
  return new ApiError(
    409,
    `The events of run ${handlerId} changed while the page was away: the server running it stopped before it saved its last events, and the run went on from its last save, so what is shown here is not what it did. Open the run again to see its events as they are.`,
  );
}

/** The frames of a server-sent event stream (`event`, `data`, `id`); comments are skipped. */
async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string; id?: string }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let frame: { event: string; data: string[]; id?: string } = { event: "message", data: [] };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      // A "\r" that ends the buffer may be the first half of "\r\n": wait for what follows.
      while ((newline = buffer.search(/\r\n|\n|\r(?!$)/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (line === "") {
          if (frame.data.length > 0) yield { event: frame.event, data: frame.data.join("\n"), ...(frame.id === undefined ? {} : { id: frame.id }) };
          frame = { event: "message", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") frame.event = value;
        else if (field === "data") frame.data.push(value);
        else if (field === "id") frame.id = value;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
