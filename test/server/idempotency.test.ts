/** A POST sent again with its Idempotency-Key (after a reset connection, say) is answered once: no second run, event or approval. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { HandlerInfo, StreamedEvent } from "../../src/client/types.ts";
import { IdempotencyKeys, keyedRequest } from "../../src/server/idempotency.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { ThreeQuestions, firingAgent, startServer } from "./server-fixtures.ts";

let server: WorkflowServer;
let url: string;
let client: WorkflowClient;
const fired: number[] = [];
beforeAll(async () => {
  ({ server, url } = await startServer({
    workflows: { three: { workflow: new ThreeQuestions({ timeout: null }) }, hr: { workflow: firingAgent(fired) }, waited: { workflow: firingAgent([]) } },
  }));
  client = new WorkflowClient({ baseUrl: url });
});
afterAll(() => server.close());

/** A POST of `body` to `path` with `key` as its Idempotency-Key: the status, the body and whether it was replayed. */
async function post(path: string, body: unknown, key?: string): Promise<{ status: number; body: unknown; replayed: boolean }> {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(key !== undefined ? { "Idempotency-Key": key } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), replayed: response.headers.get("Idempotent-Replayed") === "true" };
}

async function asked(id: string, n: number): Promise<HandlerInfo> {
  let questions = 0;
  for await (const ev of client.streamEvents(id)) if (ev.type === "InputRequiredEvent" && ++questions === n) return client.getHandler(id);
  throw new Error(`the run ended before its question ${n}`);
}

async function approvalRequest(id: string): Promise<StreamedEvent> {
  for await (const ev of client.streamEvents(id)) if (ev.type === "agent.ToolApprovalRequestEvent") return ev;
  throw new Error("the run ended without asking");
}

describe("an event sent again with its Idempotency-Key", () => {
  it("is taken once: the second send gets the first answer, and the run's next question stays open", async () => {
    const { id } = await client.start("three", {});
    await asked(id, 1);
    const first = await post(`/api/handlers/${id}/events`, { type: "Decision", data: { yes: true } }, "answer-1");
    const again = await post(`/api/handlers/${id}/events`, { type: "Decision", data: { yes: true } }, "answer-1");
    expect(first).toEqual({ status: 202, body: { accepted: true }, replayed: false });
    expect(again).toEqual({ status: 202, body: { accepted: true }, replayed: true });
    expect((await asked(id, 2)).waitingFor.map((w) => w.data.prefix)).toEqual(["Second?"]);
    await post(`/api/handlers/${id}/events`, { type: "Decision", data: { yes: false } }, "answer-2");
    await post(`/api/handlers/${id}/events`, { type: "HumanResponseEvent", data: { response: "done" } }, "answer-3");
    expect(await client.wait(id)).toMatchObject({ status: "succeeded", result: "true false done" });
    const events = await (await fetch(`${url}/api/handlers/${id}/events?format=json`)).json();
    expect((events as { events: StreamedEvent[] }).events.filter((e) => e.type === "EventReceivedEvent")).toHaveLength(3);
  });

  it("with another body or on another route is refused with 422, and changes nothing", async () => {
    const { id } = await client.start("three", {});
    await asked(id, 1);
    expect((await post(`/api/handlers/${id}/events`, { type: "Decision", data: { yes: true } }, "k-reused")).status).toBe(202);
    const other = await post(`/api/handlers/${id}/events`, { type: "Decision", data: { yes: false } }, "k-reused");
    expect(other).toMatchObject({ status: 422, body: { error: { code: "idempotency_key_reused" } } });
    expect((await post(`/api/handlers/${id}/cancel`, {}, "k-reused")).status).toBe(422);
    expect((await asked(id, 2)).status).toBe("waiting");
    await client.cancel(id);
  });

  it("that is not printable ASCII, or too long, is refused with 400", async () => {
    const { id } = await client.start("three", {});
    for (const key of ["", "a b", "x".repeat(256)])
      expect(await post(`/api/handlers/${id}/events`, { type: "Decision", data: { yes: true } }, key)).toMatchObject({
        status: 400,
        body: { error: { code: "invalid_idempotency_key" } },
      });
    expect((await client.getHandler(id)).waitingFor.map((w) => w.data.prefix)).toEqual(["First?"]);
    await client.cancel(id);
  });

  it("after a refusal is tried again: only an answer that was taken is kept", async () => {
    const { id } = await client.start("three", {});
    // Not a type the workflow takes: 403, nothing taken, so the key may be sent again once fixed… with the same body it is refused again.
    expect((await post(`/api/handlers/${id}/events`, { type: "Nope", data: {} }, "k-refused")).status).not.toBe(202);
    expect((await post(`/api/handlers/${id}/events`, { type: "Nope", data: {} }, "k-refused")).replayed).toBe(false);
    await client.cancel(id);
  });
});

describe("an approval sent again with its Idempotency-Key", () => {
  it("gets the first answer (202), where without the key the second is a 404; the tool runs once", async () => {
    const { id } = await client.start("hr", { input: "Fire Lawson" });
    const approvalId = String((await approvalRequest(id)).data.approvalId);
    const first = await post(`/api/handlers/${id}/approvals`, { approvalId, approved: true }, "approve-1");
    const again = await post(`/api/handlers/${id}/approvals`, { approvalId, approved: true }, "approve-1");
    expect(first.status).toBe(202);
    expect(again).toEqual({ ...first, replayed: true });
    // Without the key, the same answer sent again is refused: the question was answered (or the run has ended).
    expect([404, 409]).toContain((await post(`/api/handlers/${id}/approvals`, { approvalId, approved: true })).status);
    expect((await client.wait(id)).status).toBe("succeeded");
    expect(fired).toEqual([7]);
  });
});

