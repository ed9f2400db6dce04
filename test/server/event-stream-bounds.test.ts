/** Event streams that stay alive while a run is quiet, and a client that bounds what it waits for and reads. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient, WorkflowClientError } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { ndjsonLines } from "../../src/client/ndjson-lines.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { firingAgent, startServer } from "./server-fixtures.ts";

let server: WorkflowServer;
let url: string;

beforeAll(async () => {
  // A heartbeat every 10 ms: the tests wait for heartbeats to come, never for time to pass.
  ({ server, url } = await startServer({ workflows: { hr: { workflow: firingAgent([]) } }, heartbeat: 0.01 }));
});
afterAll(() => server.close());

/** Reads `body` until `done(text so far)`, then lets it go. */
async function readUntil(body: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  try {
    while (!done(text)) {
      const { value, done: ended } = await reader.read();
      if (ended) throw new Error(`the stream ended first: ${JSON.stringify(text)}`);
      text += value;
    }
    return text;
  } finally {
    void reader.cancel();
  }
}

/** A run of `hr` waiting for a human's approval, and the request's event. */
async function waitingRun(client: WorkflowClient): Promise<{ id: string; request: StreamedEvent }> {
  const { id } = await client.start("hr", { input: "Fire Lawson" });
  for await (const ev of client.streamEvents(id)) if (ev.type === "agent.ToolApprovalRequestEvent") return { id, request: ev };
  throw new Error("the run ended without asking");
}

/** A fetch that answers every event-stream request with `bodies()`'s next body, recording the paths asked. */
function fakeStreams(bodies: () => ReadableStream<Uint8Array>): { fetch: typeof fetch; asked: string[] } {
  const asked: string[] = [];
  const fake: typeof fetch = async (input) => {
    asked.push(new URL(String(input)).pathname + new URL(String(input)).search);
    return new Response(bodies(), { status: 200, headers: { "Content-Type": "application/x-ndjson" } });
  };
  return { fetch: fake, asked };
}

const encoder = new TextEncoder();
const event = (seq: number, data: Record<string, unknown> = {}) => `${JSON.stringify({ seq, type: "demo.Event", data, at: "2026-01-01T00:00:00.000Z" })}\n`;

describe("heartbeats on the server's event streams", () => {
  it("sends an empty NDJSON line and an SSE comment while a run waits, and the client skips them", async () => {
    const client = new WorkflowClient({ baseUrl: url });
    const { id, request } = await waitingRun(client);
    // After its question the run says it waits for input; from then on only heartbeats come.
    let idle: StreamedEvent | undefined;
    for await (const ev of client.streamEvents(id)) {
      if (ev.type !== "WorkflowIdleEvent") continue;
      idle = ev;
      break;
    }
    const ndjson = await fetch(`${url}/api/handlers/${id}/events?after=${idle?.seq}`, { headers: { Accept: "application/x-ndjson" } });
    expect(await readUntil(ndjson.body as ReadableStream<Uint8Array>, (text) => text.includes("\n\n") || text.startsWith("\n"))).toMatch(/^\n+$/);
    const sse = await fetch(`${url}/api/handlers/${id}/events?after=${idle?.seq}`, { headers: { Accept: "text/event-stream" } });
    expect(await readUntil(sse.body as ReadableStream<Uint8Array>, (text) => text.includes(": ping\n\n"))).toMatch(/^(: ping\n\n)+$/);

    // The client reads through the heartbeats: the same events as the server's list of them.
    const followed: StreamedEvent[] = [];
    const following = (async () => {
      for await (const ev of client.streamEvents(id)) followed.push(ev);
    })();
    await client.approve(id, String(request.data.approvalId), true);
    await following;
    const listed = (await (await fetch(`${url}/api/handlers/${id}/events?format=json`)).json()) as { events: StreamedEvent[] };
    expect(followed).toEqual(listed.events);
    expect(followed.at(-1)?.type).toBe("RunEndedEvent");
  });

  it("refuses a heartbeat that is not a number of seconds", async () => {
    await expect(startServer({ heartbeat: 0 })).rejects.toThrow("heartbeat is in seconds, a number > 0 and ≤ 3600 (the default is 15); got 0.");
  });
});

