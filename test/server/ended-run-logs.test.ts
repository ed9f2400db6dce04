/**
 * The events of a run that has just ended, as its readers get them: what the store holds, over
 * JSON, SSE and NDJSON alike, and nothing once the run is gone from the store.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { HandlerInfo, StreamedEvent } from "../../src/client/types.ts";
import { MemorySessionStore } from "../../src/sessions/memory-store.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { QUESTION, sseFrames, startServer } from "./server-fixtures.ts";

const open: WorkflowServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe("the events of a run that has just ended", () => {
  it("are the store's, in every format, and are gone once the store has deleted the run", { timeout: 60_000 }, async () => {
    const store = new MemorySessionStore();
    const { server, url } = await startServer({ store });
    open.push(server);
    const response = await fetch(`${url}/api/workflows/agent/run`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ input: { input: QUESTION } }),
    });
    const ran = (await response.json()) as HandlerInfo;
    expect(ran.status).toBe("succeeded");
    // The store holds the older events in messages (one event, or an array of them each), the newest in the snapshot.
    const record = await store.load(`handler:${ran.id}`);
    const snapshot = JSON.parse(record?.snapshot ?? "{}") as { events?: number; tail?: StreamedEvent[] };
    const stored = [...(record?.messages ?? []).flatMap((m) => JSON.parse(m.json) as StreamedEvent | StreamedEvent[]), ...(snapshot.tail ?? [])];
    expect(snapshot.events).toBe(ran.eventCount);
    expect(stored).toHaveLength(ran.eventCount);

    const json = (await (await fetch(`${url}/api/handlers/${ran.id}/events?format=json`)).json()) as { events: StreamedEvent[] };
    expect(json.events).toEqual(stored);
    const ndjson = (await (await fetch(`${url}/api/handlers/${ran.id}/events?format=ndjson`)).text()).trim().split("\n");
    expect(ndjson.map((line) => JSON.parse(line) as unknown)).toEqual([...stored, { end: true, status: "succeeded" }]);
    const frames = sseFrames(await (await fetch(`${url}/api/handlers/${ran.id}/events`)).text());
    expect(frames.map((f) => [f.id, f.event, JSON.parse(f.data) as unknown])).toEqual([
      ...stored.map((ev) => [String(ev.seq), ev.type, ev]),
      [undefined, "end", { end: true, status: "succeeded" }],
    ]);

    await store.delete(`handler:${ran.id}`);
    const gone = await fetch(`${url}/api/handlers/${ran.id}/events`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe("handler_not_found");
  });
});
