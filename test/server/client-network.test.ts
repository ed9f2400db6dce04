/** WorkflowClient on a network that is not perfect: answers lost on the way back, proxies that answer for the server. */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient, WorkflowClientError } from "../../src/client/workflow-client.ts";
import type { HandlerInfo } from "../../src/client/types.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { ThreeQuestions, startServer } from "./server-fixtures.ts";

/**
 * What the proxy does with a request: pass it on, `drop` the server's answer (the server did the
 * work; the client's connection is cut), or answer by itself without asking the server.
 */
type Rule = (request: IncomingMessage) => "pass" | "drop" | "hold" | { status: number; type: string; body: string };

/**
 * A reverse proxy on 127.0.0.1 in front of `upstream` that records each request's method, path
 * and Idempotency-Key, and follows `rule` for each.
 */
async function startProxy(
  upstream: string,
): Promise<{ url: string; seen: string[]; rule: { current: Rule }; closeConnections: () => void; close: () => Promise<void> }> {
  const seen: string[] = [];
  const rule = { current: (() => "pass") as Rule };
  const server: Server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    seen.push(`${request.method} ${request.url} ${request.headers["idempotency-key"] ?? "-"}`);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const action = rule.current(request);
    if (typeof action === "object") return void response.writeHead(action.status, { "Content-Type": action.type }).end(action.body);
    // Never answered: the client's connection stays open until the client closes it.
    if (action === "hold") return;
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name))) as Record<
      string,
      string
    >;
    const answer = await fetch(`${upstream}${request.url}`, {
      method: request.method ?? "GET",
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    if (action === "drop") {
      await answer.body?.cancel();
      request.socket.destroy();
      return;
    }
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body) Readable.fromWeb(answer.body as import("node:stream/web").ReadableStream).pipe(response);
    else response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    rule,
    closeConnections: () => server.closeAllConnections(),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A rule that drops the answer to the first request `matches` picks, and passes everything else. */
function dropFirst(matches: (request: IncomingMessage) => boolean): Rule {
  let dropped = false;
  return (request) => {
    if (dropped || !matches(request)) return "pass";
    dropped = true;
    return "drop";
  };
}

let server: WorkflowServer;
let url: string;
let proxy: Awaited<ReturnType<typeof startProxy>>;
let direct: WorkflowClient;
let viaProxy: WorkflowClient;
beforeAll(async () => {
  ({ server, url } = await startServer({ workflows: { three: { workflow: new ThreeQuestions({ timeout: null }) } } }));
  proxy = await startProxy(url);
  direct = new WorkflowClient({ baseUrl: url });
  viaProxy = new WorkflowClient({ baseUrl: proxy.url });
});
afterAll(async () => {
  await proxy.close();
  await server.close();
});

async function asked(id: string, n: number): Promise<HandlerInfo> {
  let questions = 0;
  for await (const ev of direct.streamEvents(id)) if (ev.type === "InputRequiredEvent" && ++questions === n) return direct.getHandler(id);
  throw new Error(`the run ended before its question ${n}`);
}

describe("a POST whose answer is lost on the way back", () => {
  it("is sent again with the same Idempotency-Key, and the run takes the event once", async () => {
    const { id } = await direct.start("three", {});
    await asked(id, 1);
    proxy.seen.length = 0;
    proxy.rule.current = dropFirst((r) => r.method === "POST");
    await viaProxy.sendEvent(id, "Decision", { yes: true });
    const posts = proxy.seen.filter((line) => line.startsWith("POST"));
    expect(posts).toHaveLength(2);
    expect(posts[0]).toBe(posts[1]);
    expect(posts[0]).toMatch(/ [0-9a-f-]{32,36}$/);
    // One answer taken: the second question is still open, and the run ends with the answers given once each.
    expect((await asked(id, 2)).waitingFor.map((w) => w.data.prefix)).toEqual(["Second?"]);
    await direct.sendEvent(id, "Decision", { yes: false });
    await direct.sendEvent(id, "HumanResponseEvent", { response: "done" });
    expect(await direct.wait(id)).toMatchObject({ status: "succeeded", result: "true false done" });
  });

  it("starts one run, with a new key for each call and the caller's own key when given", async () => {
    const before = (await direct.listHandlers({ workflow: "three" })).length;
    proxy.seen.length = 0;
    proxy.rule.current = dropFirst((r) => r.method === "POST");
    const started = await viaProxy.start("three", {});
    expect((await direct.listHandlers({ workflow: "three" })).length).toBe(before + 1);
    await viaProxy.cancel(started.id, { idempotencyKey: "my-own-key" });
    const keys = proxy.seen.filter((line) => line.startsWith("POST")).map((line) => line.split(" ")[2]);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).toBe("my-own-key");
  });

  it("fails after `reconnects` tries, with code network", async () => {
    const { id } = await direct.start("three", {});
    proxy.rule.current = () => "drop";
    const client = new WorkflowClient({ baseUrl: proxy.url, reconnects: 1 });
    await expect(client.sendEvent(id, "Decision", { yes: true })).rejects.toMatchObject({ name: "WorkflowClientError", status: 0, code: "network" });
    proxy.rule.current = () => "pass";
    await direct.cancel(id);
  });
});

