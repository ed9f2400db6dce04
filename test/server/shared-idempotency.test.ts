/**
 * Two servers sharing one SQLite store behind a load balancer: a POST sent again with its
 * Idempotency-Key to the other server is answered once, whichever server it reaches, while the
 * first is still answering (409, then the answer), and after the first server died mid-answer
 * (the retry waits on the run it had started). The workflow's runs and the tool's calls are
 * counted: one each.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { HandlerInfo, StreamedEvent } from "../../src/client/types.ts";
import { StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import type { SessionStore } from "../../src/sessions/types.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import type { WorkflowServerOptions } from "../../src/server/workflow-server.ts";
import { dyingStore } from "./dying-store.ts";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import { firingAgent } from "./server-fixtures.ts";

const dir = mkdtempSync(join(tmpdir(), "stepflow-shared-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of open.splice(0).reverse()) await s.close();
});

/** The inputs each run of `Counted` was given, on whichever server. */
const runs: string[] = [];

/** Counts its runs, and answers with how many there were. */
class Counted extends Workflow<{ input: string }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async count(_ctx: unknown, ev: StartEvent<{ input: string }>): Promise<StopEvent<string>> {
    runs.push(ev.input);
    return new StopEvent({ result: `${ev.input} #${runs.length}` });
  }
}

async function serve(store: string | SessionStore, fired: number[], options: Partial<WorkflowServerOptions> = {}): Promise<string> {
  const server = new WorkflowServer({
    // The model asks to fire until it has the tool's result: the same on the server that takes a run over.
    workflows: {
      counted: new Counted({ timeout: null }),
      hr: firingAgent(fired, (request) =>
        request.messages.some((m) => toolResultIdOf(m) !== undefined)
          ? { text: "Lawson has been let go." }
          : { toolCalls: [{ name: "fire_employee", input: { id: 7 } }] },
      ),
    },
    store,
    onError: () => {},
    ...options,
  });
  open.push(server);
  return (await server.listen({ port: 0 })).url;
}

/** A POST with an Idempotency-Key: its status, JSON body, whether it was replayed, and its Retry-After. */
async function post(url: string, path: string, body: unknown, key: string) {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as HandlerInfo & { error?: { code: string; message: string } },
    replayed: response.headers.get("Idempotent-Replayed") === "true",
    retryAfter: response.headers.get("Retry-After"),
  };
}

async function approvalAsked(client: WorkflowClient, id: string): Promise<StreamedEvent> {
  for await (const ev of client.streamEvents(id)) if (ev.type === "agent.ToolApprovalRequestEvent") return ev;
  throw new Error("the run ended without asking");
}

/** The stored claim of `key` sent by the default principal, as the test reads it from the store. */
async function storedClaim(store: SessionStore, key: string): Promise<{ holder: string; handlerId?: string } | undefined> {
  const id = `idempotency:${createHash("sha256")
    .update(JSON.stringify(["local user", key]))
    .digest("hex")}`;
  const record = await store.load(id, { newest: 0 });
  return record && (JSON.parse(record.snapshot) as { holder: string; handlerId?: string });
}

