/**
 * A run holds the events sent into it that nothing has taken yet (no step takes their type, or
 * none waits for them now): in memory, and in every save of its context. A client may not send
 * such events without end: past the server's limit (`maxPendingEvents`) one gets 429 saying the
 * limit and what to do, and nothing is done with it, while those accepted before stay, and an
 * event the run takes at once (the answer it waits for) is still taken.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { ConfigurationError } from "../../src/core/errors.ts";
import { Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import { MemorySessionStore } from "../../src/sessions/memory-store.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { startServer } from "./server-fixtures.ts";

/** An event a client may send that no step takes. */
class Note extends Event<{ text: string }> {}

/** Asks which plan; ends with the answer and how many notes it was sent. */
class Plan extends Workflow<object, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async ask(ctx: Context) {
    const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: "Which plan?" }) });
    return new StopEvent({ result: answer.response });
  }
}

class Review extends HumanResponseEvent<{ approved: boolean }> {}

/** Takes reviews one at a time, and never finishes the first: the others queue for it. */
class SlowReviews extends Workflow<object, string> {
  @step({ accepts: [StartEvent], emits: [InputRequiredEvent] })
  async start() {
    return new InputRequiredEvent({ prefix: "Reviews, please." });
  }

  @step({ accepts: [Review], emits: [StopEvent] })
  async review(): Promise<StopEvent<string>> {
    return new Promise<never>(() => {});
  }
}

let limited: WorkflowServer;
let limitedUrl: string;
let server: WorkflowServer;
let url: string;
let byBytes: WorkflowServer;
let byBytesUrl: string;
beforeAll(async () => {
  ({ server: limited, url: limitedUrl } = await startServer({
    maxPendingEvents: 3,
    workflows: { plan: { workflow: new Plan({ timeout: null }), events: [Note] }, reviews: new SlowReviews({ timeout: null }) },
  }));
  ({ server, url } = await startServer({ workflows: { plan: { workflow: new Plan({ timeout: null }), events: [Note] } } }));
  ({ server: byBytes, url: byBytesUrl } = await startServer({
    maxPendingEventBytes: 200,
    workflows: { plan: { workflow: new Plan({ timeout: null }), events: [Note] }, reviews: new SlowReviews({ timeout: null }) },
  }));
});
afterAll(async () => {
  await limited.close();
  await server.close();
  await byBytes.close();
});

const send = (base: string, id: string, type: string, data: object) =>
  fetch(`${base}/api/handlers/${id}/events`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ type, data }) });

async function asked(client: WorkflowClient, id: string): Promise<void> {
  for await (const ev of client.streamEvents(id)) if (ev.type === "InputRequiredEvent") return;
  throw new Error("the run ended without asking");
}

const refusal = (id: string, limit: number) => ({
  status: 429,
  code: "too_many_pending_events",
  message: `Handler ${id} holds ${limit} events sent in that it has not taken yet, the server's limit (maxPendingEvents): it takes no more until it has taken some. Nothing was done with this one. Send only the events the run waits for (GET /api/handlers/${id} lists them in waitingFor), once it asks for them.`,
});

describe("events sent into a waiting run that nothing takes", () => {
  it("are refused with 429 past the limit; those accepted stay, and the answer the run waits for is still taken", async () => {
    const client = new WorkflowClient({ baseUrl: limitedUrl });
    const { id } = await client.start("plan", {});
    await asked(client, id);
    for (const text of ["one", "two", "three"]) expect((await send(limitedUrl, id, "Note", { text })).status).toBe(202);
    const over = await send(limitedUrl, id, "Note", { text: "four" });
    expect({ status: over.status, ...((await over.json()) as { error: object }).error }).toEqual(refusal(id, 3));
    // The three are kept in the run's saved context, the fourth is not.
    const context = JSON.stringify(await client.getContext(id));
    for (const text of ["one", "two", "three"]) expect(context).toContain(`{"type":"Note","data":{"text":"${text}"}}`);
    expect(context).not.toContain('"four"');
    // An answer the run takes at once adds nothing it holds: it is taken, and the run ends.
    expect((await send(limitedUrl, id, "HumanResponseEvent", { response: "pro" })).status).toBe(202);
    expect(await client.wait(id)).toMatchObject({ status: "succeeded", result: "pro" });
    const events = ((await (await fetch(`${limitedUrl}/api/handlers/${id}/events?format=json`)).json()) as { events: StreamedEvent[] }).events;
    expect(
      events.filter((ev) => ev.type === "EventReceivedEvent").map((ev) => (ev.data.data as { text?: string; response?: string }).text ?? ev.data.data),
    ).toEqual(["one", "two", "three", { response: "pro" }]);
  });

  it("queued for a busy step that takes them count too: past the limit one gets 429", async () => {
    const client = new WorkflowClient({ baseUrl: limitedUrl });
    const { id } = await client.start("reviews", {});
    await asked(client, id);
    // The first starts the step; the next three wait for its worker, up to the limit; a fifth is refused.
    for (let i = 0; i < 4; i++) expect((await send(limitedUrl, id, "Review", { approved: true })).status).toBe(202);
    const over = await send(limitedUrl, id, "Review", { approved: true });
    expect({ status: over.status, ...((await over.json()) as { error: object }).error }).toEqual(refusal(id, 3));
    expect((await client.getContext(id)) as unknown).toMatchObject({ run: { queued: { review: [{}, {}, {}] } } });
    await client.cancel(id);
  });

  it("are bounded by default at 100", async () => {
    const client = new WorkflowClient({ baseUrl: url });
    const { id } = await client.start("plan", {});
    await asked(client, id);
    for (let i = 0; i < 100; i++) expect((await send(url, id, "Note", { text: String(i) })).status).toBe(202);
    const over = await send(url, id, "Note", { text: "one too many" });
    expect({ status: over.status, ...((await over.json()) as { error: object }).error }).toEqual(refusal(id, 100));
    await client.cancel(id);
  });

  it("have a limit that must be a whole number > 0", () => {
    for (const maxPendingEvents of [0, 1.5, -1, Number.NaN])
      expect(() => new WorkflowServer({ workflows: { plan: new Plan({ timeout: null }) }, store: "memory:", maxPendingEvents })).toThrow(ConfigurationError);
  });
});

