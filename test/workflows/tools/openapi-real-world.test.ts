/**
 * OpenAPI documents as real APIs publish them, made into tools: each either works against the
 * API or is refused when loaded, saying which operation and what to do, never a tool that a
 * provider refuses or that sends the wrong request.
 */
import { afterEach, describe, expect, it } from "vitest";
import { runToolCall } from "../../../src/tools/tool-calls.ts";
import { openApiTools } from "../../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../../workflows/tools/rest-api.ts";
import { startHrApiServer } from "../../support/hr-api-server.ts";
import type { HrApiServer } from "../../support/hr-api-server.ts";

let hr: HrApiServer | undefined;
afterEach(async () => {
  await hr?.close();
  hr = undefined;
});

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
});
