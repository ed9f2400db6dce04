import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../../events/index.ts";
import { Context } from "../../src/index.ts";
import { MemoryJournal } from "../../src/core/journal/memory-journal.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";
import { currentToolCall } from "../../src/tools/current-tool-call.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { restApiTool } from "../../workflows/tools/rest-api.ts";
import { startHrApiServer } from "../support/hr-api-server.ts";
import type { HrApiServer } from "../support/hr-api-server.ts";
import { gate } from "../support/gate.ts";
import { emailBob } from "../support/email-agent.ts";

let hr: HrApiServer | undefined;
afterEach(async () => {
  await hr?.close();
  hr = undefined;
});

const changesNeedApproval = (c: { input: unknown }) => (c.input as { method?: string }).method !== "GET";
const call = (id: string, method: string, path: string) => ({ id, name: "call_rest_api", input: { method, path } });

/** "Fire Lawson" against the HR API, saved while the DELETE waits for approval. */
async function savedAtApproval(baseURL: string): Promise<{ saved: string; approvalId: string }> {
  const llm = new ScriptedLLM([{ toolCalls: [call("c1", "GET", "/api/users?page=2")] }, { toolCalls: [call("c2", "DELETE", "/api/users/7")] }]);
  const agent = new FunctionCallingAgent({ llm, tools: [restApiTool({ baseURL, description: "The HR API." })], needsApproval: changesNeedApproval });
  const handler = agent.run({ input: "Fire Lawson" });
  for await (const ev of handler.streamEvents()) {
    if (ev instanceof ToolApprovalRequestEvent) {
      const saved = JSON.stringify(handler.ctx.toJSON());
      handler.cancel();
      await handler.catch(() => undefined);
      return { saved, approvalId: ev.approvalId };
    }
  }
  throw new Error("no approval was asked");
}

/** Resumes the saved run in this process, approves the DELETE, and returns what the model read for it. */
async function resumeApproving(baseURL: string, saved: string, approvalId: string): Promise<string> {
  const llm = new ScriptedLLM([{ text: "Done." }]);
  const agent = new FunctionCallingAgent({ llm, tools: [restApiTool({ baseURL, description: "The HR API." })], needsApproval: changesNeedApproval });
  const handler = agent.run(undefined, { ctx: Context.fromJSON(agent, saved) });
  handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId, approved: true }));
  const { sources } = await handler;
  return sources.at(-1)?.content ?? "";
}

const deletes = (server: HrApiServer) => server.requests.filter((r) => r.method === "DELETE");

