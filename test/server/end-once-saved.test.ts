/**
 * A run's end is shown once the store has it: while its last save is in flight, readers of its
 * events get no `end` and `GET` says `running`; an end the store refused is shown with
 * `notSaved`, the store's error, in the handler and in the stream's end.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { HandlerInfo } from "../../src/client/types.ts";
import { MemorySessionStore } from "../../src/sessions/memory-store.ts";
import type { SessionSave } from "../../src/sessions/types.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { FullDiskStore, isEndOfRun } from "../support/full-disk-store.ts";
import { QUESTION, startServer } from "./server-fixtures.ts";

const open: WorkflowServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** Starts the offline agent's run; its handler as `start` answers it. */
async function start(url: string): Promise<HandlerInfo> {
  const response = await fetch(`${url}/api/workflows/agent/start`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ input: { input: QUESTION } }),
  });
  expect(response.status).toBe(202);
  return (await response.json()) as HandlerInfo;
}

/** Reads a handler's NDJSON event stream to its end; `onEnd` is called as the end line arrives. */
async function readStream(url: string, id: string, onEnd: () => void = () => {}): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${url}/api/handlers/${id}/events`, { headers: { Accept: "application/x-ndjson" } });
  if (!response.body) throw new Error(`The event stream of ${id} has no body (${response.status}).`);
  const lines: Record<string, unknown>[] = [];
  let text = "";
  for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n")) {
      const line = text.slice(0, at).trim();
      text = text.slice(at + 1);
      if (!line) continue;
      const item = JSON.parse(line) as Record<string, unknown>;
      if (item.end) onEnd();
      lines.push(item);
    }
  }
  return lines;
}

describe("a run's end", () => {
  it("reaches readers and GET only once the store has it", { timeout: 60_000 }, async () => {
    let endAsked!: () => void;
    const asked = new Promise<void>((resolve) => (endAsked = resolve));
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    // A store slow to take the run's end, as a busy database is.
    class SlowStore extends MemorySessionStore {
      override async save(id: string, save: SessionSave): Promise<number> {
        if (isEndOfRun(save)) {
          endAsked();
          await gate;
        }
        return super.save(id, save);
      }
    }
    const { server, url } = await startServer({ store: new SlowStore() });
    open.push(server);
    const client = new WorkflowClient({ baseUrl: url });
    const { id } = await start(url);
    let released = false;
    let endWhileHeld: boolean | undefined;
    const stream = readStream(url, id, () => (endWhileHeld = !released));

    await asked;
    try {
      // The run has ended; the store does not have its end yet.
      const during = await client.getHandler(id);
      expect(during.status).toBe("running");
      expect(during.result).toBeUndefined();
      // The events so far: all but the one that says how the run ended.
      const { events } = (await (await fetch(`${url}/api/handlers/${id}/events?format=json`)).json()) as { events: { type: string }[] };
      expect(events).toHaveLength(during.eventCount);
      expect(events.map((e) => e.type)).not.toContain("RunEndedEvent");
      expect((await client.listHandlers()).map((h) => [h.id, h.status])).toEqual([[id, "running"]]);
      const fork = await fetch(`${url}/api/handlers/${id}/fork`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      expect(fork.status).toBe(409);
      // An event sent now is refused without telling how the run ended: GET does not say it yet.
      const sent = await client.sendEvent(id, "agent.ToolApprovalEvent", { approvalId: "a1", approved: true }).catch((e: unknown) => e);
      expect(sent).toMatchObject({ status: 409, code: "handler_finished" });
      expect((sent as Error).message).toContain(`Handler ${id} is ending (its end is being saved); it takes no more events.`);
    } finally {
      released = true;
      letGo();
    }
    const lines = await stream;
    expect(endWhileHeld).toBe(false);
    expect(lines.at(-1)).toEqual({ end: true, status: "succeeded" });
    expect(lines.at(-2)).toMatchObject({ type: "RunEndedEvent", data: { status: "succeeded" } });
    const after = await client.getHandler(id);
    expect(after.eventCount).toBe(lines.length - 1);
    expect(after).toMatchObject({ status: "succeeded", result: { response: { content: expect.stringContaining("1386528") } } });
    expect(after.notSaved).toBeUndefined();
    const late = await client.sendEvent(id, "agent.ToolApprovalEvent", { approvalId: "a1", approved: true }).catch((e: unknown) => e);
    expect((late as Error).message).toContain(`Handler ${id} has ended (succeeded); it takes no more events.`);
  });

  it("that the store refused is shown with notSaved: in GET, in the stream's end, and by the client's wait", { timeout: 60_000 }, async () => {
    const { server, url } = await startServer({ store: new FullDiskStore(), onError: () => {} });
    open.push(server);
    const client = new WorkflowClient({ baseUrl: url });
    const { id } = await start(url);
    const lines = await readStream(url, id);
    const notSaved = `Handler ${id} ended (succeeded) but could not be saved to the store: SQLITE_FULL: database or disk is full. The store does not have its result or events (this server shows them at GET /api/handlers/${id} until it stops). Check the store (free disk space, the database reachable), then start the run again.`;
    expect(lines.at(-1)).toEqual({ end: true, status: "succeeded", notSaved });
    expect(await client.getHandler(id)).toMatchObject({ status: "succeeded", notSaved, result: { response: { content: expect.stringContaining("1386528") } } });
    expect((await client.wait(id)).notSaved).toBe(notSaved);
    // An SSE reader gets it too.
    const sse = await (await fetch(`${url}/api/handlers/${id}/events`)).text();
    expect(sse.trimEnd().split("\n").slice(-2)).toEqual(["event: end", `data: ${JSON.stringify({ end: true, status: "succeeded", notSaved })}`]);
  });

  it("that the store refused reaches readers even when onError throws", { timeout: 60_000 }, async () => {
    const { server, url } = await startServer({
      store: new FullDiskStore(),
      onError: () => {
        throw new Error("the alerting hook is down");
      },
    });
    open.push(server);
    const { id } = await start(url);
    const lines = await readStream(url, id);
    expect(lines.at(-1)).toMatchObject({ end: true, status: "succeeded", notSaved: expect.stringContaining("SQLITE_FULL") });
  });
});
