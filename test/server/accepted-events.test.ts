/**
 * An event the server answered 202 for is in the store: a server that dies right after
 * answering (it writes nothing more, as a killed process does) loses nothing the client was told
 * was accepted. A server restarted on the same SQLite file, or one sharing it that takes the
 * run over, continues the run with that event and its record (who sent it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatMessage } from "@llamaindex/core/llms";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import type { LocalReply } from "../../src/llm/local-llm.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { dyingStore } from "./dying-store.ts";

/** Asks which plan, then (once `hold` lets it) ends with the answer. */
class Plan extends Workflow<object, string> {
  hold: Promise<void> = Promise.resolve();

  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async ask(ctx: Context) {
    const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: "Which plan?" }) });
    await this.hold;
    return new StopEvent({ result: answer.response });
  }
}

/** A model that asks to fire employee 7, then, asked again, never answers: the run saves nothing more of its own accord. */
class SilentAfterCall extends ScriptedLLM {
  #calls = 0;
  protected override reply(messages: ChatMessage[], tools: string[]): Promise<LocalReply> {
    return this.#calls++ === 0 ? super.reply(messages, tools) : new Promise<never>(() => {});
  }
}

/** The HR agent: firing needs approval; `llm` decides what it does. */
function hr(fired: number[], llm: ScriptedLLM): FunctionCallingAgent {
  const fireEmployee = tool({
    name: "fire_employee",
    description: "Remove an employee from the HR system.",
    parameters: z.object({ id: z.number() }),
    execute: ({ id }) => (fired.push(id), `employee ${id} removed`),
  });
  return new FunctionCallingAgent({ llm, tools: [fireEmployee], needsApproval: ["fire_employee"], timeout: null });
}

/** A plan whose step, once answered, never ends: the server that runs it saves nothing more of its own accord. */
function stuckPlan(): Plan {
  const plan = new Plan({ timeout: null });
  plan.hold = new Promise<void>(() => {});
  return plan;
}

