/**
 * A run's events as the store keeps them: the newest in the run's record, the older ones as
 * messages. After a restart every event is there, in order, read from any offset (JSON,
 * NDJSON, and SSE resuming with Last-Event-ID); and a store written by a server before this
 * layout (test/fixtures/server-handlers-1, one message per event) still opens, its runs read
 * back and its waiting run continues.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { type Context, Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import { SqliteSessionStore } from "../../src/sessions/sqlite-store.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { firingAgent, sseFrames, startServer } from "./server-fixtures.ts";

const dir = mkdtempSync(join(tmpdir(), "stepflow-stored-events-"));
const open: WorkflowServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

class Tick extends Event<{ i: number; text: string }> {}

/** Writes `count` events of about 250 characters, asks whether to go on, then writes three more. */
class Ticker extends Workflow<{ count: number }, number> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async tick(ctx: Context, ev: StartEvent<{ count: number }>): Promise<StopEvent<number>> {
    for (let i = 0; i < ev.count; i++) ctx.writeEventToStream(new Tick({ i, text: `tick ${i} `.padEnd(200, ".") }));
    await ctx.waitForEvent(HumanResponseEvent, { waiterEvent: new InputRequiredEvent({ prefix: "Go on?" }) });
    for (let i = ev.count; i < ev.count + 3; i++) ctx.writeEventToStream(new Tick({ i, text: `tick ${i}` }));
    return new StopEvent({ result: ev.count + 3 });
  }
}

const fired: number[] = [];
/** The agent of test/fixtures/make-server-fixture.ts: asks to fire employee 7, then reports. */
const hr = () =>
  firingAgent(fired, (request) =>
    request.messages.some((m) => toolResultIdOf(m) !== undefined)
      ? { text: "Lawson has been let go." }
      : { toolCalls: [{ name: "fire_employee", input: { id: 7 } }] },
  );

async function serve(file: string): Promise<{ url: string; client: WorkflowClient }> {
  const { server, url } = await startServer({
    store: `sqlite:${file}`,
    workflows: { ticker: { workflow: new Ticker({ timeout: null }), events: [HumanResponseEvent] }, hr: hr() },
  });
  open.push(server);
  return { url, client: new WorkflowClient({ baseUrl: url }) };
}

async function stopAll(): Promise<void> {
  await Promise.all(open.splice(0).map((s) => s.close()));
}

/** Every event of a run, as JSON. */
async function allEvents(url: string, id: string): Promise<StreamedEvent[]> {
  return ((await (await fetch(`${url}/api/handlers/${id}/events?format=json`)).json()) as { events: StreamedEvent[] }).events;
}

/** Checks that a reader starting after the event `after` gets exactly the events after it, as SSE (Last-Event-ID), NDJSON and JSON. */
async function expectReadFrom(url: string, id: string, all: readonly StreamedEvent[], after: number): Promise<void> {
  const rest = all.slice(after);
  const sse = await fetch(`${url}/api/handlers/${id}/events`, { headers: { "Last-Event-ID": String(after) } });
  if (after === all.length) expect(sse.status, `SSE after ${after}`).toBe(204);
  else {
    const frames = sseFrames(await sse.text()).filter((f) => f.event !== "end");
    expect(
      frames.map((f) => JSON.parse(f.data) as StreamedEvent),
      `SSE after ${after}`,
    ).toEqual(rest);
  }
  const ndjson = (await (await fetch(`${url}/api/handlers/${id}/events?format=ndjson&after=${after}`)).text()).trim().split("\n");
  expect(
    ndjson.map((line) => JSON.parse(line) as unknown),
    `NDJSON after ${after}`,
  ).toEqual([...rest, { end: true, status: "succeeded" }]);
  const json = (await (await fetch(`${url}/api/handlers/${id}/events?format=json&after=${after}`)).json()) as { events: StreamedEvent[] };
  expect(json.events, `JSON after ${after}`).toEqual(rest);
}

async function question(client: WorkflowClient, id: string, type: string): Promise<StreamedEvent> {
  for await (const ev of client.streamEvents(id)) if (ev.type === type) return ev;
  throw new Error(`the run ended without ${type}`);
}

/** What the store holds for a run: how many events its record counts and keeps, and how many messages it has. */
async function storedLayout(file: string, id: string): Promise<{ format: string; events: number; tail: number; messages: number }> {
  const store = await SqliteSessionStore.open(file);
  try {
    const record = await store.load(`handler:${id}`, { newest: 0 });
    const snapshot = JSON.parse(record?.snapshot ?? "{}") as { format: string; events: number; tail?: unknown[] };
    return { format: snapshot.format, events: snapshot.events, tail: snapshot.tail?.length ?? 0, messages: record?.messageCount ?? 0 };
  } finally {
    await store.close();
  }
}

