import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../../../events/index.ts";
import { Context } from "../../../src/index.ts";
import { ScriptedLLM } from "../../../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../../../workflows/function-calling-agent.ts";
import { OpenAI } from "../../../src/llm/openai.ts";
import { restApiTool } from "../../../workflows/tools/rest-api.ts";
import { startOpenAIServer } from "../../support/openai-sse-server.ts";
import { hrOpenApi, startHrApiServer } from "../../support/hr-api-server.ts";
import type { HrApiServer } from "../../support/hr-api-server.ts";

let hr: HrApiServer | undefined;
afterEach(async () => {
  await hr?.close();
  hr = undefined;
});

const HR_API = "The HR API. GET /api/users?page=N lists employees, 6 a page; GET /api/users/{id} reads one; DELETE /api/users/{id} removes one.";
const rest = (baseURL: string, extra: Partial<Parameters<typeof restApiTool>[0]> = {}) =>
  restApiTool({ baseURL, description: HR_API, headers: { authorization: "Bearer hr-secret" }, ...extra });
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
    expect(JSON.parse(sources[1]?.content ?? "")).toMatchObject({
      status: 200,
      body: { page: 2, data: expect.arrayContaining([expect.objectContaining({ id: 7, last_name: "Lawson" })]) },
    });
    expect(sources[2]?.content).toBe('{"status":204,"body":""}');
    expect(JSON.stringify(llm.requests)).not.toContain("hr-secret");
    expect(JSON.stringify(ctx.toJSON())).not.toContain("hr-secret");
  });

  it('"Fire Lawson" end to end over HTTP: an OpenAI-compatible server streams the calls, the HR API serves them, a human approves the DELETE', async () => {
    hr = await startHrApiServer({ apiKey: "hr-secret" });
    const steps = [
      { toolCalls: [{ id: "call_p1", name: "call_rest_api", arguments: { method: "GET", path: "/api/users?page=1" } }] },
      { toolCalls: [{ id: "call_p2", name: "call_rest_api", arguments: { method: "GET", path: "/api/users?page=2" } }] },
      { toolCalls: [{ id: "call_del", name: "call_rest_api", arguments: { method: "DELETE", path: "/api/users/7" } }] },
      { text: ["User Lawson has been ", "successfully removed."] },
    ];
    const model = await startOpenAIServer({ turns: steps });
    try {
      const llm = new OpenAI({ model: "gpt-4o-mini", baseURL: model.baseURL, apiKey: "sk-test", maxRetries: 0 });
      const handler = new FunctionCallingAgent({ llm, tools: [rest(hr.baseURL)], needsApproval: changesNeedApproval }).run({ input: "Fire Lawson" });
      for await (const ev of handler.streamEvents()) {
        if (ev instanceof ToolApprovalRequestEvent) handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
      }
      expect((await handler).response.content).toBe("User Lawson has been successfully removed.");
      expect(hr.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /api/users?page=1", "GET /api/users?page=2", "DELETE /api/users/7"]);
      // What the model server received: the tool's schema, and each result under its call id.
      const last = model.requests.at(-1)?.body;
      expect(last?.tools?.[0]?.function).toMatchObject({ name: "call_rest_api", parameters: { type: "object", required: ["method", "path"] } });
      expect(last?.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["call_p1", "call_p2", "call_del"]);
      expect(last?.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_del", content: '{"status":204,"body":""}' });
      expect(JSON.stringify(model.requests)).not.toContain("hr-secret");
    } finally {
      await model.close();
    }
  });

  it("describes an API from its OpenAPI document in a line per endpoint, and answers a made-up endpoint instead of sending it", async () => {
    hr = await startHrApiServer();
    const fromSpec = restApiTool({ baseURL: hr.baseURL, openApi: hrOpenApi });
    // The list goes with the path argument: OpenAI refuses tool descriptions over 1,024 characters.
    expect(fromSpec.metadata.description).toBe(
      "The HR API.\nSends one request to this API and returns its status and body. The endpoints are listed with the path argument.",
    );
    expect((fromSpec.metadata.parameters as { properties: { path: { description: string } } }).properties.path.description).toBe(
      [
        "The path on the API, with its query string if any, e.g. /api/users?page=2.",
        "HR API",
        "Employees of the company.",
        "Endpoints (path parameters in braces):",
        "GET /api/users — List employees, 6 a page. Query: page? (integer).",
        "POST /api/users — Add an employee. Body: { first_name: string, last_name: string, email?: string }.",
        "GET /api/users/{id} — Read one employee.",
        "PATCH /api/users/{id} — Change an employee. Body: { first_name: string, last_name: string, email?: string }.",
        "DELETE /api/users/{id} — Remove an employee (fire them).",
      ].join("\n"),
    );
    const llm = new ScriptedLLM([
      { toolCalls: [call("made_up", "GET", "/api/employees?name=Lawson"), call("wrong_method", "PUT", "/api/users/7"), call("real", "GET", "/api/users/7")] },
      { text: "Michael Lawson is employee 7." },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [fromSpec] }).run({ input: "Who is Lawson?" });
    expect(sources.map((source) => source.content)).toEqual([
      "Encountered error in tool call: The API has no endpoint GET /api/employees. Use one of the endpoints listed with the path argument.",
      "Encountered error in tool call: The API has no endpoint PUT /api/users/7. /api/users/7 takes GET, PATCH, DELETE. Use one of the endpoints listed with the path argument.",
      '{"status":200,"body":{"data":{"id":7,"email":"michael.lawson@reqres.in","first_name":"Michael","last_name":"Lawson"}}}',
    ]);
    expect(hr.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /api/users/7"]);
    expect(() => restApiTool({ baseURL: hr?.baseURL ?? "" })).toThrow(
      "restApiTool: give a description of the API (its endpoints and what they take), or its OpenAPI document as openApi.",
    );
  });

  it("reads OpenAPI documents as they are written: server paths, $refs, allOf, several and greedy path parameters; refuses Swagger 2", async () => {
    hr = await startHrApiServer();
    const spec = {
      openapi: "3.1.0",
      info: { title: "HR API v3" },
      servers: [{ url: "/api" }], // paths below are under /api
      paths: {
        "/users": {
          parameters: [{ $ref: "#/components/parameters/Tenant" }],
          get: { summary: "List employees", parameters: [{ $ref: "#/components/parameters/Page" }] },
        },
        "/users/{id}": { put: { requestBody: { $ref: "#/components/requestBodies/Employee" } } },
        "/teams/{team}/members/{id}": { get: {} },
        "/files/{path+}": { get: {} },
      },
      components: {
        parameters: {
          Page: { name: "page", in: "query", schema: { type: "integer" } },
          Tenant: { name: "tenant", in: "query", required: true, schema: { type: ["string", "null"] } },
        },
        requestBodies: {
          Employee: {
            content: {
              "application/json; charset=utf-8": {
                schema: { allOf: [{ $ref: "#/components/schemas/Name" }, { properties: { tags: { type: "array", items: { enum: ["a", "b"] } } } }] },
              },
            },
          },
        },
        schemas: { Name: { required: ["first_name"], properties: { first_name: { type: "string" } } } },
      },
    };
    const fromSpec = restApiTool({ baseURL: hr.baseURL, openApi: spec });
    expect((fromSpec.metadata.parameters as { properties: { path: { description: string } } }).properties.path.description.split("\n").slice(3)).toEqual([
      "GET /users — List employees. Query: tenant (string | null), page? (integer).",
      'PUT /users/{id} Body: { first_name: string, tags?: ("a" | "b")[] }.',
      "GET /teams/{team}/members/{id}",
      "GET /files/{path+}",
    ]);
    expect(await fromSpec.call({ method: "GET", path: "/users?page=2&tenant=x" })).toMatchObject({ status: 200, body: { page: 2 } });
    expect(hr.requests.map((r) => r.path)).toEqual(["/api/users?page=2&tenant=x"]); // the server path went with it
    await expect(Promise.resolve(fromSpec.call({ method: "GET", path: "/teams/7/members" }))).rejects.toThrow("The API has no endpoint GET /teams/7/members.");
    expect(await fromSpec.call({ method: "GET", path: "/files/a/b.txt" })).toMatchObject({ status: 404 }); // sent: {path+} takes the rest
    expect(() => restApiTool({ baseURL: hr?.baseURL ?? "", openApi: { swagger: "2.0", paths: {} } })).toThrow(
      "restApiTool: openApi must be an OpenAPI 3 document; this one is Swagger 2.0. Convert it to OpenAPI 3 first (e.g. with swagger2openapi).",
    );
  });

  it("keeps requests on the API: URLs, // paths, .. and encoded escapes out of the API root are refused and not sent", async () => {
    hr = await startHrApiServer();
    const escapes = ["/api/../../admin", "/users/..%2f..%2fadmin", "/users/%2e%2e/admin", "/users/..;/admin", "/users%5c..%5cadmin"];
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          call("u", "GET", "http://example.com/steal"),
          call("s", "GET", "//example.com/steal"),
          call("m", "TRACE", "/api/users"),
          ...escapes.map((path, i) => call(`e${i}`, "GET", path)),
        ],
      },
      { text: "I cannot do that." },
    ]);
    await new FunctionCallingAgent({ llm, tools: [rest(`${hr.baseURL}/api`)] }).run({ input: "Try everything" });
    const results = new Map(
      (llm.requests[1]?.messages ?? []).flatMap((m) => {
        const result = (m.options as { toolResult?: { id: string } } | undefined)?.toolResult;
        return result ? [[result.id, String(m.content)]] : [];
      }),
    );
    expect(results.get("u")).toMatch(
      /^Invalid arguments for tool call_rest_api: path: must be a path on the API starting with one \/, e\.g\. \/api\/users\?page=2, not a URL\./,
    );
    expect(results.get("s")).toMatch(/^Invalid arguments for tool call_rest_api: path: must be a path on the API/);
    expect(results.get("m")).toMatch(/^Invalid arguments for tool call_rest_api: method: /);
    escapes.forEach((path, i) =>
      expect(results.get(`e${i}`)).toBe(
        `Encountered error in tool call: The path ${JSON.stringify(path)} leads, or may lead, outside the API at ${hr?.baseURL}/api/; give a plain path under it, without "." or ".." segments or encoded slashes.`,
      ),
    );
    expect(hr.requests).toEqual([]);
  });

  it("reports a redirect instead of following it, so the key never leaves the API", async () => {
    const elsewhere: string[] = [];
    const other = createServer((req, res) => {
      elsewhere.push(`${req.method} ${req.url} ${req.headers.authorization ?? ""}`);
      res.end("{}");
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const otherURL = `http://127.0.0.1:${(other.address() as AddressInfo).port}/collect`;
    const api = createServer((_req, res) => res.writeHead(307, { location: otherURL }).end());
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const apiURL = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      expect(await rest(apiURL).call({ method: "DELETE", path: "/api/users/7" })).toEqual({ status: 307, body: "", location: otherURL });
      expect(elsewhere).toEqual([]);
    } finally {
      await new Promise((resolve) => api.close(resolve));
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it("sends its headers over the tool's own, checks them when made without showing their values, and adds baseURL's query to each request", async () => {
    hr = await startHrApiServer();
    const seen: Headers[] = [];
    const spy = createServer((req, res) => {
      seen.push(new Headers(req.headers as Record<string, string>));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ url: req.url }));
    });
    await new Promise<void>((resolve) => spy.listen(0, "127.0.0.1", resolve));
    try {
      const spyURL = `http://127.0.0.1:${(spy.address() as AddressInfo).port}/v2?tenant=acme`;
      const github = rest(spyURL, { headers: { Accept: "application/vnd.github+json", "X-Api-Key": "k-123" } });
      expect(await github.call({ method: "GET", path: "/users?page=2" })).toEqual({ status: 200, body: { url: "/v2/users?page=2&tenant=acme" } });
      expect([seen[0]?.get("accept"), seen[0]?.get("x-api-key")]).toEqual(["application/vnd.github+json", "k-123"]);
    } finally {
      await new Promise((resolve) => spy.close(resolve));
    }
    expect(() => rest(hr?.baseURL ?? "", { headers: { authorization: "Bearer sk-secret\nX-Evil: 1" } })).toThrow(
      'restApiTool: header "authorization" has a name or value fetch cannot send (a line break, or a character outside Latin-1?).',
    );
  });

  it("reads no more of a body than the model will read, and refuses a GET with a body", async () => {
    const endless = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      const more = () => res.write("ab".repeat(8192), () => setImmediate(more));
      more(); // never ends: reading it all would never return
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    try {
      const result = (await rest(`http://127.0.0.1:${(endless.address() as AddressInfo).port}`, { maxBodyChars: 10 }).call({
        method: "GET",
        path: "/logs",
      })) as { body: string };
      expect(result.body).toBe("ababababab… (cut after 10 characters; ask for less, e.g. a page or one item)");
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "g", name: "call_rest_api", input: { method: "GET", path: "/api/users", body: { page: 2 } } }] },
      { text: "ok" },
    ]);
    await new FunctionCallingAgent({ llm, tools: [rest("http://127.0.0.1:9")] }).run({ input: "list" });
    expect(String(llm.requests[1]?.messages.at(-1)?.content)).toBe(
      "Invalid arguments for tool call_rest_api: body: a GET request has no body; put its parameters in the path's query string. The tool was not run; call it again with arguments that match its schema.",
    );
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
      expect(await Promise.resolve(rest(goneURL).call({ method: "GET", path: "/api/users" })).catch((e: Error) => e.message)).toBe(
        `Cannot reach the API at ${goneURL}/: ECONNREFUSED.`,
      );
      expect(await Promise.resolve(rest(slowURL, { timeout: 0.05 }).call({ method: "GET", path: "/api/users" })).catch((e: Error) => e.message)).toBe(
        `The API at ${slowURL}/ did not answer GET /api/users within 0.05 s.`,
      );
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("refuses a baseURL it cannot use, saying what it takes", () => {
    expect(() => rest("127.0.0.1:8080")).toThrow('restApiTool: baseURL must be an absolute http(s) URL, e.g. http://127.0.0.1:8080; got "127.0.0.1:8080".');
    expect(() => rest("ftp://hr.example.com")).toThrow('restApiTool: baseURL must be an http(s) URL; got "ftp://hr.example.com".');
    expect(() => rest("http://bob:pw@hr.example.com")).toThrow("restApiTool: baseURL must not hold a user name or password");
    // The error keeps the URL it refused, but never its password.
    expect(() => rest("http://bob:pw@hr.example.com")).toThrow(
      expect.objectContaining({ name: "ConfigurationError", option: "baseURL", received: "http://bob:***@hr.example.com" }),
    );
    expect(() => rest("127.0.0.1:8080")).toThrow(expect.objectContaining({ name: "ConfigurationError", option: "baseURL", received: "127.0.0.1:8080" }));
    expect(() => restApiTool({ baseURL: "http://127.0.0.1:1", description: "x", maxBodyChars: 0 })).toThrow(
      expect.objectContaining({ option: "maxBodyChars", received: 0 }),
    );
    expect(() => restApiTool({ baseURL: "http://127.0.0.1:1", description: "x", headers: { "x-api-key": "sk-secret\nmore" } })).toThrow(
      expect.objectContaining({ name: "ConfigurationError", option: "headers", received: "x-api-key" }),
    );
    expect(() => restApiTool({ baseURL: "http://127.0.0.1:1", openApi: { openapi: "3.0.0", paths: {} } })).toThrow(
      expect.objectContaining({ name: "ConfigurationError", option: "openApi" }),
    );
  });
});

