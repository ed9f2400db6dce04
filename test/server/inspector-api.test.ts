/**
 * What the web page's inspector reads from the server, over real HTTP: one id for a run, the
 * stacks of failed steps, the humans' approval decisions and the other events sent in as events
 * of the run, with who sent them (kept with the saved run),
 * checkpoints, and forks of ended runs that start from them without inheriting approvals.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { HandlerInfo, StreamedEvent } from "../../src/client/types.ts";
import { type Context, Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { firingAgent, startServer } from "./server-fixtures.ts";
import { planWorkflow, siblingsWorkflow } from "../support/inspector-workflows.ts";

/** A promise the test resolves: where a step waits for the test to let it go on. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
const sideGate = gate();
const deleteGate = gate();
const deleted: string[] = [];

class Ask extends Event<Record<string, never>> {}
class Side extends Event<Record<string, never>> {}

/**
 * Deletes records once a human said yes, the answer recorded with `ctx.once` (so a run resumed
 * from its own context does not ask twice). A sibling step finishes after the answer and before
 * the deletion: the checkpoint after it holds the answer.
 */
class Guarded extends Workflow<Record<string, never>, string> {
  @step({ accepts: [StartEvent], emits: [Ask, Side] })
  async start(ctx: Context) {
    ctx.sendEvent(new Ask({}));
    ctx.sendEvent(new Side({}));
  }

  @step({ accepts: [Side], emits: [] })
  async side(_ctx: Context, _ev: Side) {
    await sideGate.promise;
  }

  @step({ accepts: [Ask], emits: [StopEvent] })
  async guarded(ctx: Context, _ev: Ask) {
    const answer = await ctx.once("approval", async () => {
      const ev = await ctx.waitForEvent(HumanResponseEvent, { waiterEvent: new InputRequiredEvent({ prefix: "Delete the records?" }) });
      return String((ev as HumanResponseEvent & { response?: unknown }).response);
    });
    if (answer.status === "unknown" || answer.value !== "yes") return new StopEvent({ result: "kept" });
    await deleteGate.promise;
    deleted.push("records");
    return new StopEvent({ result: "deleted" });
  }
}

const fired: number[] = [];
/** The model asks to fire employee 7 until it has a tool result, then says "Done.". */
const hr = () =>
  firingAgent(fired, (request) =>
    request.messages.some((m) => toolResultIdOf(m) !== undefined) ? { text: "Done." } : { toolCalls: [{ name: "fire_employee", input: { id: 7 } }] },
  );

let server: WorkflowServer;
let url: string;
let client: WorkflowClient;
beforeAll(async () => {
  ({ server, url } = await startServer({
    workflows: {
      hr: hr(),
      siblings: siblingsWorkflow("<img src=x onerror=alert(1)> stock check failed"),
      guarded: { workflow: new Guarded({ timeout: null }), events: [HumanResponseEvent] },
    },
  }));
  client = new WorkflowClient({ baseUrl: url });
});
afterAll(() => server.close());

const events = async (base: string, id: string): Promise<StreamedEvent[]> =>
  ((await (await fetch(`${base}/api/handlers/${id}/events?format=json`)).json()) as { events: StreamedEvent[] }).events;

/** Follows a handler's events until it asks for approval (or ends: undefined). */
async function approvalRequest(c: WorkflowClient, id: string): Promise<StreamedEvent | undefined> {
  for await (const ev of c.streamEvents(id)) if (ev.type === "agent.ToolApprovalRequestEvent") return ev;
  return undefined;
}

/** Runs the HR agent to its end, approving the firing with `reason`. */
async function approvedRun(c: WorkflowClient, headers: Record<string, string> = {}, base = url): Promise<HandlerInfo> {
  const started = await c.start("hr", { input: "Fire Lawson" });
  const request = await approvalRequest(c, started.id);
  const answer = await fetch(`${base}/api/handlers/${started.id}/approvals`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ approvalId: request?.data.approvalId, approved: true, reason: "HR signed off." }),
  });
  expect(answer.status).toBe(202);
  return c.wait(started.id);
}