describe("a run's events in the store", () => {
  it("are all there after a restart, in order, read from any offset: those in messages and those in the run's record", { timeout: 120_000 }, async () => {
    const file = join(dir, "layout.db");
    const first = await serve(file);
    const started = await first.client.start("ticker", { count: 60 });
    await question(first.client, started.id, "InputRequiredEvent");
    await first.client.sendEvent(started.id, "HumanResponseEvent", { response: "yes" });
    expect(await first.client.wait(started.id)).toMatchObject({ status: "succeeded", result: 63 });
    const before = await allEvents(first.url, started.id);
    expect(before.map((e) => e.seq)).toEqual(before.map((_, i) => i + 1));
    expect(before.filter((e) => e.type.endsWith("Tick")).map((e) => e.data.i)).toEqual(Array.from({ length: 63 }, (_, i) => i));
    await stopAll();

    // The 60 long events went to a message when the run asked its question; the last ones are in its record.
    const layout = await storedLayout(file, started.id);
    expect(layout).toMatchObject({ format: "stepflow.handler/2", events: before.length });
    expect(layout.messages).toBeGreaterThan(0);
    expect(layout.tail).toBeGreaterThan(0);
    const inMessages = before.length - layout.tail;

    const second = await serve(file);
    const after = await allEvents(second.url, started.id);
    expect(after).toEqual(before);
    for (const offset of [0, 1, 30, inMessages - 1, inMessages, inMessages + 1, before.length - 1, before.length]) {
      await expectReadFrom(second.url, started.id, before, offset);
    }
    expect(await second.client.getHandler(started.id)).toMatchObject({ status: "succeeded", eventCount: before.length });
  });

  it("of a store written before this layout (one message per event) are read, and a waiting run continues", { timeout: 120_000 }, async () => {
    const fixture = join(import.meta.dirname, "../fixtures/server-handlers-1");
    const provenance = JSON.parse(readFileSync(join(fixture, "provenance.json"), "utf8")) as {
      handlers: { finished: string; waiting: string; waitingApprovalId: string };
      files: Record<string, string>;
    };
    expect(
      `sha256:${createHash("sha256")
        .update(readFileSync(join(fixture, "server.db")))
        .digest("hex")}`,
    ).toBe(provenance.files["server.db"]);
    const file = join(dir, "format-1.db");
    copyFileSync(join(fixture, "server.db"), file);
    const { finished, waiting, waitingApprovalId } = provenance.handlers;
    const old = await storedLayout(file, waiting);
    expect(old).toMatchObject({ format: "stepflow.handler/1", tail: 0 });

    const first = await serve(file);
    expect((await first.client.listHandlers()).map((h) => [h.id, h.status])).toEqual([
      [waiting, "waiting"],
      [finished, "succeeded"],
    ]);
    const done = await allEvents(first.url, finished);
    expect(done.map((e) => e.seq)).toEqual(done.map((_, i) => i + 1));
    expect(done.at(-1)).toMatchObject({ type: "RunEndedEvent", data: { status: "succeeded" } });
    expect(await first.client.getHandler(finished)).toMatchObject({ status: "succeeded", eventCount: done.length });
    for (const offset of [0, 5, done.length - 1]) await expectReadFrom(first.url, finished, done, offset);

    const held = await first.client.getHandler(waiting);
    expect(held.waitingFor.map((w) => w.data.approvalId)).toEqual([waitingApprovalId]);
    const firedBefore = fired.length;
    await first.client.approve(waiting, waitingApprovalId, true);
    expect(await first.client.wait(waiting)).toMatchObject({ status: "succeeded", result: { response: { content: "Lawson has been let go." } } });
    expect(fired.slice(firedBefore)).toEqual([7]);
    const resumed = await allEvents(first.url, waiting);
    expect(resumed.map((e) => e.seq)).toEqual(resumed.map((_, i) => i + 1));
    expect(resumed.filter((e) => e.type === "RunStartedEvent").map((e) => e.data.resumed)).toEqual([false, true]);
    await stopAll();

    // The continued run is written in the new layout from its next save on.
    const layout = await storedLayout(file, waiting);
    expect(layout).toMatchObject({ format: "stepflow.handler/2", events: resumed.length });
    // The old messages stay; the new events take fewer than one message each (a batch, or the record's tail).
    expect(layout.messages).toBeGreaterThanOrEqual(old.messages);
    expect(layout.messages - old.messages).toBeLessThan(resumed.length - old.messages);

    const second = await serve(file);
    expect(await allEvents(second.url, finished)).toEqual(done);
    expect(await allEvents(second.url, waiting)).toEqual(resumed);
    for (const offset of [0, old.messages - 1, old.messages, old.messages + 1, resumed.length - 1]) await expectReadFrom(second.url, waiting, resumed, offset);
  });
});
