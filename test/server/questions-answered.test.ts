/** What a handler waits for, as the server shows it, once a question is answered by an event of the workflow's own. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { HandlerInfo } from "../../src/client/types.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { ThreeQuestions, startServer } from "./server-fixtures.ts";

let server: WorkflowServer;
let client: WorkflowClient;
beforeAll(async () => {
  const started = await startServer({ workflows: { three: { workflow: new ThreeQuestions({ timeout: null }) } } });
  server = started.server;
  client = new WorkflowClient({ baseUrl: started.url });
});
afterAll(() => server.close());

/** The handler once it has asked its `n`th question. */
async function asked(id: string, n: number): Promise<HandlerInfo> {
  let questions = 0;
  for await (const ev of client.streamEvents(id)) if (ev.type === "InputRequiredEvent" && ++questions === n) return client.getHandler(id);
  throw new Error(`the run ended before its question ${n}`);
}
const prefixes = (handler: HandlerInfo) => handler.waitingFor.map((w) => w.data.prefix);

it("shows only the question still open after one is answered by an event of the workflow's own", async () => {
  const { id } = await client.start("three", {});
  const first = await asked(id, 1);
  expect(first.status).toBe("waiting");
  expect(prefixes(first)).toEqual(["First?"]);

  await client.sendEvent(id, "Decision", { yes: true });
  expect(prefixes(await asked(id, 2))).toEqual(["Second?"]);

  await client.sendEvent(id, "Decision", { yes: false });
  expect(prefixes(await asked(id, 3))).toEqual(["Third?"]);

  await client.sendEvent(id, "HumanResponseEvent", { response: "done" });
  expect(await client.wait(id)).toMatchObject({ status: "succeeded", result: "true false done", waitingFor: [] });
});