describe("one id for a run", () => {
  it("names the handler by its run's runId, as its lifecycle events do", async () => {
    const done = await approvedRun(client);
    expect(done.id).toBe(done.runId);
    const started = (await events(url, done.id)).find((ev) => ev.type === "RunStartedEvent");
    expect(started?.data.runId).toBe(done.id);
  });
});

/** The user's own code, called by a step before its first `await`. */
function checkStock(sku: string): never {
  throw new Error(`no stock for ${sku}`);
}

class ThrowsAtOnce extends Workflow<{ sku: string }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async reserve(_ctx: Context, ev: StartEvent<{ sku: string }>): Promise<StopEvent<string>> {
    return new StopEvent({ result: checkStock(ev.sku) });
  }
}

describe("a failed step", () => {
  it("shows the user's frames of its stack, without the engine's below them", async () => {
    const own = await startServer({ workflows: { reserve: new ThrowsAtOnce({ timeout: null }) } });
    try {
      const ownClient = new WorkflowClient({ baseUrl: own.url });
      const done = await ownClient.wait((await ownClient.start("reserve", { sku: "A-7" })).id);
      const failed = (await events(own.url, done.id)).find((ev) => ev.type === "StepStateChangedEvent" && ev.data.state === "failed");
      for (const stack of [String(done.error?.stack), String(failed?.data.stack)]) {
        const lines = stack.split("\n");
        expect(lines[0]).toBe("Error: no stock for A-7");
        expect(lines[1]).toMatch(/^\s+at checkStock .*inspector-api\.test\.ts:\d+/);
        expect(lines[2]).toMatch(/^\s+at .*reserve .*inspector-api\.test\.ts:\d+/);
        expect(lines.at(-1)).toMatch(/^\s+… \d+ frames? of stepflow's engine and Node\.js left out$/);
        expect(stack).not.toContain("/src/core/");
      }
    } finally {
      await own.server.close();
    }
  });

  it("ends its sibling cancelled, and carries its stack, as the run's error does", async () => {
    const started = await client.start("siblings", {});
    const done = await client.wait(started.id);
    expect(done.status).toBe("failed");
    expect(done.error?.message).toBe("<img src=x onerror=alert(1)> stock check failed");
    expect(done.error?.stack).toContain("stock check failed");
    expect(done.error?.stack).toMatch(/inspector-workflows\.ts:\d+/);
    const steps = (await events(url, started.id)).filter((ev) => ev.type === "StepStateChangedEvent");
    expect(steps.map((ev) => [ev.data.step, ev.data.state])).toEqual(
      expect.arrayContaining([
        ["slow", "cancelled"],
        ["fast", "failed"],
      ]),
    );
    expect(steps.filter((ev) => ev.data.step === "slow").map((ev) => ev.data.state)).toEqual(["started", "cancelled"]);
    const failed = steps.find((ev) => ev.data.state === "failed");
    expect(failed?.data.error).toBe("<img src=x onerror=alert(1)> stock check failed");
    expect(String(failed?.data.stack)).toMatch(/^Error: <img src=x onerror=alert\(1\)> stock check failed\n\s+at /);
    // The stack is kept for a failed step only.
    expect(steps.filter((ev) => ev.data.stack !== undefined)).toEqual([failed]);
  });
});

describe("approval decisions", () => {
  it("are events of the run, in order, saying who, when, which call and why, and stay with the saved run, as its checkpoints do", async () => {
    const dir = mkdtempSync(join(tmpdir(), "decisions-"));
    const store = `sqlite:${join(dir, "runs.db")}`;
    try {
      const first = new WorkflowServer({ workflows: { hr: hr() }, store });
      const base = (await first.listen({ port: 0 })).url;
      const done = await approvedRun(new WorkflowClient({ baseUrl: base }), { "X-Stepflow-Client": " web\tpage " }, base);
      await first.close();

      const second = new WorkflowServer({ workflows: { hr: hr() }, store });
      const again = (await second.listen({ port: 0 })).url;
      const saved = await events(again, done.id);
      // Its checkpoints were saved too: the restarted server forks it.
      const secondClient = new WorkflowClient({ baseUrl: again });
      const points = await secondClient.checkpoints(done.id);
      expect(points.map((p) => p.label)).toContain("asked agent.ToolApprovalRequestEvent");
      const fork = await secondClient.fork(done.id, { at: points.find((p) => p.label.startsWith("asked "))?.seq });
      expect((await approvalRequest(secondClient, fork.id))?.data.prefix).toBe('Run fire_employee with {"id":7}? (yes/no)');
      await second.close();
      const decision = saved.find((ev) => ev.type === "ApprovalDecision");
      expect(decision?.data).toEqual({
        approvalId: expect.any(String),
        approved: true,
        reason: "HR signed off.",
        by: "local user",
        label: "web page",
        question: 'Run fire_employee with {"id":7}? (yes/no)',
        toolCall: { id: expect.any(String), name: "fire_employee", input: { id: 7 } },
      });
      expect(Number.isNaN(Date.parse(String(decision?.at)))).toBe(false);
      const types = saved.map((ev) => ev.type);
      const asked = types.indexOf("agent.ToolApprovalRequestEvent");
      const decided = types.indexOf("ApprovalDecision");
      const ran = types.indexOf("agent.FunctionOutputEvent");
      expect(asked).toBeGreaterThanOrEqual(0);
      expect(decided).toBeGreaterThan(asked);
      expect(ran).toBeGreaterThan(decided);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("name the token holder, or the principal the operator's hook vouches for; a denial sent as an event is one too", async () => {
    const tokened = await startServer({ workflows: { hr: hr() }, token: "s3cret" });
    const proxied = await startServer({ workflows: { hr: hr() }, principal: (request) => request.headers.get("x-proxy-user") ?? undefined });
    try {
      const withToken = new WorkflowClient({ baseUrl: tokened.url, token: "s3cret" });
      const a = await approvedRun(withToken, { authorization: "Bearer s3cret" }, tokened.url);
      const aEvents = await (await fetch(`${tokened.url}/api/handlers/${a.id}/events?format=json`, { headers: { authorization: "Bearer s3cret" } })).json();
      expect((aEvents as { events: StreamedEvent[] }).events.find((ev) => ev.type === "ApprovalDecision")?.data.by).toBe("bearer token holder");

      const viaProxy = new WorkflowClient({ baseUrl: proxied.url });
      const started = await viaProxy.start("hr", { input: "Fire Lawson" });
      const request = await approvalRequest(viaProxy, started.id);
      const denied = await fetch(`${proxied.url}/api/handlers/${started.id}/events`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Proxy-User": "alice@example.com" },
        body: JSON.stringify({ type: "agent.ToolApprovalEvent", data: { approvalId: request?.data.approvalId, approved: false, reason: "Ask HR first." } }),
      });
      expect(denied.status).toBe(202);
      await viaProxy.wait(started.id);
      const decision = (await events(proxied.url, started.id)).find((ev) => ev.type === "ApprovalDecision");
      expect(decision?.data).toMatchObject({ approved: false, reason: "Ask HR first.", by: "alice@example.com" });
    } finally {
      await tokened.server.close();
      await proxied.server.close();
    }
  });
});

describe("events sent in from outside", () => {
  it("are events of the run where it took them, naming the principal and the client's label, and stay with the saved run; refused ones leave nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "received-"));
    const store = `sqlite:${join(dir, "runs.db")}`;
    const principal = (request: Request) => request.headers.get("x-proxy-user") ?? undefined;
    try {
      const first = new WorkflowServer({ workflows: { plan: planWorkflow() }, store, principal });
      const base = (await first.listen({ port: 0, host: "127.0.0.1" })).url;
      const firstClient = new WorkflowClient({ baseUrl: base });
      const started = await firstClient.start("plan", {});
      for await (const ev of firstClient.streamEvents(started.id)) if (ev.type === "InputRequiredEvent") break;
      const send = (type: string, data: object) =>
        fetch(`${base}/api/handlers/${started.id}/events`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Proxy-User": "alice@example.com", "X-Stepflow-Client": " ops\tconsole " },
          body: JSON.stringify({ type, data }),
        });
      // Refused: the run's own events are not a client's to send.
      expect((await send("StopEvent", { result: "forged" })).status).toBe(403);
      // The identity a client writes into its event is the event's content, not who sent it.
      const answer = { response: '{"plan":"pro","seats":3}', by: "mallory" };
      expect((await send("HumanResponseEvent", answer)).status).toBe(202);
      expect(await firstClient.wait(started.id)).toMatchObject({ status: "succeeded", result: answer.response });
      // Refused: the run has ended.
      expect((await send("HumanResponseEvent", { response: "too late" })).status).toBe(409);
      await first.close();

      const second = new WorkflowServer({ workflows: { plan: planWorkflow() }, store });
      const again = (await second.listen({ port: 0, host: "127.0.0.1" })).url;
      const saved = await events(again, started.id);
      await second.close();
      const received = saved.filter((ev) => ev.type === "EventReceivedEvent");
      expect(received.map((ev) => ev.data)).toEqual([
        { runId: started.id, type: "HumanResponseEvent", data: answer, by: "alice@example.com", label: "ops console" },
      ]);
      expect(Number.isNaN(Date.parse(String(received[0]?.at)))).toBe(false);
      // In order: after the question, before the step that took the answer finished.
      const types = saved.map((ev) => (ev.type === "StepStateChangedEvent" ? `${String(ev.data.step)} ${String(ev.data.state)}` : ev.type));
      expect(types).toEqual([
        "RunStartedEvent",
        "ask started",
        "InputRequiredEvent",
        "WorkflowIdleEvent",
        "EventReceivedEvent",
        "ask finished",
        "StopEvent",
        "RunEndedEvent",
      ]);
      expect(JSON.stringify(saved)).not.toContain("forged");
      expect(JSON.stringify(saved)).not.toContain("too late");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an answer to an approval is its ApprovalDecision alone, where the run took it", async () => {
    const done = await approvedRun(client);
    const types = (await events(url, done.id)).map((ev) => ev.type);
    expect(types.filter((type) => type === "ApprovalDecision")).toHaveLength(1);
    expect(types).not.toContain("EventReceivedEvent");
  });
});

describe("checkpoints and forks", () => {
  it("lists the points of an ended run, from before its first step to each step and question", async () => {
    const done = await approvedRun(client);
    const points = await client.checkpoints(done.id);
    expect(points[0]).toMatchObject({ seq: 0, label: "start" });
    expect(points.map((p) => p.label)).toContain("asked agent.ToolApprovalRequestEvent");
    expect(points.some((p) => p.label.startsWith("after step "))).toBe(true);
    const seqs = points.map((p) => p.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    const log = await events(url, done.id);
    for (const point of points.filter((p) => p.label.startsWith("after step "))) {
      // The point follows the step's "finished" event.
      expect(log[point.seq - 1]).toMatchObject({ type: "StepStateChangedEvent", data: { state: "finished", step: point.label.slice("after step ".length) } });
    }
  });

  it("forks from the start under a new id that says where it came from, and the fork asks for the approval again", async () => {
    const done = await approvedRun(client);
    const before = fired.length;
    const fork = await client.fork(done.id, { at: 0 });
    expect(fork.id).not.toBe(done.id);
    expect(fork.id).toBe(fork.runId);
    expect(fork.forkedFrom).toEqual({ handlerId: done.id, seq: 0, label: "start" });
    expect(fork.input).toEqual(done.input);
    const request = await approvalRequest(client, fork.id);
    expect(request?.data.prefix).toBe('Run fire_employee with {"id":7}? (yes/no)');
    expect((await client.getHandler(fork.id)).status).toBe("waiting");
    expect(fired.length).toBe(before);
    await client.approve(fork.id, String(request?.data.approvalId), true);
    expect(await client.wait(fork.id)).toMatchObject({ status: "succeeded", forkedFrom: { handlerId: done.id } });
    expect(fired.slice(before)).toEqual([7]);
    expect((await client.listHandlers()).find((h) => h.id === fork.id)?.forkedFrom?.handlerId).toBe(done.id);
  });

  it("no fork, from any checkpoint, makes an approved call again without a new approval", async () => {
    const done = await approvedRun(client);
    const before = fired.length;
    const points = await client.checkpoints(done.id);
    expect(points.length).toBeGreaterThan(2);
    let asked = 0;
    for (const point of points) {
      const fork = await client.fork(done.id, { at: point.seq });
      expect(fork.forkedFrom).toMatchObject({ seq: point.seq, label: point.label });
      // Each fork either asks again or ends without calling the tool.
      const request = await approvalRequest(client, fork.id);
      if (request) {
        asked++;
        await client.cancel(fork.id);
      }
      expect(fired.length).toBe(before);
    }
    // From the start, and from the question itself, the fork asks.
    expect(asked).toBeGreaterThanOrEqual(2);
  });

  it("a fork from a point after a human's answer asks the human again: the answer was given to the other run", async () => {
    const started = await client.start("guarded", {});
    const stream = client.streamEvents(started.id);
    const next = async (test: (ev: StreamedEvent) => boolean) => {
      for (;;) {
        const { value, done } = await stream.next();
        if (done) throw new Error("the run ended first");
        if (test(value)) return value;
      }
    };
    await next((ev) => ev.type === "InputRequiredEvent");
    await client.sendEvent(started.id, "HumanResponseEvent", { response: "yes" });
    sideGate.open();
    const sideDone = await next((ev) => ev.type === "StepStateChangedEvent" && ev.data.step === "side" && ev.data.state === "finished");
    deleteGate.open();
    await stream.return(undefined);
    expect(await client.wait(started.id)).toMatchObject({ status: "succeeded", result: "deleted" });
    expect(deleted).toEqual(["records"]);

    const point = (await client.checkpoints(started.id)).find((p) => p.label === "after step side");
    expect(point?.seq).toBe(sideDone.seq);
    const fork = await client.fork(started.id, { at: point?.seq });
    for await (const ev of client.streamEvents(fork.id)) if (ev.type === "InputRequiredEvent") break;
    expect((await client.getHandler(fork.id)).status).toBe("waiting");
    expect(deleted).toEqual(["records"]);
    await client.sendEvent(fork.id, "HumanResponseEvent", { response: "no" });
    expect(await client.wait(fork.id)).toMatchObject({ status: "succeeded", result: "kept" });
    expect(deleted).toEqual(["records"]);
  });

  it("forks a failed run from its last checkpoint by default", async () => {
    const started = await client.start("siblings", {});
    await client.wait(started.id);
    const points = await client.checkpoints(started.id);
    const fork = await client.fork(started.id);
    expect(fork.forkedFrom).toEqual({ handlerId: started.id, seq: points.at(-1)?.seq, label: points.at(-1)?.label });
    expect(await client.wait(fork.id)).toMatchObject({ status: "failed", error: { message: "<img src=x onerror=alert(1)> stock check failed" } });
  });

  it("refuses a run still going, a checkpoint it does not have, and a bad body, saying what to do", async () => {
    const started = await client.start("hr", { input: "Fire Lawson" });
    await approvalRequest(client, started.id);
    expect(await client.fork(started.id).catch((e: unknown) => e)).toMatchObject({
      status: 409,
      code: "not_finished",
      message: `Handler ${started.id} is still waiting; fork it once it has ended (or cancel it first).`,
    });
    await client.cancel(started.id);
    const points = await client.checkpoints(started.id);
    expect(await client.fork(started.id, { at: 999 }).catch((e: unknown) => e)).toMatchObject({
      status: 404,
      code: "checkpoint_not_found",
      message: `Handler ${started.id} has no checkpoint at 999. Its checkpoints are at: ${points.map((p) => p.seq).join(", ")} (GET /api/handlers/${started.id}/checkpoints).`,
    });
    const bad = await fetch(`${url}/api/handlers/${started.id}/fork`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"at":-1}' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("body.at");
    expect(await client.fork("no-such-run").catch((e: unknown) => e)).toMatchObject({ status: 404, code: "handler_not_found" });
  });

  it("are in the OpenAPI document", async () => {
    const doc = (await (await fetch(`${url}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/handlers/{id}/checkpoints", "/api/handlers/{id}/fork"]));
  });
});
