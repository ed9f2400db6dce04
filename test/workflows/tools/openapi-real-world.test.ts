/**
 * OpenAPI documents as real APIs publish them, made into tools: each either works against the
 * API or is refused when loaded, saying which operation and what to do, never a tool that a
 * provider refuses or that sends the wrong request.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../../../events/index.ts";
import { ScriptedLLM } from "../../../src/llm/scripted-llm.ts";
import { runToolCall } from "../../../src/tools/tool-calls.ts";
import { FunctionCallingAgent } from "../../../workflows/function-calling-agent.ts";
import { openApiTools, restApiTool } from "../../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../../workflows/tools/rest-api.ts";
import { startHrApiServer } from "../../support/hr-api-server.ts";
import type { HrApiServer } from "../../support/hr-api-server.ts";

let hr: HrApiServer | undefined;
afterEach(async () => {
  await hr?.close();
  hr = undefined;
});

/** A local API that records each request's content type and body as sent, and answers 200. */
async function startRecorder(): Promise<{ baseURL: string; requests: { path: string; type: string | undefined; body: string }[]; close(): Promise<void> }> {
  const requests: { path: string; type: string | undefined; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      requests.push({ path: req.url ?? "", type: req.headers["content-type"], body });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Stripe's way: form bodies, nested fields as `metadata[plan]=pro` by `encoding: { style: deepObject }`. */
const stripeLike: OpenApiDocument = {
  openapi: "3.0.0",
  paths: {
    "/v1/customers": {
      post: {
        operationId: "PostCustomers",
        requestBody: {
          content: {
            "application/x-www-form-urlencoded": {
              schema: {
                type: "object",
                properties: {
                  email: { type: "string" },
                  balance: { type: "integer" },
                  metadata: {
                    anyOf: [
                      { type: "object", additionalProperties: { type: "string" } },
                      { type: "string", enum: [""] },
                    ],
                  },
                  expand: { type: "array", items: { type: "string" } },
                  preferred_locales: { type: "array", items: { type: "string" } },
                },
              },
              encoding: { metadata: { style: "deepObject", explode: true }, expand: { style: "deepObject", explode: true } },
            },
          },
        },
      },
    },
    "/v1/prices": {
      post: {
        operationId: "PostPrices",
        requestBody: {
          content: {
            "application/x-www-form-urlencoded": { schema: { type: "object", properties: { currency: { type: "string" } } } },
            "application/json": { schema: { type: "object", properties: { currency: { type: "string" } } } },
          },
        },
      },
    },
  },
};
const customer = { email: "ann@example.com", balance: 500, metadata: { plan: "pro" }, expand: ["sources"], preferred_locales: ["en", "fr"] };
const customerForm = "email=ann%40example.com&balance=500&metadata%5Bplan%5D=pro&expand%5B0%5D=sources&preferred_locales=en&preferred_locales=fr";

const listUsers = { operationId: "listUsers", parameters: [{ name: "page", in: "query", schema: { type: "integer" } }] };

describe("openApiTools on documents as APIs publish them", () => {
  it("roots the paths at the server's URL with its variables' defaults, as a client of the document does", async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      servers: [
        {
          url: "{scheme}://{tenant}.hr.example.com/{base}",
          variables: { scheme: { default: "https" }, tenant: { default: "acme" }, base: { default: "api", enum: ["api"] } },
        },
      ],
      paths: { "/users": { get: listUsers } },
    };
    const tools = openApiTools({ openApi, baseURL: hr.baseURL });
    const source = await runToolCall({ id: "c1", name: "listUsers", input: { page: 2 } }, tools);
    expect(JSON.parse(source.content)).toMatchObject({ status: 200 });
    expect(hr.requests.map((r) => r.path)).toEqual(["/api/users?page=2"]);
  });

  it("names each argument as every provider takes it (JSON:API's filter[status], OData's $top) and sends the parameter under its own name", async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/echo": {
          get: {
            operationId: "searchUsers",
            parameters: [
              { name: "filter[status]", in: "query", required: true, schema: { type: "string" } },
              { name: "$top", in: "query", schema: { type: "integer" } },
              { name: "top", in: "query", schema: { type: "integer" } },
              { name: "fields[]", in: "query", schema: { type: "array", items: { type: "string" } } },
            ],
          },
        },
      },
    };
    const [search] = openApiTools({ openApi, baseURL: hr.baseURL });
    const parameters = search?.metadata.parameters as { properties: Record<string, unknown>; required: string[] };
    // Anthropic's rule for the keys of input_schema.properties: it refuses the whole request otherwise.
    expect(Object.keys(parameters.properties).filter((key) => !/^[a-zA-Z0-9_.-]{1,64}$/.test(key))).toEqual([]);
    expect(Object.keys(parameters.properties)).toEqual(["filter.status", "top_2", "top", "fields"]);
    expect(parameters.required).toEqual(["filter.status"]);
    const input = { "filter.status": "active", top_2: 5, top: 1, fields: ["name", "email"] };
    const source = await runToolCall({ id: "c1", name: "searchUsers", input }, [search as NonNullable<typeof search>]);
    expect(source.isError).toBe(false);
    expect(hr.requests.map((r) => decodeURIComponent(r.path))).toEqual(["/api/echo?filter[status]=active&$top=5&top=1&fields[]=name&fields[]=email"]);
  });

  it("takes a path parameter the document forgot to declare as a required argument, instead of sending the braces", async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = { openapi: "3.0.3", paths: { "/api/users/{id}": { get: { operationId: "getUser", summary: "One employee." } } } };
    const [getUser] = openApiTools({ openApi, baseURL: hr.baseURL });
    expect(getUser?.metadata.parameters).toEqual({
      type: "object",
      properties: { id: { type: "string", minLength: 1 } },
      required: ["id"],
      additionalProperties: false,
    });
    const tools = [getUser as NonNullable<typeof getUser>];
    const missing = await runToolCall({ id: "c1", name: "getUser", input: {} }, tools);
    expect(missing.content).toMatch(/^Invalid arguments for tool getUser: id: /);
    const found = await runToolCall({ id: "c2", name: "getUser", input: { id: "7" } }, tools);
    expect(JSON.parse(found.content)).toMatchObject({ status: 200, body: { data: { id: 7 } } });
    expect(hr.requests.map((r) => r.path)).toEqual(["/api/users/7"]);
  });

  it("refuses a $ref it cannot follow when loading, naming the operation, instead of a body the model may fill with anything", () => {
    const body = (schema: unknown) => ({ requestBody: { required: true, content: { "application/json": { schema } } } });
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/users": { post: { operationId: "createUser", ...body({ $ref: "./schemas/user.yaml#/User" }) } },
        "/teams": { post: { operationId: "createTeam", ...body({ $ref: "#/components/schemas/Tem" }) } },
        "/teams/{id}": {
          put: { operationId: "replaceTeam", parameters: [{ $ref: "#/components/parameters/Id" }], ...body({ $ref: "#/components/schemas/Team" }) },
          // A JSON pointer into the paths, with its escapes: the schema of the PUT above.
          patch: { operationId: "updateTeam", ...body({ $ref: "#/paths/~1teams~1%7Bid%7D/put/requestBody/content/application~1json/schema" }) },
        },
      },
      components: {
        parameters: { Id: { name: "id", in: "path", required: true, schema: { type: "integer" } } },
        schemas: { Team: { type: "object", required: ["name"], properties: { name: { type: "string" } } } },
      },
    };
    const baseURL = "http://127.0.0.1:9";
    expect(() => openApiTools({ openApi, baseURL })).toThrow(
      'openApiTools: openApi: 2 operations cannot be tools:\n- POST /users refers to "./schemas/user.yaml#/User", in another file. Bundle the document\'s files into one first',
    );
    expect(() => openApiTools({ openApi, baseURL, include: (_method, path) => path !== "/users" })).toThrow(
      'openApiTools: openApi: POST /teams refers to "#/components/schemas/Tem", which the document does not have',
    );
    const tools = openApiTools({ openApi, baseURL, include: (_method, path) => path === "/teams/{id}" });
    const team = { type: "object", required: ["name"], properties: { name: { type: "string" } } };
    expect(tools.map((t) => [t.metadata.name, t.metadata.parameters])).toEqual([
      ["replaceTeam", { type: "object", properties: { id: { type: "integer" }, body: team }, required: ["id", "body"], additionalProperties: false }],
      [
        "updateTeam",
        { type: "object", properties: { id: { type: "string", minLength: 1 }, body: team }, required: ["id", "body"], additionalProperties: false },
      ],
    ]);
  });

  it("writes OpenAPI 3.0's boolean exclusiveMinimum and a property's required: true as the JSON Schema providers check, and keeps their meaning", async () => {
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/payments": {
          post: {
            operationId: "pay",
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    properties: {
                      amount: { type: "number", minimum: 0, exclusiveMinimum: true, maximum: 1000, exclusiveMaximum: false },
                      note: { type: "string", required: true },
                    },
                  },
                },
              },
            },
          },
        },
      },
    };
    const tools = openApiTools({ openApi, baseURL: "http://127.0.0.1:9" });
    const body = (tools[0]?.metadata.parameters as { properties: { body: unknown } }).properties.body;
    // Draft 2020-12, which Anthropic and OpenAI check a tool's schema against: exclusiveMinimum is a number, required a list.
    expect(body).toEqual({
      type: "object",
      properties: { amount: { type: "number", exclusiveMinimum: 0, maximum: 1000 }, note: { type: "string" } },
      required: ["note"],
    });
    const zero = await runToolCall({ id: "c1", name: "pay", input: { body: { amount: 0 } } }, tools);
    expect(zero.content).toMatch(/^Invalid arguments for tool pay: body\.amount: /);
    const most = await runToolCall({ id: "c2", name: "pay", input: { body: { amount: 1001, note: "rent" } } }, tools);
    expect(most.content).toMatch(/^Invalid arguments for tool pay: body\.amount: /);
    const noNote = await runToolCall({ id: "c3", name: "pay", input: { body: { amount: 5 } } }, tools);
    expect(noNote.content).toMatch(/^Invalid arguments for tool pay: body\.note: /);
  });

  it("names an operation whose id starts with a digit so that Gemini takes it", () => {
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: { "/2fa": { post: { operationId: "2fa.enable" }, delete: { operationId: "-2fa-disable" } }, "/3d/{id}": { get: {} } },
    };
    // Gemini's rule for function names: it refuses the whole request otherwise.
    expect(openApiTools({ openApi, baseURL: "http://127.0.0.1:9" }).map((t) => t.metadata.name)).toEqual(["_2fa_enable", "_-2fa-disable", "get_3d_id"]);
  });

  it('refuses an empty path parameter before a human or the API sees the call: DELETE /users/{id} with id "" is not DELETE /users/', async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/users/{id}": { delete: { operationId: "deleteUser", parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }] } },
      },
    };
    const tools = openApiTools({ openApi, baseURL: hr.baseURL });
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "deleteUser", input: { id: "" } }] }, { text: "Which employee?" }]);
    const handler = new FunctionCallingAgent({ llm, tools, needsApproval: () => true }).run({ input: "Fire them." });
    const asked: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (!(ev instanceof ToolApprovalRequestEvent)) continue;
      asked.push(ev.prefix); // a human would have been asked: answer, so that the run ends and the test fails below
      handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
    }
    const { sources } = await handler;
    expect(sources[0]?.content).toMatch(/^Invalid arguments for tool deleteUser: id: .*The tool was not run/);
    expect(asked).toEqual([]);
    expect(hr.requests).toEqual([]);
  });

  it("sends a greedy {path+} parameter's slashes as slashes, and still refuses one that climbs out of the API", async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: { "/api/{proxy+}": { get: { operationId: "proxyGet", parameters: [{ name: "proxy", in: "path", required: true, schema: { type: "string" } }] } } },
    };
    const tools = openApiTools({ openApi, baseURL: `${hr.baseURL}/` });
    const user = await runToolCall({ id: "c1", name: "proxyGet", input: { proxy: "users/7" } }, tools);
    expect(JSON.parse(user.content)).toMatchObject({ status: 200, body: { data: { id: 7 } } });
    for (const proxy of ["../secret", "users/../../secret"]) {
      const refused = await runToolCall({ id: "c2", name: "proxyGet", input: { proxy } }, tools);
      expect({ proxy, content: refused.content }).toEqual({ proxy, content: expect.stringContaining("outside the API") });
    }
    expect(hr.requests.map((r) => r.path)).toEqual(["/api/users/7"]);
  });

  it("takes a header parameter (a tenant, If-Match) as an argument sent as that header, never one that replaces a header the tool sets", async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/echo": {
          parameters: [{ name: "X-Tenant-Id", in: "header", required: true, schema: { type: "string" } }],
          put: {
            operationId: "updateEcho",
            parameters: [
              { name: "If-Match", in: "header", schema: { type: "string" } },
              { name: "X-Page-Size", in: "header", schema: { type: "integer" } },
              { name: "Authorization", in: "header", required: true, schema: { type: "string" } },
              { name: "X-Api-Key", in: "header", required: true, schema: { type: "string" } },
              { name: "Host", in: "header", schema: { type: "string" } },
              { name: "Idempotency-Key", in: "header", schema: { type: "string" } },
              { name: "theme", in: "cookie", schema: { type: "string" } },
            ],
          },
        },
      },
    };
    const tools = openApiTools({ openApi, baseURL: hr.baseURL, headers: { authorization: "Bearer hr-secret", "x-api-key": "hr-key-2f9a" } });
    const parameters = tools[0]?.metadata.parameters as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(parameters.properties)).toEqual(["X-Tenant-Id", "If-Match", "X-Page-Size"]);
    expect(parameters.required).toEqual(["X-Tenant-Id"]);
    const input = { "X-Tenant-Id": "acme", "If-Match": '"v7"', "X-Page-Size": 20 };
    const source = await runToolCall({ id: "c1", name: "updateEcho", input }, tools);
    const { headers } = (JSON.parse(source.content) as { body: { headers: Record<string, string> } }).body;
    expect(headers).toMatchObject({ "x-tenant-id": "acme", "if-match": '"v7"', "x-page-size": "20", authorization: "***", "x-api-key": "***" });
    expect(hr.requests.map((r) => r.authorization)).toEqual(["Bearer hr-secret"]);
  });

  it("refuses a required cookie parameter when loading, naming the operation, unless headers send a Cookie", () => {
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/users": { get: { operationId: "listUsers", parameters: [{ name: "session", in: "cookie", required: true, schema: { type: "string" } }] } },
      },
    };
    expect(() => openApiTools({ openApi, baseURL: "http://127.0.0.1:9" })).toThrow(
      /GET \/api\/users requires the cookie "session".*headers: \{ cookie: "session=…" \}, or leave the operation out with include/,
    );
    expect(openApiTools({ openApi, baseURL: "http://127.0.0.1:9", headers: { Cookie: "session=s1" } }).map((t) => t.metadata.name)).toEqual(["listUsers"]);
  });

  it("sends a form body (Stripe's) as application/x-www-form-urlencoded, nested fields as a[b]=c, and JSON where the operation also takes it", async () => {
    const api = await startRecorder();
    try {
      const tools = openApiTools({ openApi: stripeLike, baseURL: api.baseURL });
      const created = await runToolCall({ id: "c1", name: "PostCustomers", input: { body: customer } }, tools);
      expect(JSON.parse(created.content)).toEqual({ status: 200, body: {} });
      const priced = await runToolCall({ id: "c2", name: "PostPrices", input: { body: { currency: "eur" } } }, tools);
      expect(JSON.parse(priced.content)).toEqual({ status: 200, body: {} });
      expect(api.requests).toEqual([
        { path: "/v1/customers", type: "application/x-www-form-urlencoded", body: customerForm },
        { path: "/v1/prices", type: "application/json", body: '{"currency":"eur"}' },
      ]);
    } finally {
      await api.close();
    }
  });

  it("names every operation it cannot make a tool of in one error, with the include that leaves them all out", () => {
    const api: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/files": { post: { requestBody: { content: { "multipart/form-data": { schema: { type: "object" } } } } } },
        "/api/session": { get: { parameters: [{ name: "sid", in: "cookie", required: true, schema: { type: "string" } }] } },
        "/api/users": { get: { operationId: "listUsers" } },
      },
    };
    let refusal: unknown;
    try {
      openApiTools({ openApi: api, baseURL: "http://127.0.0.1:9" });
    } catch (error) {
      refusal = error;
    }
    expect((refusal as Error).message).toBe(
      [
        "openApiTools: openApi: 2 operations cannot be tools:",
        "- POST /api/files takes a multipart/form-data body, which a tool cannot send (it sends JSON or application/x-www-form-urlencoded). Leave the operation out with include.",
        '- GET /api/session requires the cookie "sid", which a tool cannot take from the model. Send it with headers: { cookie: "sid=…" }, or leave the operation out with include.',
        'Fix them in the document, or leave them all out with include: (method, path) => !["POST /api/files","GET /api/session"].includes(`${method} ${path}`).',
      ].join("\n"),
    );
    // The include the message gives, as written, leaves both out and keeps the rest.
    const include = (method: string, path: string) => !["POST /api/files", "GET /api/session"].includes(`${method} ${path}`);
    expect(openApiTools({ openApi: api, baseURL: "http://127.0.0.1:9", include }).map((made) => made.metadata.name)).toEqual(["listUsers"]);
  });

  it("refuses when loading a body it cannot send (a file upload, a nested form field of unknown encoding), naming the operation", () => {
    const upload: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/files": {
          post: {
            requestBody: {
              required: true,
              content: { "multipart/form-data": { schema: { type: "object", properties: { file: { type: "string", format: "binary" } } } } },
            },
          },
        },
      },
    };
    expect(() => openApiTools({ openApi: upload, baseURL: "http://127.0.0.1:9" })).toThrow(
      "openApiTools: openApi: POST /api/files takes a multipart/form-data body, which a tool cannot send (it sends JSON or application/x-www-form-urlencoded). Leave the operation out with include.",
    );
    expect(openApiTools({ openApi: upload, baseURL: "http://127.0.0.1:9", include: (_method, path) => path !== "/api/files" })).toEqual([]);
    const nested: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/users": {
          post: {
            requestBody: {
              content: {
                "application/x-www-form-urlencoded": {
                  schema: { type: "object", properties: { address: { type: "object", properties: { city: { type: "string" } } } } },
                },
              },
            },
          },
        },
      },
    };
    expect(() => openApiTools({ openApi: nested, baseURL: "http://127.0.0.1:9" })).toThrow(
      /POST \/api\/users takes a form body whose field "address" holds an object without `encoding: \{ style: deepObject \}`/,
    );
  });

  it("restApiTool sends a form endpoint's body as a form, and refuses a body for one it cannot send, as openApiTools does", async () => {
    const api = await startRecorder();
    try {
      const openApi: OpenApiDocument = {
        ...stripeLike,
        paths: { ...stripeLike.paths, "/v1/files": { post: { requestBody: { content: { "multipart/form-data": {} } } } } },
      };
      const stripe = restApiTool({ openApi, baseURL: api.baseURL });
      expect(await stripe.call({ method: "POST", path: "/v1/customers", body: customer })).toEqual({ status: 200, body: {} });
      await expect(stripe.call({ method: "POST", path: "/v1/files", body: { file: "x" } })).rejects.toThrow(
        "The API's POST /v1/files takes a multipart/form-data body, which this tool cannot send.",
      );
      expect(api.requests).toEqual([{ path: "/v1/customers", type: "application/x-www-form-urlencoded", body: customerForm }]);
    } finally {
      await api.close();
    }
  });

  it("roots the paths at a server URL whose scheme, host and port have variables without a default, as baseURL gives those", async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      servers: [{ url: "{scheme}://{tenant}.hr.example.com:{port}/api" }],
      paths: { "/users": { get: listUsers } },
    };
    const tools = openApiTools({ openApi, baseURL: hr.baseURL });
    const source = await runToolCall({ id: "c1", name: "listUsers", input: { page: 2 } }, tools);
    expect(JSON.parse(source.content)).toMatchObject({ status: 200 });
    expect(hr.requests.map((r) => r.path)).toEqual(["/api/users?page=2"]);
  });

  it("refuses a server path variable without a default when loading, unless baseURL gives the path", async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      servers: [{ url: "https://hr.example.com/{base}", variables: { base: { enum: ["api"] } } }],
      paths: { "/users": { get: listUsers } },
    };
    const refusal =
      'openApi: the server URL "https://hr.example.com/{base}" has the variable {base} without a default, so the path the API\'s paths are under is not known. Give it in baseURL (e.g. "https://api.example.com/v1"), which is then used instead.';
    expect(() => openApiTools({ openApi, baseURL: hr?.baseURL ?? "" })).toThrow(`openApiTools: ${refusal}`);
    expect(() => restApiTool({ openApi, baseURL: hr?.baseURL ?? "" })).toThrow(`restApiTool: ${refusal}`);
    const tools = openApiTools({ openApi, baseURL: `${hr.baseURL}/api` });
    const source = await runToolCall({ id: "c1", name: "listUsers", input: { page: 2 } }, tools);
    expect(JSON.parse(source.content)).toMatchObject({ status: 200 });
    expect(hr.requests.map((r) => r.path)).toEqual(["/api/users?page=2"]);
  });
});
