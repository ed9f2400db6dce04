/**
 * A client of the server as an attacker would be: crafted events, contexts, ids and headers,
 * each trying to switch off a guarantee of docs/server.md or docs/security.md (a question stays
 * open until the run has its answer; what a run was told, and by whom, is in its record; an
 * answer given to one run is never taken for another). What is covered elsewhere (event types a
 * workflow does not take, approvals never asked, mid-run contexts refused, the Host check, body
 * limits) is not repeated here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { firingAgent, startServer } from "./server-fixtures.ts";

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
  }));
  client = new WorkflowClient({ baseUrl: url });
});
afterAll(() => server.close());

const post = (path: string, body: unknown) =>
  fetch(`${url}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

/** Follows a handler's events until it asks for approval; returns that request. */
async function approvalRequest(id: string): Promise<StreamedEvent> {
  for await (const ev of client.streamEvents(id)) if (ev.type === "agent.ToolApprovalRequestEvent") return ev;
  throw new Error("the run ended without asking");
}

async function savedEvents(id: string): Promise<StreamedEvent[]> {
  return ((await (await fetch(`${url}/api/handlers/${id}/events?format=json`)).json()) as { events: StreamedEvent[] }).events;
}

describe("an approval's question", () => {
  it("stays open for an event that carries its approvalId but is not the workflow's answer, which is recorded as what it was", async () => {
    const { id } = await client.start("hr", { input: "Fire Lawson" });
    const asked = await approvalRequest(id);
    const approvalId = String(asked.data.approvalId);
    // A plain HumanResponseEvent dressed as an approval: the agent waits for an agent.ToolApprovalEvent, not this.
    const dressed = await post(`/api/handlers/${id}/events`, { type: "HumanResponseEvent", data: { approvalId, approved: true } });
    expect(dressed.status).toBe(202);
    // The run did not take it as the answer: the question is still there to answer, and answering it works.
    const after = await client.getHandler(id);
    expect(after).toMatchObject({ status: "waiting", waitingFor: [expect.objectContaining({ data: expect.objectContaining({ approvalId }) })] });
    const before = fired.length;
    await client.approve(id, approvalId, false, "Not this week.");
    expect(await client.wait(id)).toMatchObject({ status: "succeeded", result: { response: { content: "Done." } } });
    expect(fired.length).toBe(before);
    // The record says what was sent, and the one decision is the human's denial, not a forged "approved".
    const events = await savedEvents(id);
    expect(events.filter((ev) => ev.type === "ApprovalDecision").map((ev) => ev.data)).toEqual([
      expect.objectContaining({ approvalId, approved: false, reason: "Not this week.", by: "local user" }),
    ]);
    expect(events.filter((ev) => ev.type === "EventReceivedEvent").map((ev) => ev.data)).toEqual([
      expect.objectContaining({ type: "HumanResponseEvent", data: { approvalId, approved: true }, by: "local user" }),
    ]);
  });
});