describe("restApiTool: header parameters of an OpenAPI document", () => {
  const openApi = {
    openapi: "3.0.3",
    info: { title: "HR API" },
    paths: {
      "/api/echo": {
        parameters: [{ name: "X-Tenant-Id", in: "header", required: true, schema: { type: "string" } }],
        put: {
          summary: "Echo.",
          parameters: [
            { name: "If-Match", in: "header", schema: { type: "string" } },
            { name: "X-Region$", in: "header", schema: { type: "string" } },
            { name: "Authorization", in: "header", required: true, schema: { type: "string" } },
            { name: "X-Api-Key", in: "header", required: true, schema: { type: "string" } },
            { name: "Host", in: "header", schema: { type: "string" } },
          ],
        },
      },
      "/api/users": { get: { summary: "List users." } },
    },
  };
  const echoCall = (id: string, headers: Record<string, unknown> | undefined, path = "/api/echo", method = "PUT") => ({
    id,
    name: "call_rest_api",
    input: { method, path, ...(headers ? { headers } : {}) } as never,
  });

  it("are a headers argument the model fills, named as providers take them; the tool's own headers never the model's", async () => {
    hr = await startHrApiServer();
    const hrTool = restApiTool({ baseURL: hr.baseURL, openApi, headers: { authorization: "Bearer hr-secret", "x-api-key": "hr-key-2f9a" } });
    const parameters = hrTool.metadata.parameters as {
      properties: { path: { description: string }; headers: { properties: Record<string, unknown>; additionalProperties: unknown } };
    };
    // Authorization, X-Api-Key (configured) and Host are the tool's: not arguments. X-Region$ is named as Anthropic takes it.
    expect(Object.keys(parameters.properties.headers.properties)).toEqual(["X-Tenant-Id", "If-Match", "X-Region"]);
    expect(parameters.properties.headers.additionalProperties).toBe(false);
    expect(parameters.properties.path.description).toContain("PUT /api/echo — Echo. Headers: X-Tenant-Id (string), If-Match? (string), X-Region$? (string).");
    const llm = new ScriptedLLM([
      { toolCalls: [echoCall("c1", { "X-Tenant-Id": "acme", "If-Match": '"v7"', "X-Region": "eu" })] },
      { toolCalls: [echoCall("c2", { "X-Tenant-Id": "acme", Authorization: "Bearer stolen" })] },
      { toolCalls: [echoCall("c3", { "If-Match": '"v7"' })] },
      { toolCalls: [echoCall("c4", { "If-Match": '"v7"' }, "/api/users", "GET")] },
      { toolCalls: [echoCall("c5", { "x-tenant-id": "acme", "X-Debug": "1" })] },
      { toolCalls: [echoCall("c6", { "X-Tenant-Id": "acme\r\nX-Admin: 1" })] },
      { text: "Done." },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [hrTool] }).run({ input: "Update the echo for acme." });
    const { headers } = (JSON.parse(sources[0]?.content ?? "") as { body: { headers: Record<string, string> } }).body;
    expect(headers).toMatchObject({ "x-tenant-id": "acme", "if-match": '"v7"', "x-region$": "eu", authorization: "***", "x-api-key": "***" });
    expect(sources.slice(1).map((s) => s.content)).toEqual([
      'Invalid arguments for tool call_rest_api: headers: "Authorization" is set by the tool itself (credentials come from its configuration), never by a call: leave it out. The tool was not run; call it again with arguments that match its schema.',
      'Encountered error in tool call: The API\'s PUT /api/echo requires the header "X-Tenant-Id": send it in headers, e.g. headers: { "X-Tenant-Id": … }.',
      'Encountered error in tool call: The API\'s GET /api/users has no header parameter "If-Match"; it takes none: leave headers out.',
      'Invalid arguments for tool call_rest_api: headers: send "x-tenant-id" as "X-Tenant-Id"; "X-Debug" is not a header parameter of the API, which takes X-Tenant-Id, If-Match, X-Region. The tool was not run; call it again with arguments that match its schema.',
      'Encountered error in tool call: The header X-Tenant-Id cannot carry "acme\\r\\nX-Admin: 1": a header value is one line of text (Latin-1). Send it without line breaks.',
    ]);
    // Only the first call was sent, with the operator's credentials.
    expect(hr.requests.map((r) => [r.method, r.path, r.authorization])).toEqual([["PUT", "/api/echo", "Bearer hr-secret"]]);
  });

  it("are not an argument of a tool whose document declares none, nor of one without a document", () => {
    const plain = (tool: ReturnType<typeof restApiTool>) => Object.keys((tool.metadata.parameters as { properties: object }).properties);
    expect(plain(restApiTool({ baseURL: "http://127.0.0.1:9", openApi: hrOpenApi }))).toEqual(["method", "path", "body"]);
    expect(plain(rest("http://127.0.0.1:9"))).toEqual(["method", "path", "body"]);
  });
});