const dir = mkdtempSync(join(tmpdir(), "stepflow-accepted-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The run's events from `after` on, until it ends or asks a question again. */
async function nextOutcome(client: WorkflowClient, id: string, after: number): Promise<StreamedEvent[]> {
  const seen: StreamedEvent[] = [];
  for await (const ev of client.streamEvents(id, { after })) {
    seen.push(ev);
    if (ev.type === "RunEndedEvent" || ev.type === "InputRequiredEvent" || ev.type === "agent.ToolApprovalRequestEvent") break;
  }
  return seen;
}

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, { method: "POST", headers: { "Content-Type": "application/json", "X-Stepflow-Client": "ops console" }, body: JSON.stringify(body) });

describe.each(["restarted on the same file", "sharing the file, taking the run over"] as const)("a server %s", (how) => {
  it("has an event the dead server answered 202 for, with its record, and the run goes on with it", { timeout: 60_000 }, async () => {
    const file = join(dir, `${how.split(" ")[0]}.db`);
    const sqlite = await openSessionStore(`sqlite:${file}`);
    const dying = dyingStore(sqlite);
    const first = new WorkflowServer({ workflows: { plan: stuckPlan() }, store: dying.store, onError: () => {} });
    const firstUrl = (await first.listen({ port: 0 })).url;
    const firstClient = new WorkflowClient({ baseUrl: firstUrl });
    // Taking over: a server already running on the file, which shows the run but does not run it.
    const next = how.startsWith("sharing") ? new WorkflowServer({ workflows: { plan: new Plan({ timeout: null }) }, store: `sqlite:${file}` }) : undefined;
    const nextUrl = next ? (await next.listen({ port: 0 })).url : undefined;
    try {
      const { id } = await firstClient.start("plan", {});
      const asked = await nextOutcome(firstClient, id, 0);
      expect(asked.at(-1)).toMatchObject({ type: "InputRequiredEvent" });

      const answer = await post(firstUrl, `/api/handlers/${id}/events`, { type: "HumanResponseEvent", data: { response: "pro" } });
      expect(answer.status).toBe(202);
      // The process dies the moment the client has its 202: nothing it would write afterwards reaches the file.
      dying.die();
      await first.close();

      const server = next ?? new WorkflowServer({ workflows: { plan: new Plan({ timeout: null }) }, store: `sqlite:${file}` });
      const url = nextUrl ?? (await server.listen({ port: 0 })).url;
      try {
        const client = new WorkflowClient({ baseUrl: url });
        // The run is not asked again: it has the answer, and ends with it.
        const outcome = await nextOutcome(client, id, asked.length);
        expect(outcome.map((ev) => ev.type)).not.toContain("InputRequiredEvent");
        expect(await client.wait(id)).toMatchObject({ status: "succeeded", result: "pro" });
        const events = ((await (await fetch(`${url}/api/handlers/${id}/events?format=json`)).json()) as { events: StreamedEvent[] }).events;
        expect(events.filter((ev) => ev.type === "EventReceivedEvent").map((ev) => ev.data)).toEqual([
          expect.objectContaining({ type: "HumanResponseEvent", data: { response: "pro" }, by: "local user", label: "ops console" }),
        ]);
      } finally {
        await server.close();
      }
    } finally {
      await first.close();
      await next?.close();
      await sqlite.close();
    }
  });
});

describe("an approval the server answered 202 for", () => {
  it("is in the store with its decision: a restarted server goes on with the denial without asking again", { timeout: 60_000 }, async () => {
    const file = join(dir, "approval.db");
    const sqlite = await openSessionStore(`sqlite:${file}`);
    const dying = dyingStore(sqlite);
    const fired: number[] = [];
    const toFire = [{ toolCalls: [{ name: "fire_employee", input: { id: 7 } }] }];
    const first = new WorkflowServer({ workflows: { hr: hr(fired, new SilentAfterCall(toFire)) }, store: dying.store, onError: () => {} });
    const firstUrl = (await first.listen({ port: 0 })).url;
    const firstClient = new WorkflowClient({ baseUrl: firstUrl });
    try {
      const { id } = await firstClient.start("hr", { input: "Fire Lawson" });
      const asked = await nextOutcome(firstClient, id, 0);
      const question = asked.at(-1);
      expect(question).toMatchObject({ type: "agent.ToolApprovalRequestEvent" });
      const answer = await post(firstUrl, `/api/handlers/${id}/approvals`, {
        approvalId: question?.data.approvalId,
        approved: false,
        reason: "Not this week.",
      });
      expect(answer.status).toBe(202);
      dying.die();
      await first.close();

      const server = new WorkflowServer({ workflows: { hr: hr(fired, new ScriptedLLM([{ text: "Lawson stays." }])) }, store: `sqlite:${file}` });
      const url = (await server.listen({ port: 0 })).url;
      try {
        const client = new WorkflowClient({ baseUrl: url });
        const outcome = await nextOutcome(client, id, asked.length);
        expect(outcome.map((ev) => ev.type)).not.toContain("agent.ToolApprovalRequestEvent");
        expect(outcome.find((ev) => ev.type === "agent.FunctionOutputEvent")?.data.output).toMatchObject({
          content: expect.stringContaining("did not approve"),
        });
        expect(await client.wait(id)).toMatchObject({ status: "succeeded", result: { response: { content: "Lawson stays." } } });
        expect(fired).toEqual([]);
        const events = ((await (await fetch(`${url}/api/handlers/${id}/events?format=json`)).json()) as { events: StreamedEvent[] }).events;
        expect(events.filter((ev) => ev.type === "ApprovalDecision").map((ev) => ev.data)).toEqual([
          expect.objectContaining({ approvalId: question?.data.approvalId, approved: false, reason: "Not this week.", by: "local user", label: "ops console" }),
        ]);
      } finally {
        await server.close();
      }
    } finally {
      await first.close();
      await sqlite.close();
    }
  });
});

describe("an event the store refuses", () => {
  it("gets 500 not_saved saying the run has it here and what to do, not 202", { timeout: 60_000 }, async () => {
    const sqlite = await openSessionStore(`sqlite:${join(dir, "refused.db")}`);
    const dying = dyingStore(sqlite);
    const server = new WorkflowServer({ workflows: { plan: new Plan({ timeout: null }) }, store: dying.store, onError: () => {} });
    const url = (await server.listen({ port: 0 })).url;
    const client = new WorkflowClient({ baseUrl: url });
    try {
      const { id } = await client.start("plan", {});
      await nextOutcome(client, id, 0);
      dying.die();
      const answer = await post(url, `/api/handlers/${id}/events`, { type: "HumanResponseEvent", data: { response: "pro" } });
      expect({ status: answer.status, ...((await answer.json()) as { error: object }).error }).toEqual({
        status: 500,
        code: "not_saved",
        message: `Handler ${id} took the event, but the store refused it: the server process is gone, so a restart would lose it. The run goes on with it on this server for now. Check the store (free disk space, the database reachable); if the run asks for the event again (GET /api/handlers/${id} lists what it waits for), send it again.`,
      });
      // The run took it: it ends with that answer here.
      expect(await client.wait(id)).toMatchObject({ status: "succeeded", result: "pro" });
    } finally {
      await server.close();
      await sqlite.close();
    }
  });
});