describe("a saved run resumed twice runs its approved DELETE once", () => {
  it("in one process, one resume after the other: the second reads the first's recorded result", async () => {
    hr = await startHrApiServer();
    const { saved, approvalId } = await savedAtApproval(hr.baseURL);
    const first = await resumeApproving(hr.baseURL, saved, approvalId);
    const second = await resumeApproving(hr.baseURL, saved, approvalId);
    expect(deletes(hr).map((r) => r.path)).toEqual(["/api/users/7"]);
    expect(first).toBe('{"status":204,"body":""}');
    expect(second).toBe(first);
  });

  it("sends the call's idempotency key with the DELETE, the same for every attempt, and none with a GET", async () => {
    hr = await startHrApiServer();
    const { saved, approvalId } = await savedAtApproval(hr.baseURL);
    await resumeApproving(hr.baseURL, saved, approvalId);
    const [get] = hr.requests.filter((r) => r.method === "GET");
    const [del] = deletes(hr);
    expect(get?.idempotencyKey).toBeUndefined();
    expect(del?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    // The key is in the saved run: a resume with a fresh journal sends the DELETE again, with the same key, for the API to recognise.
    const agent = new FunctionCallingAgent({
      llm: new ScriptedLLM([{ text: "Done." }]),
      tools: [restApiTool({ baseURL: hr.baseURL, description: "The HR API." })],
      needsApproval: changesNeedApproval,
      journal: new MemoryJournal(),
    });
    const handler = agent.run(undefined, { ctx: Context.fromJSON(agent, saved) });
    handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId, approved: true }));
    await handler;
    expect(deletes(hr).map((r) => r.idempotencyKey)).toEqual([del?.idempotencyKey, del?.idempotencyKey]);
  });

  it("in one process, two resumes at once: the call runs once, and both read and report its real result", async () => {
    const fired: number[] = [];
    const release = gate();
    const keys: (string | undefined)[] = [];
    const fire = tool({
      name: "fire_employee",
      description: "Remove an employee.",
      parameters: z.object({ id: z.number() }),
      execute: async ({ id }) => {
        keys.push(currentToolCall()?.idempotencyKey);
        fired.push(id);
        await release.promise;
        return `Employee ${id} removed.`;
      },
    });
    const agentWith = (llm: ScriptedLLM) => new FunctionCallingAgent({ llm, tools: [fire], needsApproval: ["fire_employee"] });
    const handler = agentWith(new ScriptedLLM([{ toolCalls: [{ id: "f", name: "fire_employee", input: { id: 7 } }] }])).run({ input: "Fire 7" });
    let saved = "";
    let approvalId = "";
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        [saved, approvalId] = [JSON.stringify(handler.ctx.toJSON()), ev.approvalId];
        handler.cancel();
      }
    }
    await handler.catch(() => undefined);
    // The model says what the tool told it: what each resume reports to its user.
    const echo = () => new ScriptedLLM((request) => ({ text: `Told: ${String(request.messages.at(-1)?.content)}` }));
    const resume = () => {
      const agent = agentWith(echo());
      const run = agent.run(undefined, { ctx: Context.fromJSON(agent, saved) });
      run.ctx.sendEvent(new ToolApprovalEvent({ approvalId, approved: true }));
      return run;
    };
    const a = resume();
    const b = resume();
    // One of them is in the call; the other finds it started, and must wait for its result rather than answer at once.
    const bothAsked = Promise.race([a, b]).then(() => "a resume finished while the call was still running");
    await vi.waitFor(() => expect(keys).toHaveLength(1), { timeout: 20_000 });
    const early = await Promise.race([bothAsked, new Promise((resolve) => setImmediate(resolve, "waiting"))]);
    expect(early).toBe("waiting");
    release.open();
    const [first, second] = await Promise.all([a, b]);
    expect(fired).toEqual([7]);
    expect(keys).toHaveLength(1);
    for (const result of [first, second]) {
      expect(result.sources[0]).toMatchObject({ content: "Employee 7 removed.", isError: false });
      expect(result.response.content).toBe("Told: Employee 7 removed.");
    }
  });

  it("in two processes sharing a SQLite journal, started one after the other and both at once", async () => {
    const server = (hr = await startHrApiServer({ apiKey: "hr-secret" }));
    const dir = mkdtempSync(join(tmpdir(), "stepflow-once-"));
    const child = (snapshot: string, approvalId: string, db: string) =>
      new Promise<string>((resolve, reject) => {
        const proc = spawn(
          process.execPath,
          ["--import", "tsx", join(import.meta.dirname, "..", "support", "resume-child.ts"), snapshot, db, server.baseURL, approvalId],
          { stdio: ["ignore", "pipe", "inherit"] },
        );
        let out = "";
        proc.stdout.on("data", (d: Buffer) => (out += String(d)));
        proc.on("exit", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`child exited with ${code}`))));
      });
    for (const [name, together] of [
      ["one-after-the-other", false],
      ["at-once", true],
    ] as const) {
      hr.requests.length = 0;
      const { saved, approvalId } = await savedAtApproval(hr.baseURL);
      const snapshot = join(dir, `${name}.json`);
      writeFileSync(snapshot, saved);
      const db = join(dir, `${name}.db`);
      const told = together
        ? await Promise.all([child(snapshot, approvalId, db), child(snapshot, approvalId, db)])
        : [await child(snapshot, approvalId, db), await child(snapshot, approvalId, db)];
      expect({ name, deletes: deletes(hr).length }).toEqual({ name, deletes: 1 });
      // Each process tells its model what happened: the result, or (if the other was still in the call) that the outcome is unknown.
      // Each process tells its model the DELETE's real result: the one that ran it, and the one that waited for it.
      expect({ name, told }).toEqual({ name, told: ['{"status":204,"body":""}', '{"status":204,"body":""}'] });
      hr.users.push({ id: 7, email: "michael.lawson@reqres.in", first_name: "Michael", last_name: "Lawson" }); // hired back for the next round
    }
  }, 180_000);
});

describe("a run saved at any moment and resumed twice", () => {
  it("sends its email once in all, whenever the save happened after the model's call", async () => {
    for (let wait = 0; wait <= 60; wait++) {
      const { emails, sendEmail, handler } = emailBob();
      for (let i = 0; i < wait; i++) await Promise.resolve();
      const saved = handler.ctx.toJSON();
      handler.cancel();
      await handler.catch(() => undefined);
      // Saved before the model called the tool: each resume asks the model anew, and those are new calls.
      const callKnown = JSON.stringify(saved).includes('"send_email"');
      if (!saved.running || !callKnown) continue;
      for (let resume = 0; resume < 2; resume++) {
        const agent = new FunctionCallingAgent({ llm: new ScriptedLLM(() => ({ text: "Sent." })), tools: [sendEmail] });
        await agent.run(undefined, { ctx: Context.fromJSON(agent, JSON.stringify(saved)) });
      }
      expect({ wait, emails }).toEqual({ wait, emails: ["bob"] });
    }
  });
});
