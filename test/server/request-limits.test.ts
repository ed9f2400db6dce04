/**
 * The limits on what a request body may be: its size, whether or not it says its length (a
 * chunked body is counted as it streams in), and how deeply its JSON nests (a 400 saying the
 * limit, not a 500 from a stack overflow).
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/server/request-body.ts";
import type { WorkflowServer } from "../../src/server/workflow-server.ts";
import { startServer } from "./server-fixtures.ts";

let server: WorkflowServer;
let url: string;
beforeAll(async () => {
  ({ server, url } = await startServer({ bodyLimit: 64 * 1024 }));
});
afterAll(() => server.close());

const post = (path: string, body: string) => fetch(`${url}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/** Posts `chunks` with Transfer-Encoding: chunked (no Content-Length); resolves with the status and body. */
function postChunked(path: string, chunks: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: "POST", headers: { "Content-Type": "application/json", "Transfer-Encoding": "chunked" } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    // The server may answer and close before every chunk is sent: that is the point.
    req.on("error", (error) =>
      (error as NodeJS.ErrnoException).code === "EPIPE" || (error as NodeJS.ErrnoException).code === "ECONNRESET" ? undefined : reject(error),
    );
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe("a request body nested too deeply", () => {
  it.each([
    ["input", (deep: string) => `{"input":{"input":"x","deep":${deep}}}`],
    ["context", (deep: string) => `{"context":{"deep":${deep}}}`],
  ])("in %s gets 400 naming the limit, not a 500", async (_where, body) => {
    for (const depth of [4_000, 30_000]) {
      const response = await post("/api/workflows/agent/start", body(nested(depth)));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        error: {
          code: "json_too_deep",
          message: `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, the server's limit. Send flatter JSON.`,
        },
      });
    }
  });

  it("is taken up to the limit, and brackets inside strings do not count", async () => {
    const atLimit = nested(MAX_JSON_DEPTH - 3); // inside {"input":{ … "deep": … }}
    const response = await post("/api/workflows/agent/start", `{"input":{"input":"${"[".repeat(5000)}","deep":${atLimit}}}`);
    expect(response.status).toBe(202);
  });
});

describe("a start's body", () => {
  it("is taken as zod reads it: keys it does not name left out, a __proto__ key dropped however it is written", async () => {
    for (const body of [
      '{"input":{"input":"What is 2 + 2?","__proto__":{"polluted":true}},"other":1}',
      '{"input":{"input":"What is 2 + 2?","\\u005f_proto__":{"polluted":true}}}',
    ]) {
      const response = await post("/api/workflows/agent/start", body);
      expect(response.status).toBe(202);
      const text = await response.text();
      expect(text).not.toContain("proto");
      expect(JSON.parse(text)).toMatchObject({ input: { input: "What is 2 + 2?" } });
    }
  });

  it("gets 400 for a number too large for JSON's doubles, in its input or its timeout", async () => {
    for (const body of ['{"input":{"input":"x","n":1e400}}', '{"input":{"input":"x"},"timeout":1e400}', '{"input":{"input":"x"},"timeout":0}']) {
      const response = await post("/api/workflows/agent/start", body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(await response.json()).toMatchObject({ error: { code: "invalid_request" } });
    }
  });
});

describe("the body limit", () => {
  it("refuses a body whose Content-Length is over the limit, and one that streams past it without a length", async () => {
    const big = JSON.stringify({ input: { input: "x".repeat(70 * 1024) } });
    const response = await post("/api/workflows/agent/start", big);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: { code: "body_too_large", message: "The request body is larger than the server's limit of 65536 bytes." } });

    const chunked = await postChunked("/api/workflows/agent/start", [big.slice(0, 40_000), big.slice(40_000)]);
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: { code: "body_too_large" } });
  });

  it("takes a chunked body under the limit", async () => {
    const body = JSON.stringify({ input: { input: "What is 2 + 2?" } });
    const chunked = await postChunked("/api/workflows/agent/run", [body.slice(0, 10), body.slice(10)]);
    expect(chunked.status).toBe(200);
    expect(JSON.parse(chunked.body)).toMatchObject({ status: "succeeded" });
  });
});
