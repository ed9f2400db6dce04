/** The HTTP API over real HTTP on 127.0.0.1: what a program or a browser sees. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import { WorkflowClient, WorkflowClientError } from "../../src/client/workflow-client.ts";
import type { HandlerInfo, StreamedEvent } from "../../src/client/types.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { QUESTION, firingAgent, sseFrames, startServer } from "./server-fixtures.ts";

let server: WorkflowServer;
let url: string;
let client: WorkflowClient;
const fired: number[] = [];

beforeAll(async () => {
  ({ server, url } = await startServer({
    workflows: {
      hr: {
        workflow: firingAgent(fired, (request) =>
          request.messages.some((m) => toolResultIdOf(m) !== undefined) ? { text: "Done." } : { toolCalls: [{ name: "fire_employee", input: { id: 7 } }] },
        ),
      },
    },
    bodyLimit: 2000,
  }));
  client = new WorkflowClient({ baseUrl: url });
});
afterAll(() => server.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

async function collect(id: string, after?: number): Promise<StreamedEvent[]> {
  const events: StreamedEvent[] = [];
  for await (const ev of client.streamEvents(id, after === undefined ? {} : { after })) events.push(ev);
  return events;
}

/** Follows a handler's events until it asks for approval; returns that request. */
async function approvalRequest(id: string): Promise<StreamedEvent> {
  for await (const ev of client.streamEvents(id)) if (ev.type === "agent.ToolApprovalRequestEvent") return ev;
  throw new Error("the run ended without asking");
}