describe("the client's idle timeout", () => {
  it("takes a stream that goes silent for dead: reconnects after the last event, then fails with code idle_timeout", async () => {
    // The first connection sends one event, then nothing, for ever; the next sends nothing at all.
    let connections = 0;
    const { fetch: silent, asked } = fakeStreams(
      () => new ReadableStream({ start: (controller) => (++connections === 1 ? controller.enqueue(encoder.encode(event(1))) : undefined) }),
    );
    const client = new WorkflowClient({ baseUrl: "http://127.0.0.1:9", fetch: silent, idleTimeout: 0.05, reconnects: 1 });
    const seen: number[] = [];
    const error = await (async () => {
      for await (const ev of client.streamEvents("h1")) seen.push(ev.seq);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([1]);
    // Asked again from the last event received (it must come first, the same, before the rest).
    expect(asked).toEqual(["/api/handlers/h1/events?after=0", "/api/handlers/h1/events?after=0"]);
    expect(error).toBeInstanceOf(WorkflowClientError);
    expect(error).toMatchObject({ status: 0, code: "idle_timeout" });
    expect((error as Error).message).toMatch(/^The event stream of handler h1 sent nothing for 0\.05 s \(idleTimeout\), 2 times in a row: /);
  });

  it("keeps a quiet stream that sends heartbeats, and refuses an idle timeout that is not one", async () => {
    // Heartbeats on every read, then the end: each read gets something, so the stream is alive however slow the machine.
    const lines = ["\n", event(1), "\n", "\n", `${JSON.stringify({ end: true, status: "succeeded" })}\n`];
    const { fetch: beating } = fakeStreams(() => {
      const left = [...lines];
      return new ReadableStream({ pull: (controller) => controller.enqueue(encoder.encode(left.shift() ?? "")) });
    });
    const client = new WorkflowClient({ baseUrl: "http://127.0.0.1:9", fetch: beating, idleTimeout: 30 });
    const seen: number[] = [];
    const stream = client.streamEvents("h1");
    for await (const ev of stream) seen.push(ev.seq);
    expect(seen).toEqual([1]);
    expect(() => new WorkflowClient({ baseUrl: "", idleTimeout: -1 })).toThrow(
      "WorkflowClient: idleTimeout is in seconds, a number > 0 (the default is 60), or null for none; got -1.",
    );
  });
});

describe("the client's NDJSON reader", () => {
  it("reads a 20 MB event sent in 16 KB pieces in linear time (it took minutes) and refuses one over maxLineChars at once", async () => {
    const blob = "x".repeat(20 * 1024 * 1024);
    const text = `${event(1, { blob })}${JSON.stringify({ end: true, status: "succeeded" })}\n`;
    const { fetch: big } = fakeStreams(() => {
      let at = 0;
      return new ReadableStream({
        pull(controller) {
          if (at >= text.length) return controller.close();
          controller.enqueue(encoder.encode(text.slice(at, (at += 16 * 1024))));
        },
      });
    });
    const events: StreamedEvent[] = [];
    for await (const ev of new WorkflowClient({ baseUrl: "http://127.0.0.1:9", fetch: big, maxLineChars: 32 * 1024 * 1024 }).streamEvents("h1"))
      events.push(ev);
    expect(events.map((ev) => [ev.seq, (ev.data.blob as string).length])).toEqual([[1, blob.length]]);

    const { fetch: again, asked } = fakeStreams(
      () => new ReadableStream({ start: (controller) => controller.enqueue(encoder.encode(event(1, { blob: "y".repeat(5000) }))) }),
    );
    const error = await (async () => {
      for await (const _ of new WorkflowClient({ baseUrl: "http://127.0.0.1:9", fetch: again, maxLineChars: 1000 }).streamEvents("h1"));
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "line_too_long",
      message: "An event of handler h1 after event 0 is longer than 1000 characters (maxLineChars); raise maxLineChars of the WorkflowClient to read it.",
    });
    expect(asked.length).toBe(1); // not asked again: the same event would come
  }, 60_000);

  it("splits lines across chunks, several in one chunk, and a last one without its newline left waiting", () => {
    const split = ndjsonLines(10, (max) => new Error(`over ${max}`));
    expect(split('{"a":1}\n{"b"')).toEqual(['{"a":1}']);
    expect(split(":2}\n\n{}\n{")).toEqual(['{"b":2}', "", "{}"]);
    expect(split("}")).toEqual([]);
    expect(split("\n")).toEqual(["{}"]);
    expect(() => split("x".repeat(11))).toThrow("over 10");
    expect(() => ndjsonLines(10, (max) => new Error(`over ${max}`))(`${"x".repeat(6)}`)).not.toThrow();
  });
});

describe("a stream picked up after a dropped connection", () => {
  const line = (seq: number, type: string, second: number) => `${JSON.stringify({ seq, type, data: {}, at: `2026-01-01T00:00:0${second}.000Z` })}\n`;
  /** A body that sends `text` and then breaks, as a dropped connection does. */
  const dropping = (text: string) => {
    let sent = false;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(new TypeError("terminated"));
        sent = true;
        controller.enqueue(encoder.encode(text));
      },
    });
  };
  const whole = (text: string) => new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(encoder.encode(text)), c.close()) });
  const END = '{"end":true,"status":"succeeded"}\n';
  const read = async (client: WorkflowClient) => {
    const seqs: number[] = [];
    const error = await (async () => {
      for await (const ev of client.streamEvents("h")) seqs.push(ev.seq);
    })().catch((e: unknown) => e);
    return { seqs, error };
  };

  it("asks from the last event received, and takes it once when the server still has it", async () => {
    const bodies = [dropping(line(1, "A", 1) + line(2, "B", 2) + line(3, "C", 3)), whole(line(3, "C", 3) + line(4, "D", 4) + END)];
    const { fetch: fake, asked } = fakeStreams(() => bodies.shift() as ReadableStream<Uint8Array>);
    expect(await read(new WorkflowClient({ baseUrl: "http://127.0.0.1:9", fetch: fake }))).toEqual({ seqs: [1, 2, 3, 4], error: undefined });
    expect(asked).toEqual(["/api/handlers/h/events?after=0", "/api/handlers/h/events?after=2"]);
  });

  it("fails with events_lost when the log was rewritten (a server that crashed before saving), or ends before that event", async () => {
    for (const second of [line(3, "RunStartedEvent", 9) + line(4, "D", 9) + END, END]) {
      const bodies = [dropping(line(1, "A", 1) + line(2, "B", 2) + line(3, "C", 3)), whole(second)];
      const { fetch: fake } = fakeStreams(() => bodies.shift() as ReadableStream<Uint8Array>);
      const { seqs, error } = await read(new WorkflowClient({ baseUrl: "http://127.0.0.1:9", fetch: fake }));
      expect(seqs).toEqual([1, 2, 3]);
      expect(error).toMatchObject({ name: "WorkflowClientError", code: "events_lost" });
      expect((error as Error).message).toContain("event 3 was C at 2026-01-01T00:00:03.000Z");
    }
  });
});