describe("an Idempotency-Key on two servers sharing a store", () => {
  it("gets the same run-and-wait answer from the other server (replayed), runs once, and is refused with another body (422)", async () => {
    const store = `sqlite:${join(dir, "replay.db")}`;
    const [a, b] = [await serve(store, []), await serve(store, [])];
    const before = runs.length;
    const first = await post(a, "/api/workflows/counted/run", { input: { input: "one" } }, "run-1");
    expect(first).toMatchObject({ status: 200, replayed: false, body: { status: "succeeded" } });
    const again = await post(b, "/api/workflows/counted/run", { input: { input: "one" } }, "run-1");
    expect(again).toEqual({ ...first, replayed: true });
    expect(runs.length - before).toBe(1);
    const other = await post(b, "/api/workflows/counted/run", { input: { input: "two" } }, "run-1");
    expect(other).toMatchObject({ status: 422, body: { error: { code: "idempotency_key_reused" } } });
    expect(runs.length - before).toBe(1);
  });

  it("while the first server still answers: 409 idempotency_key_in_use with Retry-After on the other, then the first answer", { timeout: 60_000 }, async () => {
    const store = `sqlite:${join(dir, "in-use.db")}`;
    const fired: number[] = [];
    const [a, b] = [await serve(store, fired), await serve(store, fired)];
    const clientA = new WorkflowClient({ baseUrl: a });
    const first = post(a, "/api/workflows/hr/run", { input: { input: "Fire Lawson" } }, "fire-1");
    let id = "";
    await expect.poll(async () => (id = (await clientA.listHandlers({ workflow: "hr" }))[0]?.id ?? ""), { timeout: 30_000 }).not.toBe("");
    const asked = await approvalAsked(clientA, id);

    const busy = await post(b, "/api/workflows/hr/run", { input: { input: "Fire Lawson" } }, "fire-1");
    expect(busy).toMatchObject({ status: 409, retryAfter: "1", body: { error: { code: "idempotency_key_in_use" } } });
    expect(busy.body.error?.message).toContain("is still answering the first request sent with it");

    // The client library sends it again each second while it is in use, with the same key.
    const statuses: number[] = [];
    const viaB = new WorkflowClient({
      baseUrl: b,
      fetch: (input, init) => fetch(input, init).then((r) => (statuses.push(r.status), r)),
    }).run("hr", { input: "Fire Lawson" }, { idempotencyKey: "fire-1" });
    await expect.poll(() => statuses.includes(409), { timeout: 30_000 }).toBe(true);

    await clientA.approve(id, String(asked.data.approvalId), true);
    const answered = await first;
    expect(await viaB).toEqual(answered.body);
    expect(answered).toMatchObject({ status: 200, replayed: false, body: { id, status: "succeeded" } });
    expect(await post(b, "/api/workflows/hr/run", { input: { input: "Fire Lawson" } }, "fire-1")).toEqual({ ...answered, replayed: true });
    expect(fired).toEqual([7]);
    expect(await new WorkflowClient({ baseUrl: b }).listHandlers({ workflow: "hr" })).toHaveLength(1);
  });

  it(
    "after the first server died mid-answer: the other takes the claim over and waits on the run it had started; the tool runs once",
    { timeout: 60_000 },
    async () => {
      const file = join(dir, "dead.db");
      const sqlite = await openSessionStore(`sqlite:${file}`);
      open.push(sqlite);
      const dying = dyingStore(sqlite);
      const fired: number[] = [];
      const a = await serve(dying.store, fired);
      const serverA = open.at(-1);
      const b = await serve(`sqlite:${file}`, fired);
      const clientA = new WorkflowClient({ baseUrl: a });
      const body = { input: { input: "Fire Lawson" } };
      const lost = post(a, "/api/workflows/hr/run", body, "fire-2").catch((e: unknown) => e);
      let id = "";
      await expect.poll(async () => (id = (await clientA.listHandlers({ workflow: "hr" }))[0]?.id ?? ""), { timeout: 30_000 }).not.toBe("");
      await approvalAsked(clientA, id);
      // The claim names the run before the server dies (and the run is saved waiting for its approval).
      await expect.poll(async () => (await storedClaim(sqlite, "fire-2"))?.handlerId, { timeout: 30_000 }).toBe(id);
      dying.die();
      await serverA?.close(); // its process is gone: its leases and its claim are free
      // The server answered as it stopped: not with the run's end, so the key was let go with its run.
      expect(await lost).toMatchObject({
        status: 503,
        body: { error: { code: "closing", message: expect.stringContaining("Send the request again with the same Idempotency-Key") } },
      });

      const retry = post(b, "/api/workflows/hr/run", body, "fire-2");
      const clientB = new WorkflowClient({ baseUrl: b });
      let waiting: HandlerInfo | undefined;
      await expect.poll(async () => (waiting = await clientB.getHandler(id)).waitingFor.length, { timeout: 30_000 }).toBe(1);
      await clientB.approve(id, String(waiting?.waitingFor[0]?.data.approvalId), true);
      expect(await retry).toMatchObject({ status: 200, replayed: false, body: { id, status: "succeeded" } });
      expect(fired).toEqual([7]);
      expect(await clientB.listHandlers({ workflow: "hr" })).toHaveLength(1);
      expect(await post(b, "/api/workflows/hr/run", body, "fire-2")).toMatchObject({ status: 200, replayed: true, body: { id } });
    },
  );

  it("the client's retry, whose first answer a proxy lost, reaches the other server and gets the first run's answer", async () => {
    const store = `sqlite:${join(dir, "client.db")}`;
    const servers = [await serve(store, []), await serve(store, [])];
    // A balancer that sends the first request to one server and drops its answer, the next to the other.
    let requests = 0;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const n = requests++;
        const headers: Record<string, string> = {};
        for (const name of ["content-type", "idempotency-key", "accept"]) if (typeof req.headers[name] === "string") headers[name] = req.headers[name];
        void fetch(`${servers[n === 0 ? 0 : 1]}${req.url}`, {
          method: req.method ?? "GET",
          headers,
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        }).then(async (answer) => {
          const text = await answer.text();
          if (n === 0) return req.socket.destroy();
          const replayed = answer.headers.get("Idempotent-Replayed");
          res.writeHead(answer.status, { "Content-Type": "application/json", ...(replayed ? { "Idempotent-Replayed": replayed } : {}) }).end(text);
        });
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    open.push({ close: () => new Promise<void>((resolve) => proxy.close(() => resolve())) });
    const before = runs.length;
    const client = new WorkflowClient({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
    const done = await client.run("counted", { input: "via proxy" });
    expect(requests).toBe(2);
    expect(runs.slice(before)).toEqual(["via proxy"]);
    expect(done).toMatchObject({ status: "succeeded", result: `via proxy #${before + 1}` });
  });
});
