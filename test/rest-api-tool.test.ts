import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../events/index.ts";
import { Context } from "../src/index.ts";
import { ScriptedLLM } from "../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";
import { restApiTool } from "../workflows/tools/rest-api.ts";
import { startHrApiServer } from "./support/hr-api-server.ts";
import type { HrApiServer } from "./support/hr-api-server.ts";

let hr: HrApiServer | undefined;
afterEach(async () => {
  await hr?.close();
  hr = undefined;
});

const HR_API = "The HR API. GET /api/users?page=N lists employees, 6 a page; GET /api/users/{id} reads one; DELETE /api/users/{id} removes one.";
const rest = (baseURL: string, extra: Partial<Parameters<typeof restApiTool>[0]> = {}) => restApiTool({ baseURL, description: HR_API, headers: { authorization: "Bearer hr-secret" }, ...extra });
const call = (id: string, method: string, path: string) => ({ id, name: "call_rest_api", input: { method, path } });
/** A human asked about everything that is not a GET. */
const changesNeedApproval = (c: { input: unknown }) => (c.input as { method?: string }).method !== "GET";

describe("restApiTool: seed 000's HR assistant", () => {
  it('"Fire Lawson": pages through the users, asks a human before the DELETE, then removes Michael Lawson', async () => {
    hr = await startHrApiServer({ apiKey: "hr-secret" });
    const llm = new ScriptedLLM([
      { toolCalls: [call("c1", "GET", "/api/users?page=1")] },
      { toolCalls: [call("c2", "GET", "/api/users?page=2")] },
      { toolCalls: [call("c3", "DELETE", "/api/users/7")] },
      { text: "User Lawson has been successfully removed from the system." },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools: [rest(hr.baseURL)], needsApproval: changesNeedApproval });
    const ctx = new Context(agent);
    const handler = agent.run({ input: "Fire Lawson" }, { ctx });
    const asked: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        asked.push(ev.prefix);
        expect(hr.users.some((user) => user.last_name === "Lawson")).toBe(true); // not yet
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
      }
    }
    const { response, sources } = await handler;
    expect(asked).toEqual(['Run call_rest_api with {"method":"DELETE","path":"/api/users/7"}? (yes/no)']);
    expect(hr.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /api/users?page=1", "GET /api/users?page=2", "DELETE /api/users/7"]);
    expect(hr.requests.every((r) => r.authorization === "Bearer hr-secret")).toBe(true);
    expect(hr.users.map((user) => user.id)).not.toContain(7);
    expect(response.content).toBe("User Lawson has been successfully removed from the system.");
    // The model read the status and the body; the key is in no message and nowhere in the saved context.
    expect(JSON.parse(sources[1]?.content ?? "")).toMatchObject({ status: 200, body: { page: 2, data: expect.arrayContaining([expect.objectContaining({ id: 7, last_name: "Lawson" })]) } });
    expect(sources[2]?.content).toBe('{"status":204,"body":""}');
    expect(JSON.stringify(llm.requests)).not.toContain("hr-secret");
    expect(JSON.stringify(ctx.toJSON())).not.toContain("hr-secret");
  });

  it("keeps requests on the API: a URL, a // path or a .. out of the API root is refused and not sent", async () => {
    hr = await startHrApiServer();
    const llm = new ScriptedLLM([
      { toolCalls: [call("u", "GET", "http://example.com/steal"), call("s", "GET", "//example.com/steal"), call("d", "GET", "/api/../../admin"), call("m", "TRACE", "/api/users")] },
      { text: "I cannot do that." },
    ]);
    await new FunctionCallingAgent({ llm, tools: [rest(`${hr.baseURL}/api`)] }).run({ input: "Try everything" });
    const results = new Map((llm.requests[1]?.messages ?? []).flatMap((m) => {
      const result = (m.options as { toolResult?: { id: string } } | undefined)?.toolResult;
      return result ? [[result.id, String(m.content)]] : [];
    }));
    expect(results.get("u")).toMatch(/^Invalid arguments for tool call_rest_api: path: must be a path on the API starting with one \/, e\.g\. \/api\/users\?page=2, not a URL\./);
    expect(results.get("s")).toMatch(/^Invalid arguments for tool call_rest_api: path: must be a path on the API/);
    expect(results.get("d")).toBe(`Encountered error in tool call: The path "/api/../../admin" leads outside the API at ${hr.baseURL}/api/; give a path under it.`);
    expect(results.get("m")).toMatch(/^Invalid arguments for tool call_rest_api: method: /);
    expect(hr.requests).toEqual([]);
  });

  it("tells the model when the API cannot be reached or does not answer in time", async () => {
    const silent = createServer((req) => req.resume()); // never answers
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const slowURL = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    hr = await startHrApiServer();
    const goneURL = hr.baseURL;
    await hr.close();
    hr = undefined;
    try {
      expect(await Promise.resolve(rest(goneURL).call({ method: "GET", path: "/api/users" })).catch((e: Error) => e.message)).toBe(`Cannot reach the API at ${goneURL}/: ECONNREFUSED.`);
      expect(await Promise.resolve(rest(slowURL, { timeout: 0.05 }).call({ method: "GET", path: "/api/users" })).catch((e: Error) => e.message)).toBe(`The API at ${slowURL}/ did not answer GET /api/users within 0.05 s.`);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("refuses a baseURL it cannot use, saying what it takes", () => {
    expect(() => rest("127.0.0.1:8080")).toThrow('restApiTool: baseURL must be an absolute http(s) URL, e.g. http://127.0.0.1:8080; got "127.0.0.1:8080".');
    expect(() => rest("ftp://hr.example.com")).toThrow('restApiTool: baseURL must be an http(s) URL; got "ftp://hr.example.com".');
    expect(() => rest("http://bob:pw@hr.example.com")).toThrow("restApiTool: baseURL must not hold a user name or password");
  });
});
