/**
 * A run waiting for approval survives the server: stopped cleanly or killed, a new server on
 * the same store has it, takes the answer, and the run finishes, with its events from before
 * the restart still there to read.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { REPO } from "../support/run-typescript.ts";

const dir = mkdtempSync(join(tmpdir(), "stepflow-restart-"));
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Starts test/support/server-child.ts on `store`; resolves with its URL once it listens. */
async function startChild(store: string, namespace: string): Promise<{ child: ChildProcess; client: WorkflowClient }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL"]) delete env[name];
  const child = spawn(process.execPath, ["--import", "tsx", join(REPO, "test/support/server-child.ts"), store, namespace], {
    cwd: REPO,
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.add(child);
  const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`the server process exited (${code}) before listening`))));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const listening = new Promise<string>((resolve) => lines.once("line", resolve));
  const url = await Promise.race([listening, exited]);
  return { child, client: new WorkflowClient({ baseUrl: url }) };
}

async function stop(child: ChildProcess, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
  children.delete(child);
}

async function approvalRequest(client: WorkflowClient, id: string): Promise<StreamedEvent> {
  for await (const ev of client.streamEvents(id)) if (ev.type === "agent.ToolApprovalRequestEvent") return ev;
  throw new Error("the run ended without asking");
}

const stores: [string, string | undefined][] = [
  ["SQLite", `sqlite:${join(dir, "server.db")}`],
  ["PostgreSQL", process.env.DATABASE_URL],
];

describe.each(stores)("a server on %s", (_name, store) => {
  it.skipIf(store === undefined).each(["SIGTERM", "SIGKILL"] as const)(
    "keeps a run waiting for approval across a restart (%s), and finishes it once approved",
    { timeout: 120_000 },
    async (signal) => {
      const namespace = `restart-${signal}-${process.pid}-${Date.now()}`;
      const first = await startChild(store as string, namespace);
      const started = await first.client.start("hr", { input: "Fire Lawson" });
      const request = await approvalRequest(first.client, started.id);
      const before = await first.client.streamEvents(started.id).next();
      expect(before.value).toMatchObject({ seq: 1, type: "RunStartedEvent" });
      await stop(first.child, signal);

      const second = await startChild(store as string, namespace);
      const restored = await second.client.getHandler(started.id);
      expect(restored).toMatchObject({ id: started.id, workflow: "hr", status: "waiting", input: { input: "Fire Lawson" } });
      expect(restored.waitingFor.map((w) => w.data.approvalId)).toEqual([request.data.approvalId]);
      await second.client.approve(started.id, String(request.data.approvalId), true);
      const done = await second.client.wait(started.id);
      expect(done.status).toBe("succeeded");
      expect(done.result).toMatchObject({
        response: { content: "Lawson has been let go." },
        sources: [{ toolName: "fire_employee", content: `employee 7 removed by process ${second.child.pid}` }],
      });
      // One log: the events from before the restart, then the resumed run's, numbered on.
      const events: StreamedEvent[] = [];
      for await (const ev of second.client.streamEvents(started.id)) events.push(ev);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.filter((e) => e.type === "RunStartedEvent").map((e) => e.data.resumed)).toEqual([false, true]);
      expect(events.filter((e) => e.type === "agent.FunctionOutputEvent")).toHaveLength(1);
      expect(events.at(-1)).toMatchObject({ type: "RunEndedEvent", data: { status: "succeeded" } });
      await stop(second.child, "SIGTERM");
    },
  );
});
