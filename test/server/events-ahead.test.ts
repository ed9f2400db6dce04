/**
 * A reader ahead of the run's log is told so. A server killed mid-run has streamed events it
 * never saved; the server that takes the run over goes on from its last save. While that run's
 * log stays shorter than what a reader has read (it waits, or is busy), resuming after the
 * reader's last seq would give heartbeats only: it gets 409 events_lost instead, in every format.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { WorkflowClient, WorkflowClientError } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { dyingStore } from "./dying-store.ts";
import { gated } from "./server-fixtures.ts";

const dir = mkdtempSync(join(tmpdir(), "stepflow-ahead-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The answer's status and JSON error; a stream (the answer before) is closed unread, as it would only bring heartbeats. */
const body = async (response: Response) => {
  if (response.headers.get("Content-Type")?.startsWith("application/json") !== true) {
    await response.body?.cancel();
    return { status: response.status, body: { error: { code: "", message: `a ${response.headers.get("Content-Type")} stream` } } };
  }
  return { status: response.status, body: (await response.json()) as { error: { code: string; message: string } } };
};
const lost = { status: 409, body: { error: { code: "events_lost", message: expect.stringContaining("Read its events again from the start (after=0)") } } };

describe("a reader ahead of the run's log", () => {
  it("gets 409 events_lost from the server that took the run over, in SSE, NDJSON and JSON, and the client throws it", { timeout: 60_000 }, async () => {
    const file = join(dir, "taken.db");
    const sqlite = await openSessionStore(`sqlite:${file}`);
    const dying = dyingStore(sqlite);
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const first = new WorkflowServer({ workflows: { plan: gated(gate) }, store: dying.store, onError: () => {} });
    const firstClient = new WorkflowClient({ baseUrl: (await first.listen({ port: 0 })).url });
    let server: WorkflowServer | undefined;
    try {
      const { id } = await firstClient.start("plan", {});
      // The reader sees the ticks the dying server streams but never saves.
      const seen: StreamedEvent[] = [];
      const reading = firstClient.streamEvents(id);
      for await (const ev of reading) if ((seen.push(ev), ev.type === "InputRequiredEvent")) break;
      // Answered (and saved), the server dies: the ticks it streams next are never saved.
      await firstClient.sendEvent(id, "HumanResponseEvent", { response: "pro" });
      dying.die();
      open();
      for await (const ev of firstClient.streamEvents(id, { after: seen.at(-1)?.seq ?? 0 })) {
        seen.push(ev);
        if (ev.type.endsWith("Tick") && (ev.data as { i: number }).i === 9) break;
      }
      await first.close();
      const last = seen.at(-1)?.seq ?? 0;

      // Restarted on the file, the run goes on from its last save, and waits at its gate (never opened here).
      server = new WorkflowServer({ workflows: { plan: gated(new Promise<void>(() => {})) }, store: `sqlite:${file}` });
      const url = (await server.listen({ port: 0 })).url;
      const info = (await (await fetch(`${url}/api/handlers/${id}`)).json()) as { status: string; eventCount: number };
      expect(info.status).toBe("running");
      expect(info.eventCount).toBeLessThan(last);

      expect(await body(await fetch(`${url}/api/handlers/${id}/events`, { headers: { Accept: "text/event-stream", "Last-Event-ID": String(last) } }))).toEqual(
        lost,
      );
      expect(await body(await fetch(`${url}/api/handlers/${id}/events?after=${last}`, { headers: { Accept: "application/x-ndjson" } }))).toEqual(lost);
      expect(await body(await fetch(`${url}/api/handlers/${id}/events?after=${last}&format=json`))).toEqual(lost);
      const message = (await body(await fetch(`${url}/api/handlers/${id}/events?after=${last}&format=ndjson`))).body.error.message;
      expect(message).toContain(`has ${info.eventCount} events, fewer than the ${last} read`);

      const error = await (async () => {
        for await (const _ of new WorkflowClient({ baseUrl: url }).streamEvents(id, { after: last })) {
          // nothing comes
        }
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkflowClientError);
      expect(error).toMatchObject({ status: 409, code: "events_lost" });

      // Where the log is, a reader is served as before.
      const from = await fetch(`${url}/api/handlers/${id}/events?after=${info.eventCount}&format=json`);
      expect(from.status).toBe(200);
    } finally {
      await first.close();
      await server?.close();
      await sqlite.close();
    }
  });

  it("of an ended run read from the store gets 409 too; at its end, the end", { timeout: 60_000 }, async () => {
    const file = join(dir, "ended.db");
    const first = new WorkflowServer({ workflows: { plan: gated(Promise.resolve()) }, store: `sqlite:${file}` });
    const client = new WorkflowClient({ baseUrl: (await first.listen({ port: 0 })).url });
    const { id } = await client.start("plan", {});
    for await (const ev of client.streamEvents(id)) if (ev.type === "InputRequiredEvent") break;
    await client.sendEvent(id, "HumanResponseEvent", { response: "pro" });
    for await (const ev of client.streamEvents(id)) if (ev.type === "InputRequiredEvent" && ev.data.prefix === "Sure?") break;
    await client.sendEvent(id, "HumanResponseEvent", {});
    const { eventCount } = await client.wait(id);
    await first.close();
    const server = new WorkflowServer({ workflows: { plan: gated(Promise.resolve()) }, store: `sqlite:${file}` });
    const url = (await server.listen({ port: 0 })).url;
    try {
      expect(await body(await fetch(`${url}/api/handlers/${id}/events?after=${eventCount + 1}&format=ndjson`))).toEqual(lost);
      expect(await (await fetch(`${url}/api/handlers/${id}/events?after=${eventCount}&format=ndjson`)).text()).toBe('{"end":true,"status":"succeeded"}\n');
    } finally {
      await server.close();
    }
  });
});