describe("a run started again with its Idempotency-Key", () => {
  it("is the same run: one handler, the first answer given again", async () => {
    const before = (await client.listHandlers({ workflow: "three" })).length;
    const first = await post("/api/workflows/three/start", { input: {} }, "start-1");
    const again = await post("/api/workflows/three/start", { input: {} }, "start-1");
    expect(again).toEqual({ ...first, replayed: true });
    expect((await client.listHandlers({ workflow: "three" })).length).toBe(before + 1);
    await client.cancel((first.body as HandlerInfo).id);
  });

  it("by another caller is another run: a key is its sender's", async () => {
    const { server: withPrincipal, url: other } = await startServer({
      workflows: { three: { workflow: new ThreeQuestions({ timeout: null }) } },
      principal: (request) => request.headers.get("X-User") ?? undefined,
    });
    try {
      const start = (user: string) =>
        fetch(`${other}/api/workflows/three/start`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "Idempotency-Key": "same", "X-User": user },
          body: JSON.stringify({ input: {} }),
        }).then((r) => r.json() as Promise<HandlerInfo>);
      const [alice, bob] = [await start("alice"), await start("bob")];
      expect(alice.id).not.toBe(bob.id);
      expect((await start("alice")).id).toBe(alice.id);
    } finally {
      await withPrincipal.close();
    }
  });

  it("while the first run-and-wait is still waiting, waits for that run's answer instead of starting another", async () => {
    const run = () => post("/api/workflows/waited/run", { input: { input: "Fire Lawson" } }, "run-1");
    const first = run();
    // The first request has reached the server once its run asks for approval.
    let id = "";
    await expect
      .poll(async () => (id = (await client.listHandlers({ workflow: "waited", status: ["waiting"] }))[0]?.id ?? ""), { timeout: 30_000 })
      .not.toBe("");
    const again = run();
    const approvalId = String((await approvalRequest(id)).data.approvalId);
    await client.approve(id, approvalId, true);
    const [a, b] = await Promise.all([first, again]);
    expect(a).toMatchObject({ status: 200, replayed: false, body: { id, status: "succeeded" } });
    expect(b).toEqual({ ...a, replayed: true });
    expect((await client.listHandlers({ workflow: "waited" })).length).toBe(1);
  });
});

describe("the answers kept", () => {
  const answer = (body: string) => async () => ({ status: 202, body });
  it("are bounded in count and bytes, oldest dropped first, and forgotten after their time", async () => {
    let now = 0;
    const keys = new IdempotencyKeys({ maxKeys: 2, maxBytes: 1000, ttlMs: 100 }, () => now);
    for (const key of ["a", "b", "c"]) await keys.answer(keyedRequest("p", "POST /x", key, "{}"), answer("{}"));
    expect(keys.size.keys).toBe(2);
    // "a" was dropped: it runs again; "c" is kept: it does not.
    expect((await keys.answer(keyedRequest("p", "POST /x", "a", "{}"), answer("{}"))).replayed).toBe(false);
    expect((await keys.answer(keyedRequest("p", "POST /x", "c", "{}"), answer("{}"))).replayed).toBe(true);
    await keys.answer(keyedRequest("p", "POST /x", "big", "{}"), answer("x".repeat(985)));
    expect(keys.size).toMatchObject({ keys: 1 });
    expect(keys.size.bytes).toBeLessThanOrEqual(1000);
    now = 101;
    await keys.answer(keyedRequest("p", "POST /x", "d", "{}"), answer("{}"));
    expect(keys.size.keys).toBe(1);
  });
});

describe("a keyed request", () => {
  it("is read once: the key checked, the route and body hashed into what both kinds of kept keys compare", async () => {
    expect(() => keyedRequest("p", "POST /x", "with space", "{}")).toThrow(expect.objectContaining({ status: 400, code: "invalid_idempotency_key" }));
    const request = keyedRequest("p", "POST /x", "k1", '{"input":1}');
    expect(request).toEqual({ principal: "p", key: "k1", fingerprint: keyedRequest("q", "POST /x", "k2", '{"input":1}').fingerprint });
    expect(keyedRequest("p", "POST /x", "k1", '{"input":2}').fingerprint).not.toBe(request.fingerprint);
    expect(keyedRequest("p", "POST /y", "k1", '{"input":1}').fingerprint).not.toBe(request.fingerprint);
    // The kept answer is judged by the fingerprint the request carries: the body is not read again.
    const keys = new IdempotencyKeys();
    await keys.answer(request, async () => ({ status: 202, body: "{}" }));
    expect((await keys.answer({ ...request }, async () => ({ status: 202, body: "{}" }))).replayed).toBe(true);
    await expect(keys.answer({ ...request, fingerprint: "other" }, async () => ({ status: 202, body: "{}" }))).rejects.toMatchObject({
      status: 422,
      code: "idempotency_key_reused",
    });
  });
});
