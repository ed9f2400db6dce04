import { describe, expect, it } from "vitest";
import { openApiTools, restApiTool, SchemaTooLargeError } from "../../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../../workflows/tools/rest-api.ts";
import { pathTemplateMatcher } from "../../../workflows/tools/path-template.ts";
import { hrOpenApi } from "../../support/hr-api-server.ts";

const BASE = "http://127.0.0.1:9"; // nothing is sent in these tests
const refs = (to: string, n: number) => Array.from({ length: n }, () => ({ $ref: `#/components/schemas/${to}` }));

/** About 1 KB: each schema refers to itself ten or twenty times over, so that following its $refs never ends well. */
const fanOut: OpenApiDocument = {
  openapi: "3.0.3",
  info: { title: "Fan-out" },
  paths: {
    "/nodes": {
      post: {
        operationId: "addNode",
        requestBody: { content: { "application/json": { schema: { type: "object", properties: { node: { $ref: "#/components/schemas/Node" } } } } } },
      },
    },
  },
  components: {
    schemas: {
      Node: { type: "object", properties: Object.fromEntries(refs("Node", 10).map((ref, i) => [`p${i}`, ref])), oneOf: refs("V", 2) },
      V: { oneOf: refs("V", 20) },
    },
  },
};

describe("OpenAPI documents: bounds on what a document can make the tools do", () => {
  it("refuses a 1 KB document whose $refs fan out, naming the operation and maxSchemaNodes, instead of expanding it for minutes", () => {
    expect(JSON.stringify(fanOut).length).toBeLessThan(1500);
    for (const make of [() => openApiTools({ openApi: fanOut, baseURL: BASE }), () => restApiTool({ baseURL: BASE, openApi: fanOut })]) {
      let error: unknown;
      try {
        make();
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(SchemaTooLargeError);
      expect((error as Error).message).toMatch(
        /^(openApiTools|restApiTool): openApi: the schemas of POST \/nodes take more than 10,000 nodes once their \$refs are followed \(maxSchemaNodes; the default is 10,000\)\. .*raise maxSchemaNodes/,
      );
    }
    // The oneOf fan-out alone, which only restApiTool's endpoint line follows.
    const variants: OpenApiDocument = { ...fanOut, components: { schemas: { Node: { oneOf: refs("V", 3) }, V: { oneOf: refs("V", 3) } } } };
    expect(() => restApiTool({ baseURL: BASE, openApi: variants, maxSchemaNodes: 30 })).toThrow("take more than 30 nodes");
  });

  it("takes real documents as before, with a limit raised or lowered as asked, and refuses a limit that is not one", () => {
    expect(openApiTools({ openApi: hrOpenApi, baseURL: BASE, maxSchemaNodes: 20 }).length).toBe(5);
    expect(() => openApiTools({ openApi: hrOpenApi, baseURL: BASE, maxSchemaNodes: 2 })).toThrow(
      "openApiTools: openApi: the schemas of POST /api/users take more than 2 nodes",
    );
    expect(() => restApiTool({ baseURL: BASE, openApi: hrOpenApi, maxSchemaNodes: 0 })).toThrow(
      "restApiTool: maxSchemaNodes must be a whole number ≥ 1 (the default is 10,000), got 0.",
    );
  });

  it("matches a path from the model against a template with many parameters at once, where a regular expression backtracked for seconds", async () => {
    const template = `/x/${Array.from({ length: 14 }, (_, i) => `{p${i}}`).join("")}`;
    const openApi: OpenApiDocument = { openapi: "3.0.3", info: { title: "Many" }, paths: { [template]: { get: {} } } };
    const api = restApiTool({ baseURL: BASE, openApi });
    const path = `/x/${"a".repeat(29)}/b`; // 34 characters that almost match
    const started = performance.now();
    await expect(Promise.resolve(api.call({ method: "GET", path }))).rejects.toThrow(`The API has no endpoint GET ${path}.`);
    // Microseconds now; a backtracking match of this took tens of seconds, so the bound is generous.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("matches templates as before: parts of segments, greedy {name+}, an optional trailing slash", () => {
    const cases: [string, string, boolean][] = [
      ["/api/users/{id}", "/api/users/7", true],
      ["/api/users/{id}", "/api/users/7/", true],
      ["/api/users/{id}", "/api/users/", false],
      ["/api/users/{id}", "/api/users/7/x", false],
      ["/files/{name}.{ext}", "/files/a.b.c", true],
      ["/files/{name}.{ext}", "/files/abc", false],
      ["/files/{path+}", "/files/a/b/c.txt", true],
      ["/files/{path+}/raw", "/files/a/b/raw", true],
      ["/files/{path+}/raw", "/files/raw", false],
      ["/", "/", true],
      ["/", "/x", false],
      ["/a/", "/a", true],
      ["/{a}{b}", "/x", false],
      ["/{a}{b}", "/xy", true],
    ];
    for (const [template, path, expected] of cases) expect([template, path, pathTemplateMatcher(template)(path)]).toEqual([template, path, expected]);
  });
});
