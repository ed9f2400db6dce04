import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../src/index.ts";
import { ScriptedLLM } from "../../../src/llm/scripted-llm.ts";
import { runToolCall } from "../../../src/tools/tool-calls.ts";
import { FunctionCallingAgent } from "../../../workflows/function-calling-agent.ts";
import { openApiTools } from "../../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../../workflows/tools/rest-api.ts";
import { hrOpenApi, startHrApiServer } from "../../support/hr-api-server.ts";
import type { HrApiServer } from "../../support/hr-api-server.ts";

let hr: HrApiServer | undefined;
const servers: { close(): unknown }[] = [];
afterEach(async () => {
  await hr?.close();
  hr = undefined;
  for (const server of servers.splice(0)) server.close();
});

/** The HR demo API's document, with a bearer scheme every operation needs, as a real one declares it. */
const securedHr = {
  ...(hrOpenApi as unknown as OpenApiDocument),
  components: { ...(hrOpenApi as unknown as OpenApiDocument).components, securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } } },
  security: [{ bearerAuth: [] }],
} as OpenApiDocument;

const refusal = (run: () => unknown): ConfigurationError => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error("not refused");
};

/** A server on 127.0.0.1 answering each request with the headers and query it got. */
async function echoServer(): Promise<{ baseURL: string; seen: { apiKey: string | undefined; url: string | undefined }[] }> {
  const seen: { apiKey: string | undefined; url: string | undefined }[] = [];
  const server = createServer((req, res) => {
    seen.push({ apiKey: req.headers["x-api-key"] as string | undefined, url: req.url });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe("openApiTools and the credentials a document declares", () => {
  it("refuses a bearer-secured API without credentials, or with a token lacking its Bearer prefix, saying what to configure", async () => {
    hr = await startHrApiServer({ apiKey: "hr-secret" });
    const missing = refusal(() => openApiTools({ openApi: securedHr, baseURL: hr?.baseURL ?? "" }));
    expect(missing.option).toBe("headers");
    expect(missing.message).toContain(
      'openApiTools: headers: GET /api/users, POST /api/users, GET /api/users/{id} and 2 other operations need credentials: the security scheme "bearerAuth" (HTTP bearer), which is not configured. Send it with headers: { authorization: "Bearer …" }.',
    );
    expect(missing.message).toContain("Credentials are never the model's arguments: configure them here.");

    const unprefixed = refusal(() => openApiTools({ openApi: securedHr, baseURL: hr?.baseURL ?? "", headers: { Authorization: "hr-secret" } }));
    expect(unprefixed.message).toContain(
      'the security scheme "bearerAuth" (HTTP bearer), whose Authorization header is "Bearer <credentials>": the configured authorization header does not start with "Bearer ".',
    );
    expect(unprefixed.message).not.toContain("hr-secret"); // a credential is never quoted
    expect(hr.requests).toEqual([]);
  });

  it("with checkCredentials: false, makes the tools for a gateway that adds the credentials; they are still never arguments", async () => {
    hr = await startHrApiServer({ apiKey: "hr-secret" });
    // A gateway on the way adds the token: here, a server that answers as if it had.
    const gateway = createServer((req, res) => {
      const upstream = new URL(req.url ?? "/", hr?.baseURL);
      void fetch(upstream, { headers: { authorization: "Bearer hr-secret" } }).then(async (answer) => {
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(await answer.text());
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, "127.0.0.1", resolve));
    servers.push(gateway);
    const baseURL = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
    expect(refusal(() => openApiTools({ openApi: securedHr, baseURL })).message).toContain("pass checkCredentials: false");

    const tools = openApiTools({ openApi: securedHr, baseURL, checkCredentials: false });
    const list = tools.find((t) => t.metadata.name === "get_api_users");
    expect(list?.metadata.parameters).toEqual({ type: "object", properties: { page: { type: "integer" } }, required: [], additionalProperties: false });
    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "c1", name: "get_api_users", input: { page: 2, Authorization: "Bearer guessed" } }] },
      { toolCalls: [{ id: "c2", name: "get_api_users", input: { page: 2 } }] },
      { text: "Page 2 lists six employees." },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools }).run({ input: "Who is on page 2?" });
    expect(String(sources[0]?.content)).toContain("set by the tool itself");
    expect(String(sources[1]?.content)).toContain('"status":200');
    expect(hr.requests.map((r) => r.path)).toEqual(["/api/users?page=2"]);
  });

  it("sends the configured token; a model that passes Authorization is told it is the tool's, and nothing is sent", async () => {
    hr = await startHrApiServer({ apiKey: "hr-secret" });
    const tools = openApiTools({ openApi: securedHr, baseURL: hr.baseURL, headers: { Authorization: "Bearer hr-secret" } });
    const list = tools.find((t) => t.metadata.name === "get_api_users");
    expect(list?.metadata.parameters).toEqual({ type: "object", properties: { page: { type: "integer" } }, required: [], additionalProperties: false });

    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "c1", name: "get_api_users", input: { page: 2, Authorization: "Bearer guessed" } }] },
      { toolCalls: [{ id: "c2", name: "get_api_users", input: { page: 2 } }] },
      { text: "Page 2 lists six employees." },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools }).run({ input: "Who is on page 2?" });
    expect(sources[0]?.content).toBe(
      'Invalid arguments for tool get_api_users: "Authorization": set by the tool itself (credentials come from its configuration), never by a call: leave it out. The tool was not run; call it again with arguments that match its schema.',
    );
    expect(JSON.parse(sources[1]?.content ?? "")).toMatchObject({ status: 200, body: { page: 2 } });
    expect(hr.requests.map((r) => `${r.method} ${r.path} ${r.authorization}`)).toEqual(["GET /api/users?page=2 Bearer hr-secret"]);
    expect(JSON.stringify(llm.requests)).not.toContain("hr-secret");
  });

  it("takes an API key header scheme's value from headers only, even where the document also declares it a parameter", async () => {
    const api = await echoServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      components: { securitySchemes: { key: { type: "apiKey", in: "header", name: "X-Api-Key" } } },
      paths: {
        "/reports": {
          get: {
            operationId: "listReports",
            security: [{ key: [] }],
            parameters: [
              { name: "X-Api-Key", in: "header", required: true, schema: { type: "string" } },
              { name: "year", in: "query", schema: { type: "integer" } },
            ],
          },
        },
        "/health": { get: { operationId: "health", security: [] } }, // open: needs nothing
      },
    };
    const missing = refusal(() => openApiTools({ openApi, baseURL: api.baseURL, headers: { authorization: "Bearer k-123456" } }));
    expect(missing.message).toContain(
      'GET /reports needs credentials: the security scheme "key" (an API key in the header "X-Api-Key"), which is not configured. Send it with headers: { "X-Api-Key": "…" }.',
    );
    expect(missing.message).not.toContain("/health");

    const tools = openApiTools({ openApi, baseURL: api.baseURL, headers: { "x-api-key": "k-123456" } });
    expect(tools[0]?.metadata.parameters).toMatchObject({ properties: { year: { type: "integer" } }, required: [] });
    const wrong = await runToolCall({ id: "c1", name: "listReports", input: { year: 2025, "x-api-key": "guess" } }, tools);
    expect(wrong.content).toContain('"x-api-key": set by the tool itself (credentials come from its configuration), never by a call: leave it out.');
    const right = await runToolCall({ id: "c2", name: "listReports", input: { year: 2025 } }, tools);
    expect(right.content).toBe('{"status":200,"body":{"ok":true}}');
    expect(api.seen).toEqual([{ apiKey: "k-123456", url: "/reports?year=2025" }]);
  });

  it("takes an API key in the query from baseURL's, never from the model, and names the alternatives when there are several", async () => {
    const api = await echoServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      components: {
        securitySchemes: { query: { type: "apiKey", in: "query", name: "api_key" }, bearer: { type: "http", scheme: "bearer" } },
      },
      security: [{ query: [] }, { bearer: [] }],
      paths: {
        "/items": { get: { operationId: "listItems", parameters: [{ name: "api_key", in: "query", schema: { type: "string" } }] } },
      },
    };
    const missing = refusal(() => openApiTools({ openApi, baseURL: api.baseURL }));
    expect(missing.message).toContain(
      'GET /items needs credentials for one of these: (1) the security scheme "query" (an API key in the query "api_key"), which is not configured. Send it in baseURL\'s query, e.g. baseURL: "https://api.example.com/?api_key=…"; (2) the security scheme "bearer" (HTTP bearer), which is not configured. Send it with headers: { authorization: "Bearer …" }.',
    );
    const tools = openApiTools({ openApi, baseURL: `${api.baseURL}/?api_key=q-123456` });
    expect(tools[0]?.metadata.parameters).toEqual({ type: "object", properties: {}, required: [], additionalProperties: false });
    const sent = await runToolCall({ id: "c1", name: "listItems", input: {} }, tools);
    expect(sent.content).toBe('{"status":200,"body":{"ok":true}}');
    expect(api.seen.map((s) => s.url)).toEqual(["/items?api_key=q-123456"]);
  });

  it("refuses a required Authorization header parameter without a configured one, and sends the configured one", async () => {
    hr = await startHrApiServer({ apiKey: "hr-secret" });
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/users": {
          get: {
            operationId: "listUsers",
            parameters: [
              { name: "Authorization", in: "header", required: true, schema: { type: "string" } },
              { name: "page", in: "query", schema: { type: "integer" } },
            ],
          },
        },
      },
    };
    const missing = refusal(() => openApiTools({ openApi, baseURL: hr?.baseURL ?? "" }));
    expect(missing.message).toContain(
      'GET /api/users needs credentials: the required header parameter "Authorization", which is not configured. Send it with headers: { authorization: "…" }.',
    );
    const tools = openApiTools({ openApi, baseURL: hr.baseURL, headers: { authorization: "Bearer hr-secret" } });
    const sent = await runToolCall({ id: "c1", name: "listUsers", input: { page: 1 } }, tools);
    expect(JSON.parse(sent.content)).toMatchObject({ status: 200, body: { page: 1 } });
    expect(hr.requests.map((r) => r.authorization)).toEqual(["Bearer hr-secret"]);
  });
});
