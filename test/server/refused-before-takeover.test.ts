/**
 * A run in a shared store whose server has gone (stopped, or its lease ran out) is taken over
 * by the next server that serves a request for it. A request that server refuses (a body that
 * is not JSON or not valid, an event the workflow does not accept, an approval not asked, a
 * fork or a continueFrom of a run that has not ended) must change nothing: the run is not taken
 * over, its lease is not written, nothing is saved. The first request it accepts takes it over.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import { HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import type { SessionStore } from "../../src/sessions/types.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { dyingStore } from "./dying-store.ts";

/** Asks which plan, and ends with the answer. */
class Plan extends Workflow<object, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async ask(ctx: Context) {
    const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: "Which plan?" }) });
    return new StopEvent({ result: answer.response });
  }
}

const dir = mkdtempSync(join(tmpdir(), "stepflow-refused-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

/** The run's record as the store has it: its version, and its snapshot (the handler, its context and its lease). */
async function record(store: SessionStore, id: string): Promise<{ version: number; snapshot: string; holder: string | undefined }> {
  const found = await store.load(`handler:${id}`, { newest: 0 });
  if (!found) throw new Error(`no handler ${id} in the store`);
  const lease = (JSON.parse(found.snapshot) as { lease?: { holder: string } }).lease;
  return { version: found.version, snapshot: found.snapshot, holder: lease?.holder };
}

const post = (url: string, path: string, body: string, type = "application/json") =>
  fetch(`${url}${path}`, { method: "POST", headers: { "Content-Type": type }, body });

describe.each(["stopped", "its lease ran out"] as const)("a stored run whose server %s", (how) => {
  it("is not taken over by a request that is refused; the first one accepted takes it over", { timeout: 60_000 }, async () => {
    if (how === "its lease ran out") vi.useFakeTimers({ toFake: ["Date"] });
    const sqlite = await openSessionStore(`sqlite:${join(dir, `${how.split(" ").at(-1)}.db`)}`);
    const dying = dyingStore(sqlite);
    const first = new WorkflowServer({ workflows: { plan: new Plan({ timeout: null }) }, store: dying.store, onError: () => {} });
    const second = new WorkflowServer({ workflows: { plan: new Plan({ timeout: null }) }, store: sqlite });
    try {
      const firstClient = new WorkflowClient({ baseUrl: (await first.listen({ port: 0 })).url });
      const url = (await second.listen({ port: 0 })).url;
      const { id } = await firstClient.start("plan", {});
      for await (const ev of firstClient.streamEvents(id)) if (ev.type === "InputRequiredEvent") break;
      // The first server writes nothing more; then it stops, or it stalls past its lease.
      dying.die();
      if (how === "stopped") await first.close();
      else vi.setSystemTime(Date.now() + 31_000);
      const before = await record(sqlite, id);

      const events = `/api/handlers/${id}/events`;
      const requests: [path: string, body: string, type?: string][] = [
        [events, '{"type":"HumanResponseEvent","data":{}}', "text/plain"],
        [events, '{"type":'],
        [events, JSON.stringify({ data: { response: "pro" } })],
        [events, JSON.stringify({ type: "StopEvent", data: { result: "forged" } })],
        [events, JSON.stringify({ type: "HumanResponseEvent", data: { constructor: "StopEvent" } })],
        [events, JSON.stringify({ type: "HumanResponseEvent", data: { approvalId: "never-asked", response: "pro" } })],
        [`/api/handlers/${id}/approvals`, JSON.stringify({ approvalId: 7, approved: true })],
        [`/api/handlers/${id}/approvals`, JSON.stringify({ approvalId: "never-asked", approved: true })],
        [`/api/handlers/${id}/fork`, JSON.stringify({ at: "last" })],
        [`/api/handlers/${id}/fork`, "{}"],
        ["/api/workflows/plan/start", JSON.stringify({ input: {}, continueFrom: id })],
      ];
      const answers: { status: number; code: string; message: string }[] = [];
      for (const [path, body, type] of requests) {
        const response = await post(url, path, body, type);
        answers.push({ status: response.status, ...((await response.json()) as { error: { code: string; message: string } }).error });
        // Each refused request leaves the record as it was: the same version, the same lease (the first server's).
        expect(await record(sqlite, id), `${path} ${body}`).toEqual(before);
      }
      expect(answers.map(({ status, code }) => `${status} ${code}`)).toEqual([
        "415 not_json",
        "400 invalid_json",
        "400 invalid_request",
        "403 event_not_accepted",
        "400 invalid_event",
        "404 approval_not_found",
        "400 invalid_request",
        "404 approval_not_found",
        "400 invalid_request",
        "409 not_finished",
        "409 not_finished",
      ]);
      expect(answers[3]).toMatchObject({
        message: 'plan does not accept events of type "StopEvent" from outside a run. It accepts: HumanResponseEvent.',
      });
      expect(answers[9]).toMatchObject({ message: `Handler ${id} is still waiting; fork it once it has ended (or cancel it first).` });
      expect(answers[10]).toMatchObject({ message: `Handler ${id} has not finished yet (waiting); continue from it once it has.` });

      // The second server runs nothing.
      expect(before.holder).toContain(`/${process.pid}/`);
      expect(second.stats()).toMatchObject({ live: 0, handlers: 0 });

      // The answer the run waits for is accepted: the second server takes the run over, and it ends with it.
      expect((await post(url, events, JSON.stringify({ type: "HumanResponseEvent", data: { response: "pro" } }))).status).toBe(202);
      const after = await record(sqlite, id);
      expect(after.version).toBeGreaterThan(before.version);
      expect(after.holder).not.toBe(before.holder);
      expect(await new WorkflowClient({ baseUrl: url }).wait(id)).toMatchObject({ status: "succeeded", result: "pro" });
    } finally {
      await first.close();
      await second.close();
      await sqlite.close();
    }
  });
});