const BAD_GATEWAY = {
  status: 502,
  type: "text/html",
  body: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
};
const A_WEB_PAGE = { status: 200, type: "text/html; charset=utf-8", body: "<!doctype html><title>Welcome to nginx!</title>" };

describe("an answer that is not the stepflow server's", () => {
  it("a proxy's HTML 502 is a WorkflowClientError naming the status, the type and how the page begins, after the tries", async () => {
    proxy.seen.length = 0;
    proxy.rule.current = () => BAD_GATEWAY;
    const client = new WorkflowClient({ baseUrl: proxy.url, reconnects: 1 });
    const error = await client.getHandler("some-id").catch((e: unknown) => e);
    proxy.rule.current = () => "pass";
    expect(error).toMatchObject({ name: "WorkflowClientError", status: 502, code: "http_error" });
    expect((error as Error).message).toContain("GET /api/handlers/some-id got HTTP 502 with text/html");
    expect((error as Error).message).toContain("502 Bad Gateway");
    expect(proxy.seen).toHaveLength(2);
  });

  it("a web page answering 200 in the server's place is a WorkflowClientError of code not_json, at once", async () => {
    proxy.seen.length = 0;
    proxy.rule.current = () => A_WEB_PAGE;
    const error = await viaProxy.listWorkflows().catch((e: unknown) => e);
    const streamError = await (async () => {
      for await (const _ of viaProxy.streamEvents("some-id")) throw new Error("no event expected");
    })().catch((e: unknown) => e);
    proxy.rule.current = () => "pass";
    expect(error).toMatchObject({ name: "WorkflowClientError", status: 200, code: "not_json" });
    expect((error as Error).message).toContain("Welcome to nginx!");
    expect(streamError).toMatchObject({ name: "WorkflowClientError", status: 200, code: "not_json" });
    // Asked once each: a page does not become JSON by asking again.
    expect(proxy.seen).toHaveLength(2);
  });

  it("the server's own JSON error still reaches the caller with its code and message", async () => {
    const error = await viaProxy.getHandler("nope").catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "WorkflowClientError", status: 404, code: "handler_not_found" });
    expect(error).toBeInstanceOf(WorkflowClientError);
  });
});

describe("an event stream behind a proxy while the server restarts", () => {
  it("reconnects through the proxy's 502s and 503s after the last event, missing and repeating nothing", async () => {
    const { id } = await direct.start("three", {});
    await asked(id, 1);
    // The proxy passes the first stream, then cuts it and answers the next two attempts itself, as while the server is away.
    let streams = 0;
    proxy.rule.current = (request) => {
      if (!request.url?.includes("/events")) return "pass";
      streams++;
      if (streams === 2) return BAD_GATEWAY;
      if (streams === 3) return { status: 503, type: "text/plain", body: "no healthy upstream" };
      return "pass";
    };
    const seen: number[] = [];
    const reader = viaProxy.streamEvents(id);
    for await (const ev of reader) {
      seen.push(ev.seq);
      if (ev.type === "InputRequiredEvent" && streams === 1) {
        // Cut the first stream: the client reconnects after this event.
        proxy.closeConnections();
        await direct.sendEvent(id, "Decision", { yes: true });
        await direct.sendEvent(id, "Decision", { yes: false });
        await direct.sendEvent(id, "HumanResponseEvent", { response: "done" });
      }
    }
    proxy.rule.current = () => "pass";
    expect(streams).toBe(4);
    expect(seen).toEqual(seen.map((_, i) => i + 1));
    expect((await direct.getHandler(id)).eventCount).toBe(seen.length);
  });
});

describe("a caller that aborts", () => {
  it("ends wait's every request, and its connection closes: a server that never answers holds nothing", async () => {
    const { id } = await direct.start("three", {});
    let held!: (request: IncomingMessage) => void;
    const heldRequest = new Promise<IncomingMessage>((resolve) => (held = resolve));
    proxy.rule.current = (request) => {
      if (request.method !== "GET" || request.url !== `/api/handlers/${id}`) return "pass";
      held(request);
      return "hold";
    };
    const controller = new AbortController();
    const waiting = viaProxy.wait(id, { signal: controller.signal });
    const request = await heldRequest;
    const closed = new Promise<void>((resolve) => (request.socket.destroyed ? resolve() : request.socket.once("close", () => resolve())));
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    await closed;
    proxy.rule.current = () => "pass";
    await direct.cancel(id);
  });
});
