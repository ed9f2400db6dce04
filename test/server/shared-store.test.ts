/**
 * Two servers on one store (a rolling restart): a run waiting for approval is run by one of
 * them only. The other answers an approval with 409 naming the server that runs it, and the
 * approved DELETE reaches the HR API once, though that API ignores Idempotency-Key. Once the
 * first server stops, the second takes the run over on the next request and runs the call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { restApiTool } from "../../workflows/tools/rest-api.ts";
import { startHrApiServer } from "../support/hr-api-server.ts";
import type { HrApiServer } from "../support/hr-api-server.ts";

const dir = mkdtempSync(join(tmpdir(), "stepflow-shared-store-"));
const open: WorkflowServer[] = [];
let hr: HrApiServer | undefined;
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await hr?.close();
  hr = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A server on `store` whose agent fires Lawson through the HR API, each change approved by a human. */
async function hrServer(store: string, baseURL: string): Promise<{ client: WorkflowClient; url: string }> {
  const llm = new ScriptedLLM((request) =>
    request.messages.some((m) => toolResultIdOf(m) !== undefined)
      ? { text: "Lawson has been let go." }
      : { toolCalls: [{ name: "call_rest_api", input: { method: "DELETE", path: "/api/users/7" } }] },
  );
  const agent = new FunctionCallingAgent({
    llm,
    tools: [restApiTool({ baseURL, description: "The HR API." })],
    needsApproval: (call) => (call.input as { method?: string }).method !== "GET",
    timeout: null,
  });
  const server = new WorkflowServer({ workflows: { hr: agent }, store });
  open.push(server);
  const { url } = await server.listen({ port: 0 });
  return { client: new WorkflowClient({ baseUrl: url }), url };
}

async function approvalAsked(client: WorkflowClient, id: string): Promise<StreamedEvent> {
  for await (const ev of client.streamEvents(id)) if (ev.type === "agent.ToolApprovalRequestEvent") return ev;
  throw new Error("the run ended without asking");
}

const approve = (url: string, id: string, approvalId: string) =>
  fetch(`${url}/api/handlers/${id}/approvals`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ approvalId, approved: true }),
  });

describe("two servers sharing one SQLite store", () => {
  it("run a waiting run on one of them: the other's approval is refused with 409, and the DELETE is sent once", { timeout: 120_000 }, async () => {
    const server = (hr = await startHrApiServer());
    const store = `sqlite:${join(dir, "both.db")}`;
    const { client: first, url: firstUrl } = await hrServer(store, server.baseURL);
    const started = await first.start("hr", { input: "Fire Lawson" });
    const asked = await approvalAsked(first, started.id);
    // The second server starts while the first runs (a rolling restart): it shows the run, and does not run it too.
    const { client: second, url: secondUrl } = await hrServer(store, server.baseURL);
    expect(await second.getHandler(started.id)).toMatchObject({ status: "waiting" });

    const refused = await approve(secondUrl, started.id, String(asked.data.approvalId));
    expect(refused.status).toBe(409);
    const { error } = (await refused.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("held_by_another_server");
    expect(error.message).toContain(`Handler ${started.id} is run by another server sharing this store (`);
    expect(error.message).toContain(`/${process.pid}/`);

    // A reader of the second server follows the run as the first saves it, to its end.
    const followed = (async () => {
      const events: StreamedEvent[] = [];
      for await (const ev of second.streamEvents(started.id)) events.push(ev);
      return events;
    })();
    expect((await approve(firstUrl, started.id, String(asked.data.approvalId))).status).toBe(202);
    expect(await first.wait(started.id)).toMatchObject({ status: "succeeded", result: { response: { content: "Lawson has been let go." } } });
    expect(server.requests.filter((r) => r.method === "DELETE").map((r) => r.path)).toEqual(["/api/users/7"]);
    const seen = await followed;
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.at(-1)).toMatchObject({ type: "RunEndedEvent", data: { status: "succeeded" } });
    // The second server reads the finished run from the store.
    expect(await second.getHandler(started.id)).toMatchObject({ status: "succeeded" });
  });

  it("take a run over once the server running it has stopped, and send its DELETE once", { timeout: 120_000 }, async () => {
    const server = (hr = await startHrApiServer());
    const store = `sqlite:${join(dir, "takeover.db")}`;
    const { client: first } = await hrServer(store, server.baseURL);
    const { client: second, url: secondUrl } = await hrServer(store, server.baseURL);
    const started = await first.start("hr", { input: "Fire Lawson" });
    const asked = await approvalAsked(first, started.id);
    await open.shift()?.close(); // the first server stops: its lease is given up

    expect((await approve(secondUrl, started.id, String(asked.data.approvalId))).status).toBe(202);
    const done = await second.wait(started.id);
    expect(done).toMatchObject({ status: "succeeded", result: { sources: [{ content: '{"status":204,"body":""}' }] } });
    await vi.waitFor(() => expect(server.requests.filter((r) => r.method === "DELETE")).toHaveLength(1));
    expect(server.requests.filter((r) => r.method === "DELETE")).toHaveLength(1);
  });
});