describe("workflows", () => {
  it("lists the workflows with their graph, event types and input schema", async () => {
    const workflows = await client.listWorkflows();
    expect(workflows.map((w) => w.name)).toEqual(["agent", "hr"]);
    const agent = workflows[0];
    expect(agent?.description).toBe("The offline agent.");
    expect(agent?.mermaid).toMatch(/^flowchart/);
    expect(agent?.steps.map((s) => s.name)).toContain("handleToolCalls");
    expect(agent?.steps.find((s) => s.name === "handleLlmInput")?.accepts).toEqual(["agent.InputEvent"]);
    expect(agent?.events).toContainEqual({ type: "StartEvent", role: "start" });
    const approval = agent?.events.find((e) => e.type === "agent.ToolApprovalEvent");
    expect(approval?.role).toBe("human-response");
    expect(approval?.schema).toMatchObject({ type: "object", required: ["approvalId", "approved"] });
    expect(agent?.inputSchema).toMatchObject({ type: "object", properties: { input: { type: "string" } } });
    expect(await client.getWorkflow("hr")).toMatchObject({ name: "hr" });
  });

  it("answers 404 in JSON for a workflow it does not run, naming those it does", async () => {
    const error = await client.getWorkflow("nope").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowClientError);
    expect(error).toMatchObject({ status: 404, code: "workflow_not_found", message: 'No workflow named "nope". Workflows: agent, hr.' });
  });

  it("serves an OpenAPI document of the routes, with the bodies' schemas", async () => {
    const doc = (await (await fetch(`${url}/api/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: unknown }>>;
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/api/workflows/{name}/start", "/api/handlers/{id}/events", "/api/handlers/{id}/approvals"]),
    );
    expect(doc.paths["/api/workflows/{name}/start"]?.post?.requestBody).toMatchObject({
      content: { "application/json": { schema: { type: "object", properties: { input: { type: "object" }, context: { type: "object" } } } } },
    });
  });
});

describe("runs", () => {
  it("runs the agent and waits for its result", async () => {
    const done = await client.run("agent", { input: QUESTION });
    expect(done.status).toBe("succeeded");
    expect(done.result).toMatchObject({ response: { role: "assistant", content: "(2123 + 2321) * 312 = 1386528" } });
    expect(done.eventCount).toBeGreaterThan(5);
  });

  it("starts a run and streams its events in order, tokens and tool calls included, ending with RunEndedEvent", async () => {
    const started = await client.start("agent", { input: QUESTION });
    expect(started).toMatchObject({ workflow: "agent", status: "running", input: { input: QUESTION }, waitingFor: [] });
    const events = await collect(started.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({ type: "RunStartedEvent", data: { runId: started.runId, resumed: false } });
    expect(events.at(-1)).toMatchObject({ type: "RunEndedEvent", data: { status: "succeeded" } });
    expect(events.filter((e) => e.type === "agent.ToolCallEvent").map((e) => (e.data.toolCalls as { name: string }[])[0]?.name)).toEqual(["add", "multiply"]);
    const text = events
      .filter((e) => e.type === "agent.StreamEvent")
      .map((e) => e.data.delta)
      .join("");
    expect(text).toBe("(2123 + 2321) * 312 = 1386528");
    const steps = events.filter((e) => e.type === "StepStateChangedEvent");
    expect(steps[0]?.data).toMatchObject({ step: "prepareChatHistory", state: "started" });
    expect(Date.parse(events[0]?.at ?? "")).not.toBeNaN();
    const info = await client.getHandler(started.id);
    expect(info).toMatchObject({ status: "succeeded", eventCount: events.length });
  });

  it("resumes a stream after an offset, with ?after or Last-Event-ID, missing and repeating nothing", async () => {
    const { id } = await client.run("agent", { input: QUESTION });
    const all = await collect(id);
    expect(await collect(id, 7)).toEqual(all.slice(7));
    const sse = await fetch(`${url}/api/handlers/${id}/events`, { headers: { Accept: "text/event-stream", "Last-Event-ID": "10" } });
    expect(sse.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    const frames = sseFrames(await sse.text());
    expect(frames.slice(0, -1).map((f) => Number(f.id))).toEqual(all.slice(10).map((e) => e.seq));
    expect(frames.slice(0, -1).map((f) => f.event)).toEqual(all.slice(10).map((e) => e.type));
    expect(JSON.parse(frames[0]?.data ?? "{}")).toEqual(all[10]);
    expect(frames.at(-1)).toEqual({ event: "end", data: '{"end":true,"status":"succeeded"}' });
    // An EventSource reconnecting once it has everything is told to stop.
    const after = await fetch(`${url}/api/handlers/${id}/events`, { headers: { Accept: "text/event-stream", "Last-Event-ID": String(all.length) } });
    expect(after.status).toBe(204);
    const json = (await (await fetch(`${url}/api/handlers/${id}/events?format=json&after=${all.length - 2}`)).json()) as { events: StreamedEvent[] };
    expect(json.events).toEqual(all.slice(-2));
  });

  it("continues a conversation in the context of an earlier run", async () => {
    const first = await client.run("agent", { input: "My name is Ada." });
    const second = await client.run("agent", { input: "What is my name?" }, { continueFrom: first.id });
    expect(second.result).toMatchObject({ response: { content: expect.stringContaining("Ada") } });
    const fresh = await client.run("agent", { input: "What is my name?" });
    expect(fresh.result).not.toMatchObject({ response: { content: expect.stringContaining("Ada") } });
    const context = await client.getContext(second.id);
    expect(context).toMatchObject({ workflow: "FunctionCallingAgent", running: false });
  });

  it("lists handlers newest first, by workflow and status", async () => {
    const a = await client.run("agent", { input: "What is 1 + 1?" });
    const b = await client.run("agent", { input: "What is 2 + 2?" });
    const listed = await client.listHandlers({ workflow: "agent", status: ["succeeded"], limit: 2 });
    expect(listed.map((h) => h.id)).toEqual([b.id, a.id]);
    expect(await client.listHandlers({ workflow: "hr", status: ["cancelled"] })).toEqual([]);
    const bad = await fetch(`${url}/api/handlers?status=done`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/^The request is not valid: query\.status\.0: /);
  });
});

describe("approvals and events sent in", () => {
  it("waits for a tool approval, refuses an unknown approvalId, and continues once approved", async () => {
    const started = await client.start("hr", { input: "Fire Lawson" });
    const request = await approvalRequest(started.id);
    expect(request.data).toMatchObject({ prefix: 'Run fire_employee with {"id":7}? (yes/no)', toolCall: { name: "fire_employee" } });
    const waiting = await client.getHandler(started.id);
    expect(waiting.status).toBe("waiting");
    expect(waiting.waitingFor.map((w) => w.data.approvalId)).toEqual([request.data.approvalId]);
    expect(await client.listHandlers({ status: ["waiting"] })).toContainEqual(expect.objectContaining({ id: started.id }));
    const before = fired.length;
    const wrong = await client.approve(started.id, "not-an-id", true).catch((e: unknown) => e);
    expect(wrong).toMatchObject({
      status: 404,
      code: "approval_not_found",
      message: expect.stringContaining(`It waits for: ${String(request.data.approvalId)}.`),
    });
    expect(fired.length).toBe(before);
    const answered = await client.approve(started.id, String(request.data.approvalId), true);
    expect(answered.waitingFor).toEqual([]);
    const done = await client.wait(started.id);
    expect(done).toMatchObject({ status: "succeeded", result: { response: { content: "Done." } } });
    expect(fired.slice(before)).toEqual([7]);
  });

  it("records in the run's events that it waits for input (WorkflowIdleEvent), once, after its question", async () => {
    const started = await client.start("hr", { input: "Fire Lawson" });
    const request = await approvalRequest(started.id);
    // A reader following the waiting run gets it after the question, with the run's id.
    let idle: StreamedEvent | undefined;
    for await (const ev of client.streamEvents(started.id)) {
      if (ev.type !== "WorkflowIdleEvent") continue;
      idle = ev;
      break;
    }
    expect(idle).toMatchObject({ seq: request.seq + 1, data: { runId: started.runId } });
    await client.approve(started.id, String(request.data.approvalId), true);
    await client.wait(started.id);
    // Saved with the run, where it happened: between the question and the human's decision.
    const saved = ((await (await fetch(`${url}/api/handlers/${started.id}/events?format=json`)).json()) as { events: StreamedEvent[] }).events;
    expect(saved.filter((ev) => ev.type === "WorkflowIdleEvent")).toEqual([idle]);
    expect(saved.slice(request.seq - 1, request.seq + 2).map((ev) => ev.type)).toEqual([
      "agent.ToolApprovalRequestEvent",
      "WorkflowIdleEvent",
      "ApprovalDecision",
    ]);
  });

  it("takes a denial as a generic event, and refuses event types the workflow does not accept from outside", async () => {
    const started = await client.start("hr", { input: "Fire Lawson" });
    const request = await approvalRequest(started.id);
    const unknown = await post(`/api/handlers/${started.id}/events`, { type: "Nope", data: {} });
    expect(unknown.status).toBe(403);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe(
      'hr does not accept events of type "Nope" from outside a run. It accepts: HumanResponseEvent, agent.ToolApprovalEvent.',
    );
    const invalid = await post(`/api/handlers/${started.id}/events`, { type: "agent.ToolApprovalEvent", data: { approvalId: 3 } });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: string } }).error.code).toBe("invalid_event");
    const before = fired.length;
    await client.sendEvent(started.id, "agent.ToolApprovalEvent", { approvalId: String(request.data.approvalId), approved: false, reason: "Ask HR first." });
    const done = await client.wait(started.id);
    expect(done.status).toBe("succeeded");
    expect(fired.length).toBe(before);
    expect(done.result).toMatchObject({ sources: [{ content: expect.stringContaining("The reason given: Ask HR first.") }] });
    const late = await client.sendEvent(started.id, "HumanResponseEvent", {}).catch((e: unknown) => e);
    expect(late).toMatchObject({ status: 409, code: "handler_finished" });
  });

  it("refuses to continue a run from a context a client sends, unless the operator allows it", async () => {
    const first = await client.start("hr", { input: "Fire Lawson" });
    await approvalRequest(first.id);
    const saved = await client.getContext(first.id);
    expect(saved).toMatchObject({ running: true });
    await client.cancel(first.id);
    const both = await post("/api/workflows/hr/start", { input: { input: "Fire Lawson" }, context: saved });
    expect(both.status).toBe(400);
    expect(((await both.json()) as { error: { message: string } }).error.message).toBe(
      "This context was saved in the middle of a run: send it without input to continue that run.",
    );
    const broken = await post("/api/workflows/hr/start", { context: { version: 99 } });
    expect(((await broken.json()) as { error: { code: string } }).error.code).toBe("invalid_context");
    const before = fired.length;
    const resumed = await post("/api/workflows/hr/start", { context: saved });
    expect(resumed.status).toBe(403);
    expect(((await resumed.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "mid_run_context_refused",
      message: expect.stringContaining("acceptMidRunContexts"),
    });
    expect(fired.length).toBe(before);
  });

  it("cancels a run waiting for approval", async () => {
    const started = await client.start("hr", { input: "Fire Lawson" });
    await approvalRequest(started.id);
    const cancelled = await client.cancel(started.id);
    expect(cancelled).toMatchObject({ status: "cancelled", error: { name: "WorkflowCancelledByUser" }, waitingFor: [] });
    const events = await collect(started.id);
    expect(events.at(-1)).toMatchObject({ type: "RunEndedEvent", data: { status: "cancelled" } });
  });
});

describe("bad requests", () => {
  const errorOf = async (response: Response) => ({
    status: response.status,
    ...((await response.json()) as { error: { code: string; message: string } }).error,
  });

  it("says what is wrong with a body, in JSON, with the status code that fits", async () => {
    expect(await errorOf(await post("/api/workflows/agent/start", { input: { input: "" } }))).toEqual({
      status: 400,
      code: "invalid_input",
      message: "The input does not fit this workflow: input: Too small: expected string to have >=1 characters.",
    });
    expect(await errorOf(await post("/api/workflows/agent/start", { input: "hi" }))).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: expect.stringMatching(/^The request is not valid: body\.input: /),
    });
    expect(await errorOf(await post("/api/workflows/agent/start", "{not json"))).toMatchObject({ status: 400, code: "invalid_json" });
    expect(await errorOf(await fetch(`${url}/api/workflows/agent/start`, { method: "POST", body: "input=hi" }))).toMatchObject({
      status: 415,
      code: "not_json",
    });
    expect(await errorOf(await post("/api/workflows/agent/start", { input: { input: "x".repeat(3000) } }))).toEqual({
      status: 413,
      code: "body_too_large",
      message: "The request body is larger than the server's limit of 2000 bytes.",
    });
    expect(await errorOf(await fetch(`${url}/api/handlers/none`))).toMatchObject({ status: 404, code: "handler_not_found" });
    expect(await errorOf(await fetch(`${url}/api/nowhere`))).toMatchObject({ status: 404, code: "not_found" });
    expect(await errorOf(await fetch(`${url}/api/handlers/none/events`, { headers: { "Last-Event-ID": "x" } }))).toMatchObject({ status: 404 });
  });
});

describe("auth and CORS", () => {
  it("needs the bearer token on the API but not for health or the OpenAPI document", async () => {
    const { server: locked, url: lockedUrl } = await startServer({ token: "s3cret-token" });
    try {
      expect((await fetch(`${lockedUrl}/api/health`)).status).toBe(200);
      expect((await fetch(`${lockedUrl}/api/openapi.json`)).status).toBe(200);
      const none = await fetch(`${lockedUrl}/api/workflows`);
      expect(none.status).toBe(401);
      expect(await none.json()).toEqual({ error: { code: "unauthorized", message: "This server needs a bearer token: send Authorization: Bearer <token>." } });
      const wrong = new WorkflowClient({ baseUrl: lockedUrl, token: "other" });
      expect(await wrong.listWorkflows().catch((e: unknown) => e)).toMatchObject({ status: 401, message: "The bearer token is not this server's." });
      const right = new WorkflowClient({ baseUrl: lockedUrl, token: "s3cret-token" });
      const done: HandlerInfo = await right.run("agent", { input: "What is 6 * 7?" });
      expect(done.result).toMatchObject({ response: { content: "6 * 7 = 42" } });
    } finally {
      await locked.close();
    }
  });

  it("answers CORS preflights for the origins given, and only those", async () => {
    const { server: open, url: openUrl } = await startServer({ cors: { origin: ["http://app.example"] }, token: "t0ken" });
    try {
      const preflight = await fetch(`${openUrl}/api/workflows/agent/start`, {
        method: "OPTIONS",
        headers: { Origin: "http://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type" },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("Access-Control-Allow-Origin")).toBe("http://app.example");
      expect(preflight.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("authorization");
      const other = await fetch(`${openUrl}/api/health`, { headers: { Origin: "http://evil.example" } });
      expect(other.headers.get("Access-Control-Allow-Origin")).toBeNull();
    } finally {
      await open.close();
    }
  });
});

describe("readers that leave", () => {
  it("a reader leaving mid-stream does not stop the run, and leaves no reader behind", async () => {
    const started = await client.start("hr", { input: "Fire Lawson" });
    const controller = new AbortController();
    const response = await fetch(`${url}/api/handlers/${started.id}/events`, { signal: controller.signal, headers: { Accept: "text/event-stream" } });
    const reader = response.body?.getReader();
    await reader?.read();
    controller.abort();
    await reader?.closed.catch(() => {});
    const request = await approvalRequest(started.id);
    await client.approve(started.id, String(request.data.approvalId), true);
    expect((await client.wait(started.id)).status).toBe("succeeded");
    // The server notices the closed connection on its own schedule: poll for it.
    await expect.poll(() => server.stats(), { timeout: 10_000 }).toMatchObject({ readers: 0, waiters: 0 });
  });
});

describe("the web page's files", () => {
  it("serves a directory at /, index.html with a strict content security policy, and leaves /api alone", async () => {
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const web = mkdtempSync(join(tmpdir(), "stepflow-web-"));
    mkdirSync(join(web, "assets"));
    writeFileSync(join(web, "index.html"), "<!doctype html><title>stepflow</title>");
    writeFileSync(join(web, "assets", "app.js"), "console.log(1);");
    const { server: withWeb, url: webUrl } = await startServer({ webRoot: web });
    try {
      const page = await fetch(`${webUrl}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get("Content-Type")).toMatch(/^text\/html/);
      expect(page.headers.get("Content-Security-Policy")).toBe("default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
      expect(await page.text()).toContain("<title>stepflow</title>");
      const script = await fetch(`${webUrl}/assets/app.js`);
      expect(script.headers.get("Content-Type")).toMatch(/^text\/javascript/);
      expect((await fetch(`${webUrl}/runs/123`)).headers.get("Content-Type")).toMatch(/^text\/html/);
      expect((await fetch(`${webUrl}/../../etc/passwd`)).status).not.toBe(500);
      const api = await fetch(`${webUrl}/api/nowhere`);
      expect(api.status).toBe(404);
      expect(api.headers.get("Content-Type")).toMatch(/^application\/json/);
    } finally {
      await withWeb.close();
      rmSync(web, { recursive: true, force: true });
    }
  });

  // Building the page (Mermaid, then its Brotli and gzip copies) takes tens of seconds on a loaded
  // machine; the build is cached by its sources (node_modules/.cache), so it is done once, and its
  // time is no part of what this test checks.
  it("sends the built page's Brotli or gzip copy to a browser that accepts it, the plain file otherwise", { timeout: 900_000 }, async () => {
    const { readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { buildFromSources } = await import("../../src/web/web-page.ts");
    const web = await buildFromSources();
    const { server: withWeb, url: webUrl } = await startServer({ webRoot: web });
    try {
      const plain = readFileSync(join(web, "assets", "main.js"), "utf8");
      for (const [accepts, encoding] of [
        ["br, gzip", "br"],
        ["gzip", "gzip"],
        ["identity", null],
      ] as const) {
        const script = await fetch(`${webUrl}/assets/main.js`, { headers: { "Accept-Encoding": accepts } });
        expect(script.headers.get("Content-Encoding")).toBe(encoding);
        expect(script.headers.get("Content-Type")).toMatch(/^text\/javascript/);
        // fetch decodes the body: what the browser runs is the built file.
        expect(await script.text()).toBe(plain);
      }
      const page = await fetch(`${webUrl}/runs/123`, { headers: { "Accept-Encoding": "br" } });
      expect(page.headers.get("Content-Encoding")).toBe("br");
      expect(await page.text()).toBe(readFileSync(join(web, "index.html"), "utf8"));
    } finally {
      await withWeb.close();
    }
  });
});

describe("the client's event stream", () => {
  it("picks up after the last event when the connection drops, missing and repeating nothing", async () => {
    const { id } = await client.run("agent", { input: QUESTION });
    const all = await collect(id);
    const asked: string[] = [];
    // A fetch whose first event stream breaks after its first chunk, as a dropped connection does.
    let broken = false;
    const flaky: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      asked.push(String(input).replace(url, ""));
      if (broken || !String(input).includes("/events") || !response.body) return response;
      broken = true;
      // Passes on the first line only, then breaks.
      const reader = response.body.getReader();
      let text = "";
      while (!text.includes("\n")) {
        const { value } = await reader.read();
        if (!value) break;
        text += new TextDecoder().decode(value);
      }
      void reader.cancel();
      const chunks = [new TextEncoder().encode(text.slice(0, text.indexOf("\n") + 1))];
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = chunks.shift();
          if (chunk) controller.enqueue(chunk);
          else controller.error(new TypeError("terminated"));
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const events: StreamedEvent[] = [];
    for await (const ev of new WorkflowClient({ baseUrl: url, fetch: flaky }).streamEvents(id)) events.push(ev);
    expect(events).toEqual(all);
    // Asked again from the one event received, which comes first again and is checked, then skipped.
    const resumedAfter = Number(/after=(\d+)/.exec(asked[1] ?? "")?.[1]);
    expect(resumedAfter).toBe(0);
  });

  it("does not retry an HTTP error: a handler that does not exist is a 404 at once", async () => {
    const error = await (async () => {
      for await (const _ of client.streamEvents("nope")) throw new Error("no event expected");
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "WorkflowClientError", status: 404, code: "handler_not_found" });
  });
});
