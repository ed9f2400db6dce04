/**
 * What the server keeps and reads back: finished runs leave its memory and are read from the
 * store on request (one by one, their events, and in lists), and a handler in the store that
 * cannot be read is reported by id and skipped, without stopping the server from starting.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { HandlerInfo } from "../../src/client/types.ts";
import { MemorySessionStore } from "../../src/sessions/memory-store.ts";
import { CorruptHandlerError } from "../../src/server/handler-store.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { FullDiskStore } from "../support/full-disk-store.ts";
import { QUESTION, startServer } from "./server-fixtures.ts";

const open: WorkflowServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const run = async (url: string): Promise<HandlerInfo> => {
  const response = await fetch(`${url}/api/workflows/agent/run`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ input: { input: QUESTION } }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as HandlerInfo;
};

describe("finished runs", () => {
  it("leave the server's memory, and are read back from the store: one by one, their events, their context, and in lists", { timeout: 120_000 }, async () => {
    const store = new MemorySessionStore();
    const { server, url } = await startServer({ store });
    open.push(server);
    const client = new WorkflowClient({ baseUrl: url });
    const runs: HandlerInfo[] = [];
    for (let i = 0; i < 30; i++) runs.push(await run(url));
    expect(runs.every((r) => r.status === "succeeded")).toBe(true);
    // Nothing of the 30 finished runs is held: the store has them.
    expect(server.stats()).toEqual({ live: 0, handlers: 0, readers: 0, waiters: 0 });

    const first = runs[0] as HandlerInfo;
    expect(await client.getHandler(first.id)).toEqual(first);
    const events = [];
    for await (const ev of client.streamEvents(first.id)) events.push(ev);
    expect(events).toHaveLength(first.eventCount);
    expect(events.at(-1)).toMatchObject({ type: "RunEndedEvent", data: { status: "succeeded" } });
    expect(await client.getContext(first.id)).toMatchObject({ version: expect.any(Number) });

    const listed = await client.listHandlers({ limit: 10 });
    expect(listed.map((h) => h.id)).toEqual(
      runs
        .slice(-10)
        .reverse()
        .map((r) => r.id),
    );
    expect(await client.listHandlers({ limit: 100, status: ["succeeded"] })).toHaveLength(30);
    // A conversation's next turn continues from a finished run the server no longer holds.
    const next = await fetch(`${url}/api/workflows/agent/run`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ input: { input: "And again?" }, continueFrom: first.id }),
    });
    expect(next.status).toBe(200);
    expect(server.stats().handlers).toBe(0);
  });
});

describe("a run whose end cannot be saved", () => {
  it("answers run-and-wait 500 not_saved, reports the failure, and is still shown by this server", { timeout: 60_000 }, async () => {
    const reported: [string, unknown][] = [];
    const { server, url } = await startServer({ store: new FullDiskStore(), onError: (error, id) => reported.push([id, error]) });
    open.push(server);

    const response = await fetch(`${url}/api/workflows/agent/run`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ input: { input: QUESTION } }),
    });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("not_saved");
    const id = /^Handler (\S+) ended/.exec(body.error.message)?.[1] ?? "";
    expect(body.error.message).toBe(
      `Handler ${id} ended (succeeded) but could not be saved to the store: SQLITE_FULL: database or disk is full. The store does not have its result or events (this server shows them at GET /api/handlers/${id} until it stops). Check the store (free disk space, the database reachable), then start the run again.`,
    );
    expect(reported.map(([handler, error]) => [handler, String(error)])).toEqual([[id, "Error: SQLITE_FULL: database or disk is full"]]);
    // The result is not lost while this server runs: it shows the run as it ended.
    expect(await new WorkflowClient({ baseUrl: url }).getHandler(id)).toMatchObject({
      status: "succeeded",
      result: { response: { content: expect.stringContaining("1386528") } },
    });
  });
});

describe("a stored handler that cannot be read", () => {
  it("is reported by id and skipped: the server starts, and serves the others", { timeout: 60_000 }, async () => {
    const store = new MemorySessionStore();
    const { server: before, url: beforeUrl } = await startServer({ store });
    const good = await run(beforeUrl);
    await before.close();
    await store.save("handler:0bad-row", { expectedVersion: 0, snapshot: '{"format":"stepflow.handler/1","state":', append: [] });
    await store.save("handler:0bad-shape", { expectedVersion: 0, snapshot: '{"format":"stepflow.handler/1","state":null}', append: [] });
    // A run saved by a later stepflow sharing the store.
    const later = { id: "0bad-later", workflow: "agent", status: "succeeded", input: {}, createdAt: "", updatedAt: "", waitingFor: [] };
    await store.save("handler:0bad-later", { expectedVersion: 0, snapshot: JSON.stringify({ format: "stepflow.handler/3", state: later }), append: [] });

    const reported: [string, unknown][] = [];
    const { server, url } = await startServer({ store, onError: (error, id) => reported.push([id, error]) });
    open.push(server);
    expect(reported.map(([id]) => id).sort()).toEqual(["0bad-later", "0bad-row", "0bad-shape"]);
    expect(String(reported.find(([id]) => id === "0bad-later")?.[1])).toContain(
      'format is "stepflow.handler/3", not "stepflow.handler/2", written by a later stepflow: upgrade this server',
    );
    const [, error] = reported.find(([id]) => id === "0bad-row") ?? [];
    expect(error).toBeInstanceOf(CorruptHandlerError);
    expect((error as Error).message).toMatch(/^The stored handler 0bad-row cannot be read \(its snapshot is not JSON: .*\); it was skipped\./);

    const client = new WorkflowClient({ baseUrl: url });
    expect(await client.getHandler(good.id)).toMatchObject({ status: "succeeded" });
    expect((await client.listHandlers()).map((h) => h.id)).toEqual([good.id]);
    const bad = await fetch(`${url}/api/handlers/0bad-row`);
    expect(bad.status).toBe(500);
    expect(await bad.json()).toEqual({ error: { code: "corrupt_handler", message: expect.stringContaining("The stored handler 0bad-row cannot be read") } });
  });

  it("whose events are fewer than its record counts answers corrupt_handler for them, not a shorter log", { timeout: 60_000 }, async () => {
    const store = new MemorySessionStore();
    const state = { id: "0short-log", workflow: "agent", status: "succeeded", input: {}, createdAt: "", updatedAt: "", waitingFor: [] };
    const event = { seq: 1, type: "StopEvent", data: { result: 1 }, at: "2026-01-01T00:00:00.000Z" };
    await store.save("handler:0short-log", {
      expectedVersion: 0,
      snapshot: JSON.stringify({ format: "stepflow.handler/2", state, events: 3, tail: [event] }),
      append: [],
    });
    const { server, url } = await startServer({ store });
    open.push(server);

    const response = await fetch(`${url}/api/handlers/0short-log/events?format=json`);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: { code: "corrupt_handler", message: expect.stringContaining("The stored handler 0short-log cannot be read (it records 3 events, and holds 1)") },
    });
  });
});
