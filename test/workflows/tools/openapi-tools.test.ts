import { afterEach, describe, expect, it } from "vitest";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../../../events/index.ts";
import { ScriptedLLM } from "../../../src/llm/scripted-llm.ts";
import { runToolCall } from "../../../src/tools/tool-calls.ts";
import { FunctionCallingAgent } from "../../../workflows/function-calling-agent.ts";
import { changesData, describeRestCall, openApiTools, restApiTool } from "../../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../../workflows/tools/rest-api.ts";
import { hrOpenApi, startHrApiServer } from "../../support/hr-api-server.ts";
import type { HrApiServer } from "../../support/hr-api-server.ts";

let hr: HrApiServer | undefined;
afterEach(async () => {
  await hr?.close();
  hr = undefined;
});

const byName = (tools: readonly { metadata: { name: string } }[], name: string) => {
  const found = tools.find((t) => t.metadata.name === name);
  if (!found) throw new Error(`no tool ${name} among ${tools.map((t) => t.metadata.name).join(", ")}`);
  return found as (typeof tools)[number] & { metadata: { description: string; parameters?: Record<string, unknown> } };
};

describe("openApiTools: one tool per operation", () => {
  it("names each operation, gives its parameters and body as a JSON schema, and fires Lawson with a human's approval of the DELETE", async () => {
    hr = await startHrApiServer({ apiKey: "hr-secret" });
    const tools = openApiTools({ openApi: hrOpenApi as unknown as OpenApiDocument, baseURL: hr.baseURL, headers: { authorization: "Bearer hr-secret" } });
    expect(tools.map((t) => t.metadata.name)).toEqual(["get_api_users", "post_api_users", "get_api_users_id", "patch_api_users_id", "delete_api_users_id"]);
    expect(byName(tools, "delete_api_users_id").metadata.description).toBe("DELETE /api/users/{id}: Remove an employee (fire them).");
    expect(byName(tools, "get_api_users").metadata.parameters).toEqual({
      type: "object",
      properties: { page: { type: "integer" } },
      required: [],
      additionalProperties: false,
    });
    // The $ref'd body schema is inlined: a model (and the tool runner) reads it whole.
    expect(byName(tools, "patch_api_users_id").metadata.parameters).toEqual({
      type: "object",
      properties: {
        id: { type: "integer" },
        body: {
          type: "object",
          required: ["first_name", "last_name"],
          properties: { first_name: { type: "string" }, last_name: { type: "string" }, email: { type: "string" } },
        },
      },
      required: ["id"],
      additionalProperties: false,
    });

    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "c1", name: "get_api_users", input: { page: 2 } }] },
      { toolCalls: [{ id: "c2", name: "delete_api_users_id", input: { id: 7 } }] },
      { text: "Michael Lawson (id 7) has been removed." },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools, needsApproval: changesData(tools) });
    const handler = agent.run({ input: "Fire Lawson" });
    const asked: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        asked.push(`Approve ${describeRestCall(ev.toolCall, tools)}?`);
        expect(hr.users.some((user) => user.id === 7)).toBe(true); // not yet
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
      }
    }
    const { sources } = await handler;
    expect(asked).toEqual(["Approve DELETE /api/users/7?"]);
    expect(hr.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /api/users?page=2", "DELETE /api/users/7"]);
    expect(hr.requests.every((r) => r.authorization === "Bearer hr-secret")).toBe(true);
    expect(hr.requests[1]?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(hr.users.map((user) => user.id)).not.toContain(7);
    expect(JSON.parse(sources[0]?.content ?? "")).toMatchObject({ status: 200, body: { page: 2 } });
    expect(JSON.stringify(llm.requests)).not.toContain("hr-secret");
  });

  it("sends each of two calls of one operation running at once with its own call's idempotency key", async () => {
    hr = await startHrApiServer();
    const tools = openApiTools({ openApi: hrOpenApi as unknown as OpenApiDocument, baseURL: hr.baseURL });
    await Promise.all([
      runToolCall({ id: "c7", name: "delete_api_users_id", input: { id: 7 } }, tools, { idempotencyKey: "key-of-7" }),
      runToolCall({ id: "c8", name: "delete_api_users_id", input: { id: 8 } }, tools, { idempotencyKey: "key-of-8" }),
    ]);
    expect(hr.requests.map((r) => `${r.path} ${r.idempotencyKey}`).sort()).toEqual(["/api/users/7 key-of-7", "/api/users/8 key-of-8"]);
  });

  it("checks a call's arguments against the operation's schema and sends nothing when they are wrong", async () => {
    hr = await startHrApiServer();
    const tools = openApiTools({ openApi: hrOpenApi as unknown as OpenApiDocument, baseURL: hr.baseURL });
    const wrongId = await runToolCall({ id: "c1", name: "delete_api_users_id", input: { id: "seven" } }, tools);
    expect(wrongId.isError).toBe(true);
    expect(wrongId.content).toContain("id");
    const noName = await runToolCall({ id: "c2", name: "post_api_users", input: { body: { first_name: "Ann" } } }, tools);
    expect(noName.isError).toBe(true);
    expect(noName.content).toContain("last_name");
    const unknownArgument = await runToolCall({ id: "c3", name: "get_api_users", input: { page: 1, limit: 5 } }, tools);
    expect(unknownArgument.isError).toBe(true);
    expect(hr.requests).toEqual([]);

    const created = await runToolCall({ id: "c4", name: "post_api_users", input: { body: { first_name: "Ann", last_name: "Lee" } } }, tools);
    expect(JSON.parse(created.content)).toEqual({ status: 201, body: { first_name: "Ann", last_name: "Lee", id: 13 } });
    expect(hr.requests.map((r) => [r.method, r.path, r.body])).toEqual([["POST", "/api/users", { first_name: "Ann", last_name: "Lee" }]]);
  });

  it("keeps requests on the API: a path parameter cannot climb out of its segment", async () => {
    hr = await startHrApiServer();
    const spec: OpenApiDocument = {
      openapi: "3.1.0",
      paths: {
        "/api/files/{name}": { get: { operationId: "readFile", parameters: [{ name: "name", in: "path", required: true, schema: { type: "string" } }] } },
      },
    };
    const [readFile] = openApiTools({ openApi: spec, baseURL: `${hr.baseURL}/` });
    for (const name of ["..", "../echo", "a/../../echo"]) {
      const source = await runToolCall({ id: "c", name: "readFile", input: { name } }, [readFile as NonNullable<typeof readFile>]);
      expect(source.isError).toBe(true);
      expect(source.content).toContain("outside the API");
    }
    expect(hr.requests).toEqual([]);
  });

  it("reads documents as they are written: operationIds, shared and $ref parameters, nullable, read-only fields, clashing names, include", () => {
    const spec: OpenApiDocument = {
      openapi: "3.0.3",
      servers: [{ url: "https://shop.example.com/v2" }],
      paths: {
        "/orders/{orderId}/refund": {
          parameters: [{ $ref: "#/components/parameters/OrderId" }],
          post: {
            operationId: "orders.refund",
            summary: "Refund an order.",
            description: "Sends the money back to the customer's card.",
            requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/Refund" } } } },
          },
        },
        "/orders": { get: { operationId: "orders.refund", summary: "List orders." }, head: { summary: "Not a tool." } },
        "/orders/{orderId}": { delete: { summary: "Cancel an order.", parameters: [{ $ref: "#/components/parameters/OrderId" }] } },
      },
      components: {
        parameters: { OrderId: { name: "orderId", in: "path", required: true, description: "The order's number.", schema: { type: "string" } } },
        schemas: {
          Refund: {
            type: "object",
            required: ["id", "amount"],
            properties: { id: { type: "string", readOnly: true }, amount: { type: "number", example: 12.5 }, note: { type: "string", nullable: true } },
          },
        },
      },
    };
    const tools = openApiTools({ openApi: spec, baseURL: "https://shop.example.com" });
    expect(tools.map((t) => t.metadata.name)).toEqual(["orders_refund", "orders_refund_2", "delete_orders_orderId"]);
    expect(byName(tools, "orders_refund").metadata.description).toBe(
      "POST /orders/{orderId}/refund: Refund an order. Sends the money back to the customer's card.",
    );
    expect(byName(tools, "orders_refund").metadata.parameters).toEqual({
      type: "object",
      properties: {
        orderId: { type: "string", description: "The order's number.", minLength: 1 },
        body: { type: "object", required: ["amount"], properties: { amount: { type: "number" }, note: { type: ["string", "null"] } } },
      },
      required: ["orderId", "body"],
      additionalProperties: false,
    });
    const onlyReads = openApiTools({ openApi: spec, baseURL: "https://shop.example.com", include: (method) => method === "GET" });
    expect(onlyReads.map((t) => t.metadata.name)).toEqual(["orders_refund"]);

    const refund = { id: "r", name: "orders_refund", input: { orderId: "A 7", body: { amount: 3 } } };
    expect(describeRestCall(refund, tools)).toBe("POST /orders/A%207/refund");
    expect(changesData(tools)(refund)).toBe(true);
    expect(changesData(tools)({ id: "l", name: "orders_refund_2", input: {} })).toBe(false);
    const single = restApiTool({ baseURL: "https://shop.example.com", openApi: spec });
    expect(changesData([single])({ id: "g", name: "call_rest_api", input: { method: "GET", path: "/orders" } })).toBe(false);
    expect(changesData([single])({ id: "d", name: "call_rest_api", input: { method: "DELETE", path: "/orders/7" } })).toBe(true);
    expect(describeRestCall({ id: "d", name: "call_rest_api", input: { method: "DELETE", path: "/orders/7" } }, [single])).toBe("DELETE /orders/7");
    expect(describeRestCall({ id: "x", name: "add", input: {} }, tools)).toBeUndefined();

    expect(() => openApiTools({ openApi: { swagger: "2.0", paths: {} }, baseURL: "https://x.example.com" })).toThrow(
      "openApiTools: openApi must be an OpenAPI 3 document; this one is Swagger 2.0.",
    );
    expect(() => openApiTools({ openApi: spec, baseURL: "ftp://x.example.com" })).toThrow("openApiTools: baseURL must be an http(s) URL");
  });
});