/** The bytes an event counts for: its JSON text as a save of the run writes it. */
const bytesOf = (type: string, data: object) => Buffer.byteLength(JSON.stringify({ type, data }));

const bytesRefusal = (id: string, held: number, size: number, limit: number) => ({
  status: 429,
  code: "too_many_pending_event_bytes",
  message: `Handler ${id} holds ${held} bytes of events sent in that it has not taken yet; this one (${size} bytes as JSON) would take that past the server's limit of ${limit} bytes (maxPendingEventBytes), so it takes no more until it has taken some. Nothing was done with this one. Send only the events the run waits for (GET /api/handlers/${id} lists them in waitingFor), once it asks for them, and keep large data out of events a run holds.`,
});

describe("the bytes of events sent into a run that nothing takes", () => {
  it("are bounded: one past the limit gets 429; those accepted stay, and an answer the run takes at once is taken whatever its size", async () => {
    const client = new WorkflowClient({ baseUrl: byBytesUrl });
    const { id } = await client.start("plan", {});
    await asked(client, id);
    const note = (c: string) => ({ text: c.repeat(60) });
    expect(bytesOf("Note", note("a"))).toBe(94);
    for (const c of ["a", "b"]) expect((await send(byBytesUrl, id, "Note", note(c))).status).toBe(202);
    const over = await send(byBytesUrl, id, "Note", note("c"));
    expect({ status: over.status, ...((await over.json()) as { error: object }).error }).toEqual(bytesRefusal(id, 188, 94, 200));
    const context = JSON.stringify(await client.getContext(id));
    for (const c of ["a", "b"]) expect(context).toContain(JSON.stringify({ type: "Note", data: note(c) }));
    expect(context).not.toContain("ccc");
    // The answer the run waits for is five times the limit: taken at once, it is held by nothing.
    const response = "yes".repeat(333);
    expect(bytesOf("HumanResponseEvent", { response })).toBeGreaterThan(1000);
    expect((await send(byBytesUrl, id, "HumanResponseEvent", { response })).status).toBe(202);
    expect(await client.wait(id)).toMatchObject({ status: "succeeded", result: response });
  });

  it("queued for a busy step count too", async () => {
    const client = new WorkflowClient({ baseUrl: byBytesUrl });
    const { id } = await client.start("reviews", {});
    await asked(client, id);
    const size = bytesOf("Review", { approved: true });
    expect(size).toBe(42);
    // The first starts the step; four wait for its worker (168 bytes); a fifth would make 210.
    for (let i = 0; i < 5; i++) expect((await send(byBytesUrl, id, "Review", { approved: true })).status).toBe(202);
    const over = await send(byBytesUrl, id, "Review", { approved: true });
    expect({ status: over.status, ...((await over.json()) as { error: object }).error }).toEqual(bytesRefusal(id, 4 * size, size, 200));
    expect((await client.getContext(id)) as unknown).toMatchObject({ run: { queued: { review: [{}, {}, {}, {}] } } });
    await client.cancel(id);
  });

  it("are bounded by default at 1 MiB, well before 100 events of the largest body", async () => {
    const client = new WorkflowClient({ baseUrl: url });
    const { id } = await client.start("plan", {});
    await asked(client, id);
    const note = (c: string) => ({ text: c.repeat(300_000) });
    const size = bytesOf("Note", note("a"));
    for (const c of ["a", "b", "c"]) expect((await send(url, id, "Note", note(c))).status).toBe(202);
    const over = await send(url, id, "Note", note("d"));
    expect({ status: over.status, ...((await over.json()) as { error: object }).error }).toEqual(bytesRefusal(id, 3 * size, size, 1024 * 1024));
    await client.cancel(id);
  });

  it("count those a server restarted on the store brings back", async () => {
    const store = new MemorySessionStore();
    const options = { maxPendingEventBytes: 200, workflows: { plan: { workflow: new Plan({ timeout: null }), events: [Note] } }, store };
    const first = await startServer(options);
    const note = (c: string) => ({ text: c.repeat(60) });
    let id: string;
    try {
      const client = new WorkflowClient({ baseUrl: first.url });
      ({ id } = await client.start("plan", {}));
      await asked(client, id);
      for (const c of ["a", "b"]) expect((await send(first.url, id, "Note", note(c))).status).toBe(202);
    } finally {
      await first.server.close();
    }
    const next = await startServer(options);
    try {
      const over = await send(next.url, id, "Note", note("c"));
      expect({ status: over.status, ...((await over.json()) as { error: object }).error }).toEqual(bytesRefusal(id, 188, 94, 200));
      await new WorkflowClient({ baseUrl: next.url }).cancel(id);
    } finally {
      await next.server.close();
    }
  });

  it("have a limit that must be a whole number > 0", () => {
    for (const maxPendingEventBytes of [0, 1.5, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => new WorkflowServer({ workflows: { plan: new Plan({ timeout: null }) }, store: "memory:", maxPendingEventBytes })).toThrow(
        /^maxPendingEventBytes is how many bytes of events sent into a run it may hold untaken, a whole number > 0/,
      );
  });
});
