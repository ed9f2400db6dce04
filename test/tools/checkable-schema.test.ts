import { afterEach, describe, expect, it } from "vitest";
import type { BaseTool } from "@llamaindex/core/llms";
import { checkableSchema } from "../../src/tools/checkable-schema.ts";
import { runToolCall } from "../../src/tools/tool-calls.ts";
import { openApiTools } from "../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../workflows/tools/rest-api.ts";
import { startHrApiServer } from "../support/hr-api-server.ts";
import type { HrApiServer } from "../support/hr-api-server.ts";

let hr: HrApiServer | undefined;
afterEach(async () => {
  await hr?.close();
  hr = undefined;
});

/** A tool with a plain JSON schema (an MCP server's, a hand-written one) that records what it ran with. */
function jsonSchemaTool(parameters: Record<string, unknown>) {
  const ran: unknown[] = [];
  const made: BaseTool = { metadata: { name: "book", description: "Book a room.", parameters }, call: (input: unknown) => (ran.push(input), "booked") };
  return { made, ran };
}

describe("checking calls against JSON schemas zod reads only in part", () => {
  it("checks a schema with draft-07 #/definitions refs and keywords zod refuses (not, if/then, dependentRequired) in all the rest", async () => {
    // As zod-to-json-schema (and many MCP servers built with it) writes schemas: refs under definitions.
    const { made, ran } = jsonSchemaTool({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        room: { $ref: "#/definitions/Room" },
        nights: { type: "integer", minimum: 1, not: { const: 13 } },
        guest: { type: "string", if: { const: "" }, then: false },
      },
      required: ["room", "nights"],
      dependentRequired: { guest: ["nights"] },
      additionalProperties: false,
      definitions: { Room: { type: "string", enum: ["single", "double"] } },
    });
    const run = (input: unknown) => runToolCall({ id: "c", name: "book", input: input as Record<string, never> }, [made]);
    for (const wrong of [
      { room: "suite", nights: 2 },
      { room: "single", nights: "2" },
      { room: "single" },
      { room: "single", nights: 0 },
      { room: "double", nights: 1, pets: 2 },
    ]) {
      const source = await run(wrong);
      expect({ wrong, content: source.content }).toEqual({ wrong, content: expect.stringMatching(/^Invalid arguments for tool book: .*The tool was not run/) });
    }
    expect(ran).toEqual([]);
    expect((await run({ room: "double", nights: 2, guest: "Ada" })).content).toBe("booked");
    expect(ran).toEqual([{ room: "double", nights: 2, guest: "Ada" }]);

    // Refs under definitions in a schema that does not say it is draft-07 (pydantic 1 wrote these).
    const bare = jsonSchemaTool({
      type: "object",
      properties: { room: { $ref: "#/definitions/Room" } },
      required: ["room"],
      definitions: { Room: { enum: ["single"] } },
    });
    const refused = await runToolCall({ id: "c", name: "book", input: { room: "suite" } }, [bare.made]);
    expect(refused.content).toMatch(/^Invalid arguments for tool book: room: /);
    expect(bare.ran).toEqual([]);
  });

  it("checks an OpenAPI operation whose body uses not: a call without its path parameter is not sent", async () => {
    hr = await startHrApiServer();
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/api/users/{id}": {
          patch: {
            operationId: "renameUser",
            parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: { type: "object", properties: { first_name: { type: "string", not: { enum: [""] } } }, required: ["first_name"] },
                },
              },
            },
          },
        },
      },
    };
    const tools = openApiTools({ openApi, baseURL: hr.baseURL });
    const noId = await runToolCall({ id: "c1", name: "renameUser", input: { body: { first_name: "Ann" } } }, tools);
    expect(noId.content).toMatch(/^Invalid arguments for tool renameUser: id: /);
    const noName = await runToolCall({ id: "c2", name: "renameUser", input: { id: 7, body: {} } }, tools);
    expect(noName.content).toMatch(/^Invalid arguments for tool renameUser: body\.first_name: /);
    expect(hr.requests).toEqual([]);
    const renamed = await runToolCall({ id: "c3", name: "renameUser", input: { id: 7, body: { first_name: "Ann" } } }, tools);
    expect(JSON.parse(renamed.content)).toMatchObject({ status: 200 });
    expect(hr.requests.map((r) => [r.method, r.path])).toEqual([["PATCH", "/api/users/7"]]);
  });

  it("checks what it can of a schema zod cannot read at all: required arguments, top-level types, no others when closed", async () => {
    const { made, ran } = jsonSchemaTool({
      type: "object",
      properties: { room: { $ref: "#/$defs/Missing" }, nights: { type: "integer" }, note: { type: "string", nullable: true } },
      required: ["room", "nights"],
    });
    expect(checkableSchema(made.metadata.parameters)).not.toBeNull();
    const refused = await runToolCall({ id: "c1", name: "book", input: { nights: 1.5, note: 3 } }, [made]);
    expect(refused.content).toBe(
      "Invalid arguments for tool book: room: missing: it is required; nights: expected integer, got number; note: expected string or null, got number. The tool was not run; call it again with arguments that match its schema.",
    );
    // Open (no additionalProperties: false): other arguments pass, as the schema allows them.
    const booked = await runToolCall({ id: "c2", name: "book", input: { room: { id: 4 }, nights: 2, note: null, early: true } as never }, [made]);
    expect(booked.content).toBe("booked");
    expect(ran).toEqual([{ room: { id: 4 }, nights: 2, note: null, early: true }]);
  });
});
