/**
 * A run-and-wait the server stops waiting on (it shuts down before the run ends) is not
 * answered 200 as if the run had ended: 503 `closing` names the run, which the store keeps and
 * the next server goes on with.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import { ThreeQuestions, startServer } from "./server-fixtures.ts";

const dir = mkdtempSync(join(tmpdir(), "stepflow-closing-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("answers an unkeyed run-and-wait cut short by close() with 503 closing, naming the run the next server finishes", async () => {
  const store = `sqlite:${join(dir, "runs.db")}`;
  const workflows = { questions: { workflow: new ThreeQuestions({ timeout: null }) } };
  const first = await startServer({ store, workflows });
  const answer = fetch(`${first.url}/api/workflows/questions/run`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ input: {} }),
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } }));
  const client = new WorkflowClient({ baseUrl: first.url });
  let id = "";
  await expect
    .poll(async () => (id = (await client.listHandlers({ workflow: "questions", status: ["waiting"] }))[0]?.id ?? ""), { timeout: 30_000 })
    .not.toBe("");
  await first.server.close();

  const closed = await answer;
  expect(closed.status).toBe(503);
  expect(closed.body.error?.code).toBe("closing");
  expect(closed.body.error?.message).toContain(`Follow it with GET /api/handlers/${id}`);

  // The run was kept: the next server on the store has it, still waiting for its first answer.
  const next = await startServer({ store, workflows });
  try {
    const again = new WorkflowClient({ baseUrl: next.url });
    await expect.poll(async () => (await again.getHandler(id)).status, { timeout: 30_000 }).toBe("waiting");
  } finally {
    await next.server.close();
  }
});
