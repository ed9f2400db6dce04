/**
 * What a web page of another site can make a browser send to a server on 127.0.0.1 without a
 * token: the browser names the server as `Host` (which the Host check takes), a form or a
 * `no-cors` fetch needs no preflight, and `Origin` names the page. Such a request changes
 * nothing: a run it cancels or answers goes on as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import { firingAgent, startServer } from "./server-fixtures.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";

const servers: WorkflowServer[] = [];
let url: string;
let client: WorkflowClient;
const fired: number[] = [];
/** The model asks to fire employee 7 in every run, and says it is done once it read the outcome. */
const askEachRun: Parameters<typeof firingAgent>[1] = (request) =>
  request.messages.some((m) => toolResultIdOf(m) !== undefined) ? { text: "Done." } : { toolCalls: [{ name: "fire_employee", input: { id: 7 } }] };

/** A server with the firing agent, and `extra` options. */
async function serve(extra: Parameters<typeof startServer>[0] = {}): Promise<{ url: string; client: WorkflowClient }> {
  const { server, url: at } = await startServer({ workflows: { hr: firingAgent(fired, askEachRun) }, ...extra });
  servers.push(server);
  return { url: at, client: new WorkflowClient({ baseUrl: at, ...(extra.token ? { token: extra.token } : {}) }) };
}

beforeAll(async () => ({ url, client } = await serve()));
afterAll(async () => {
  for (const server of servers) await server.close();
});

/** Starts a run of the firing agent on `on` and returns it once it asks its question. */
async function waitingRun(on: WorkflowClient): Promise<{ id: string; approvalId: string }> {
  const { id } = await on.start("hr", { input: "Fire Lawson" });
  for await (const ev of on.streamEvents(id))
    if (ev.type === "agent.ToolApprovalRequestEvent") return { id, approvalId: String((ev as StreamedEvent).data.approvalId) };
  throw new Error(`run ${id} ended without asking`);
}

/** What a browser sends for `fetch(path, { method: "POST", mode: "no-cors" })` from a page of `origin`, with `body` as text when given. */
function fromPage(at: string, path: string, origin: string, body?: unknown, type = "text/plain;charset=UTF-8"): Promise<Response> {
  return fetch(`${at}${path}`, {
    method: "POST",
    headers: { Origin: origin, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", ...(body === undefined ? {} : { "Content-Type": type }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe("a POST from a web page of another origin, to a server without a token", () => {
  it("does not cancel a run, even one whose id it knows: 403 naming the origin, and the run still waits", async () => {
    const { id } = await waitingRun(client);
    const { host } = new URL(url);
    const origins = ["https://attacker.example", "null", "http://localhost:3000", `http://${host}.attacker.example`, `http://${host}@attacker.example`];
    for (const origin of origins) {
      const refused = await fromPage(url, `/api/handlers/${id}/cancel`, origin);
      expect(refused.status, origin).toBe(403);
      expect(await refused.json()).toEqual({ error: { code: "cross_origin_refused", message: expect.stringContaining(JSON.stringify(origin)) } });
    }
    // Nor with a GET, which an <img> sends without Origin: no method override turns it into the POST.
    for (const [path, headers] of [
      [`/api/handlers/${id}/cancel`, { "X-HTTP-Method-Override": "POST" }],
      [`/api/handlers/${id}/cancel?_method=POST`, {}],
    ] as const) {
      expect((await fetch(`${url}${path}`, { headers })).status).toBe(404);
    }
    expect((await client.getHandler(id)).status).toBe("waiting");
    await client.cancel(id);
  });

  it("does not answer, start or fork either, whatever its content type", async () => {
    const { id, approvalId } = await waitingRun(client);
    const attempts = [
      fromPage(url, `/api/handlers/${id}/approvals`, "https://attacker.example", { approvalId, approved: true }, "application/json"),
      fromPage(url, `/api/handlers/${id}/events`, "null", { type: "agent.ToolApprovalEvent", data: { approvalId, approved: true } }, "application/json"),
      fromPage(url, "/api/workflows/hr/start", "https://attacker.example", { input: { input: "Fire everyone" } }),
      fromPage(url, `/api/handlers/${id}/fork`, "https://attacker.example", {}, "application/json"),
    ];
    expect((await Promise.all(attempts)).map((r) => r.status)).toEqual([403, 403, 403, 403]);
    expect(await client.getHandler(id)).toMatchObject({
      status: "waiting",
      waitingFor: [expect.objectContaining({ data: expect.objectContaining({ approvalId }) })],
    });
    expect((await client.listHandlers()).filter((h) => h.status === "waiting" || h.status === "running").map((h) => h.id)).toEqual([id]);
    await client.approve(id, approvalId, false);
    await client.wait(id);
    expect(fired).toEqual([]);
  });

  it("is taken from the server's own page, from origins CORS or allowedHosts name, and from programs that send no Origin", async () => {
    const own = await waitingRun(client);
    const ownPage = await fromPage(url, `/api/handlers/${own.id}/approvals`, url, { approvalId: own.approvalId, approved: false }, "application/json");
    expect(ownPage.status).toBe(202);
    await client.wait(own.id);

    const port = new URL(url).port;
    const localhost = await fromPage(
      url.replace("127.0.0.1", "localhost"),
      "/api/workflows/hr/start",
      `http://localhost:${port}`,
      { input: { input: "Hi" } },
      "application/json",
    );
    expect(localhost.status).toBe(202);
    await client.cancel(((await localhost.json()) as { id: string }).id);

    const withCors = await serve({ cors: { origin: ["http://app.example"] } });
    const app = await waitingRun(withCors.client);
    expect((await fromPage(withCors.url, `/api/handlers/${app.id}/cancel`, "http://app.example")).status).toBe(200);

    const proxied = await serve({ allowedHosts: ["stepflow.internal"] });
    const behind = await waitingRun(proxied.client);
    expect((await fromPage(proxied.url, `/api/handlers/${behind.id}/cancel`, "https://stepflow.internal")).status).toBe(200);

    const program = await waitingRun(client);
    expect((await fetch(`${url}/api/handlers/${program.id}/cancel`, { method: "POST" })).status).toBe(200);
  });
});

describe("a server with a token", () => {
  it("takes the token holder's POST from any origin: a page of another site cannot send the token", async () => {
    const guarded = await serve({ token: "token-of-the-operator" });
    const { id } = await waitingRun(guarded.client);
    const page = await fromPage(guarded.url, `/api/handlers/${id}/cancel`, "https://attacker.example");
    expect(page.status).toBe(401);
    const holder = await fetch(`${guarded.url}/api/handlers/${id}/cancel`, {
      method: "POST",
      headers: { Origin: "https://dashboard.example", Authorization: "Bearer token-of-the-operator" },
    });
    expect(holder.status).toBe(200);
  });
});
