import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StreamEvent, ToolApprovalEvent, ToolApprovalRequestEvent } from "../../events/index.ts";
import { OfflineDemoLLM, offlineReply } from "../../src/llm/offline-model.ts";
import { firedName } from "../../src/llm/offline-hr-errand.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { restApiTool } from "../../workflows/tools/rest-api.ts";
import { startHrApiServer, type HrApiServer } from "../support/hr-api-server.ts";

let hr: HrApiServer;
beforeEach(async () => (hr = await startHrApiServer({ apiKey: "hr-secret" })));
afterEach(() => hr.close());

const agent = () =>
  new FunctionCallingAgent({
    llm: new OfflineDemoLLM(),
    tools: [...calculatorTools, restApiTool({ baseURL: hr.baseURL, description: "The HR API.", headers: { authorization: "Bearer hr-secret" } })],
    needsApproval: (call) => (call.input as { method?: string }).method !== "GET",
  });

/** Runs one turn, answering each approval question with `approve`; returns the reply, the questions asked and the text streamed. */
async function fire(input: string, approve: boolean, reason?: string) {
  const handler = agent().run({ input });
  const asked: string[] = [];
  let streamed = "";
  for await (const ev of handler.streamEvents()) {
    if (ev instanceof ToolApprovalRequestEvent) {
      asked.push(ev.prefix);
      handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: approve, reason }));
    }
    if (ev instanceof StreamEvent) streamed += ev.delta;
  }
  const { response } = await handler;
  return { reply: String(response.content), asked, streamed };
}

describe("OfflineDemoLLM: firing an employee through the HR REST API", () => {
  it("pages through the employees, asks to DELETE Lawson, and reports the removal once approved", async () => {
    const { reply, asked, streamed } = await fire("Fire Lawson", true);
    expect(asked).toEqual(['Run call_rest_api with {"method":"DELETE","path":"/api/users/7"}? (yes/no)']);
    expect(reply).toBe("Michael Lawson (id 7) has been removed from the HR system.");
    expect(streamed).toBe(reply);
    expect(hr.users.some((user) => user.last_name === "Lawson")).toBe(false);
    expect(hr.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /api/users?page=1", "GET /api/users?page=2", "DELETE /api/users/7"]);
  });

  it("fires no one when the human says no, and says why", async () => {
    const { reply } = await fire("please fire Michael Lawson", false, "Ask HR first.");
    expect(reply).toBe(
      "I did not fire Michael Lawson (id 7). The user did not approve this call to call_rest_api, so it was not run. The reason given: Ask HR first.",
    );
    expect(hr.users).toHaveLength(12);
    expect(hr.requests.map((r) => r.method)).toEqual(["GET", "GET"]);
  });

  it("reads every page before firing someone found on the first, and matches the full name in any case", async () => {
    const { reply } = await fire("Fire george bluth", true);
    expect(reply).toBe("George Bluth (id 1) has been removed from the HR system.");
    expect(hr.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /api/users?page=1", "GET /api/users?page=2", "DELETE /api/users/1"]);
  });

  it("asks which one when the name matches employees on different pages, and deletes nothing", async () => {
    const { reply, asked } = await fire("Fire George", true);
    expect(reply).toBe('Several employees match "George": George Bluth (id 1), George Edwards (id 11). Whom do you mean? Give the full name.');
    expect(asked).toEqual([]);
    expect(hr.requests.map((r) => r.method)).toEqual(["GET", "GET"]);
  });

  it("says so when nobody has the name, after reading every page", async () => {
    const { reply, asked } = await fire("Fire Smith", true);
    expect(reply).toBe("I found no employee named Smith among the 12 employees the HR API lists, so I fired no one.");
    expect(asked).toEqual([]);
    expect(hr.users).toHaveLength(12);
  });

  it("reports the API's refusal (a wrong key) instead of guessing", async () => {
    const wrongKey = new FunctionCallingAgent({
      llm: new OfflineDemoLLM(),
      tools: [restApiTool({ baseURL: hr.baseURL, description: "The HR API.", headers: { authorization: "Bearer wrong" } })],
    });
    const { response } = await wrongKey.run({ input: "Fire Lawson" });
    expect(response.content).toBe(
      'I could not read the employee list: the HR API answered GET /api/users?page=1 with 401 {"error":"Missing or wrong API key"}.',
    );
  });

  it("without the REST tool, says which tool it needs; its help mentions the errand only when the tool is there", () => {
    expect(offlineReply([{ role: "user", content: "Fire Lawson" }], ["add"])).toEqual({
      text: "To fire Lawson I need the call_rest_api tool on the HR API, and it is not available.",
    });
    expect(offlineReply([{ role: "user", content: "Tell me a joke" }], ["call_rest_api"]).text).toContain('try "Fire Lawson"');
    expect(offlineReply([{ role: "user", content: "Tell me a joke" }], ["add"]).text).not.toContain("Fire Lawson");
  });

  it("reads the name only from a request that starts with fire", () => {
    expect(firedName("Fire Lawson")).toBe("Lawson");
    expect(firedName("Could you fire Michael Lawson now")).toBe("Michael Lawson");
    expect(firedName("The fire alarm went off")).toBeUndefined();
    expect(firedName("What is fire?")).toBeUndefined();
  });
});
