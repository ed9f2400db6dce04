/**
 * The CLI with a REST API: `--hr-demo` and `--openapi … --api …`, where every call that changes
 * data asks `Approve DELETE /api/users/7? [y/N]` and reads the answer from stdin, between the
 * chat's own lines. The CLI runs as a child process, its stdin piped.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import { afterEach, describe, expect, it } from "vitest";
import { hrOpenApi, startHrApiServer } from "../../workflows/demo/hr-api-server.ts";
import type { HrApiServer } from "../../workflows/demo/hr-api-server.ts";
import { startOpenAIServer } from "../support/openai-sse-server.ts";
import { runCli as cli } from "../support/cli-process.ts";

let hr: HrApiServer | undefined;
afterEach(async () => {
  await hr?.close();
  hr = undefined;
});

describe("stepflow --openapi: what the document says reaches the terminal as text only", { timeout: 180_000 }, () => {
  it("prints a title with a window-title, screen-clear and clipboard sequence in the banner and the --verbose trace without them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stepflow-escapes-"));
    const spec = join(dir, "spec.json");
    const title = "Evil\x1b]0;owned\x07 API\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07";
    writeFileSync(spec, JSON.stringify({ ...hrOpenApi, info: { title } }));
    const { code, stderr } = await cli(["--openapi", spec, "--api", "http://127.0.0.1:1", "--verbose", "What is 2 + 3?"]);
    expect(code).toBe(0);
    expect(stderr).toContain("REST API: Evil API at http://127.0.0.1:1.");
    expect([...stderr].filter((ch) => ch !== "\n" && ch !== "\t" && (ch < " " || (ch >= "\x7f" && ch <= "\x9f")))).toEqual([]);
  });
});

describe("stepflow --hr-demo (offline model)", { timeout: 180_000 }, () => {
  it("fires Lawson once the user types y at the approval question, in a piped chat", async () => {
    const { code, stdout, stderr } = await cli(["--hr-demo"], { stdin: "Fire Lawson\ny\n/exit\n" });
    expect(code).toBe(0);
    expect(stderr).toMatch(/HR demo API at http:\/\/127\.0\.0\.1:\d+ \(12 employees/);
    expect(stderr).toContain("Approve DELETE /api/users/7? [y/N] y\n  approved");
    expect(stderr).toContain('call_rest_api({"method":"DELETE","path":"/api/users/7"}) → {"status":204');
    expect(stdout.trim()).toBe("Done: Michael Lawson (id 7) has been removed.");
  });

  it("deletes nothing when the answer is no: asked again, Lawson is still there", async () => {
    const { code, stdout, stderr } = await cli(["--hr-demo"], { stdin: "Fire Lawson\nn\nFire Lawson\nyes\n" });
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^I did not fire Michael Lawson: .*The user said no\./);
    expect(lines[1]).toBe("Done: Michael Lawson (id 7) has been removed.");
    expect(stderr.match(/Approve DELETE \/api\/users\/7\? \[y\/N\]/g)).toHaveLength(2);
  });

  it("asks a one-shot question's approval on stdin too, and refuses when stdin has no answer", async () => {
    const yes = await cli(["--hr-demo", "Fire Lawson"], { stdin: "y\n" });
    expect(yes.code).toBe(0);
    expect(yes.stdout.trim()).toBe("Done: Michael Lawson (id 7) has been removed.");
    const none = await cli(["--hr-demo", "Fire Lawson"]);
    expect(none.code).toBe(0);
    expect(none.stderr).toContain("Approve DELETE /api/users/7? [y/N] \n");
    expect(none.stdout.trim()).toMatch(/^I did not fire Michael Lawson: .*No answer: the input ended\./);
  });

  it("fires Lawson with one tool per operation too: it lists with get_api_users and asks before delete_api_users_id", async () => {
    const { code, stdout, stderr } = await cli(["--hr-demo", "--tool-per-operation", "--verbose", "Fire Lawson"], { stdin: "y\n" });
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('get_api_users({"page":1})');
    expect(stderr).toContain('get_api_users({"page":2})');
    expect(stderr).toContain("Approve DELETE /api/users/7? [y/N] y");
    expect(stderr).toContain('delete_api_users_id({"id":7}) → {"status":204');
    expect(stdout.trim()).toBe("Done: Michael Lawson (id 7) has been removed.");
  });

  it("asks with --json too, printing the result as JSON", async () => {
    const { code, stdout, stderr } = await cli(["--hr-demo", "--json", "Fire Lawson"], { stdin: "y\n" });
    expect(code).toBe(0);
    expect(stderr).toContain("Approve DELETE /api/users/7? [y/N] y");
    const result = JSON.parse(stdout) as { response: { content: string }; sources: { input: { method: string } }[] };
    expect(result.response.content).toBe("Done: Michael Lawson (id 7) has been removed.");
    expect(result.sources.map((s) => s.input.method)).toEqual(["GET", "GET", "DELETE"]);
  });
});

describe("stepflow --openapi FILE --api URL", { timeout: 180_000 }, () => {
  it("gives the model the API's tools alone, the calculator's only with --calculator", async () => {
    hr = await startHrApiServer();
    const dir = mkdtempSync(join(tmpdir(), "stepflow-openapi-"));
    const spec = join(dir, "hr.json");
    writeFileSync(spec, JSON.stringify(hrOpenApi));
    const names = async (extra: string[]) => {
      const llm = await startOpenAIServer({ turns: [{ text: "Hello." }] });
      try {
        const { code, stderr } = await cli(["--openapi", spec, "--api", hr?.baseURL ?? "", ...extra, "hi"], { env: { OPENAI_BASE_URL: llm.baseURL } });
        expect(code, stderr).toBe(0);
        return llm.requests[0]?.body.tools?.map((t) => t.function.name);
      } finally {
        await llm.close();
      }
    };
    expect(await names([])).toEqual(["call_rest_api"]);
    expect(await names(["--calculator"])).toEqual(expect.arrayContaining(["call_rest_api", "add", "multiply"]));
  });

  it("calls the API of a YAML OpenAPI document with the authorization it is given, and never prints it", async () => {
    hr = await startHrApiServer({ apiKey: "hr-secret-123" });
    const dir = mkdtempSync(join(tmpdir(), "stepflow-openapi-"));
    const spec = join(dir, "hr.yaml");
    writeFileSync(spec, toYaml(hrOpenApi));
    const { code, stdout, stderr } = await cli(["--openapi", spec, "--api", hr.baseURL, "--verbose"], {
      stdin: "Fire Lawson\ny\n",
      env: { STEPFLOW_API_AUTHORIZATION: "Bearer hr-secret-123" },
    });
    expect(code).toBe(0);
    expect(stderr).toContain(`REST API: HR API at ${hr.baseURL} (with the STEPFLOW_API_AUTHORIZATION header)`);
    expect(stdout.trim()).toBe("Done: Michael Lawson (id 7) has been removed.");
    expect(hr.users.map((u) => u.last_name)).not.toContain("Lawson");
    expect(hr.requests.map((r) => `${r.method} ${r.path} ${r.authorization}`)).toEqual([
      "GET /api/users?page=1 Bearer hr-secret-123",
      "GET /api/users?page=2 Bearer hr-secret-123",
      "DELETE /api/users/7 Bearer hr-secret-123",
    ]);
    expect(`${stdout}${stderr}`).not.toContain("hr-secret-123");
  });

  it("gives a real model one tool per operation with --tool-per-operation, and asks before the DELETE", async () => {
    const llm = await startOpenAIServer({
      turns: [{ toolCalls: [{ id: "c1", name: "delete_api_users_id", arguments: { id: 7 } }] }, { text: "Michael Lawson is gone." }],
    });
    try {
      const { code, stdout, stderr } = await cli(["--hr-demo", "--tool-per-operation", "Fire Lawson"], {
        stdin: "y\n",
        env: { OPENAI_BASE_URL: llm.baseURL },
      });
      expect(code).toBe(0);
      expect(stderr).toContain("Approve DELETE /api/users/7? [y/N] y");
      expect(stdout.trim()).toBe("Michael Lawson is gone.");
      expect(llm.requests[0]?.body.tools?.map((t) => t.function.name)).toEqual(
        expect.arrayContaining(["get_api_users", "post_api_users", "get_api_users_id", "patch_api_users_id", "delete_api_users_id"]),
      );
      expect(llm.requests[1]?.body.messages.at(-1)?.content).toContain('"status":204');
    } finally {
      await llm.close();
    }
  });

  it("refuses one tool per operation of a secured API without STEPFLOW_API_AUTHORIZATION, saying to set it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stepflow-openapi-"));
    const spec = join(dir, "secured.json");
    writeFileSync(
      spec,
      JSON.stringify({
        ...hrOpenApi,
        components: { ...hrOpenApi.components, securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
        security: [{ bearer: [] }],
      }),
    );
    const { code, stderr } = await cli(["--openapi", spec, "--api", "http://127.0.0.1:1", "--tool-per-operation", "hi"]);
    expect(code).toBe(2);
    expect(stderr).toContain('need credentials: the security scheme "bearer" (HTTP bearer), which is not configured.');
    expect(stderr).toContain('From the command line, set STEPFLOW_API_AUTHORIZATION to the Authorization header\'s value (e.g. "Bearer …")');
  });

  it("refuses flags that cannot work, in one line with exit code 2", { timeout: 300_000 }, async () => {
    // A port nothing listens on (fetch refuses low ports such as 1 itself, as "bad port").
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const closed = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const dir = mkdtempSync(join(tmpdir(), "stepflow-openapi-"));
    const noServers = join(dir, "no-servers.json");
    writeFileSync(noServers, JSON.stringify(hrOpenApi));
    const notOpenApi = join(dir, "other.json");
    writeFileSync(notOpenApi, JSON.stringify({ hello: "world" }));
    const cases: [string[], RegExp][] = [
      [["--hr-demo", "--api", "http://127.0.0.1:1"], /--hr-demo starts its own API/],
      [["--openapi", join(dir, "missing.json"), "--api", "http://127.0.0.1:1"], /--openapi: cannot read .*missing\.json.* \(no such file\)/],
      [["--openapi", noServers], /needs --api <base URL>/],
      [["--openapi", notOpenApi, "--api", "http://127.0.0.1:1"], /is not an OpenAPI document/],
      [["--api", "ftp://example.com"], /--api must be an http\(s\) URL/],
      [["--api", "http://127.0.0.1:1", "--tool-per-operation"], /--tool-per-operation needs --openapi/],
      [
        ["--openapi", join(dir, "tools.mjs"), "--api", "http://127.0.0.1:1"],
        /--openapi takes an OpenAPI document, JSON or YAML .*not a program: ".*tools\.mjs"/,
      ],
      [
        ["--openapi", `http://127.0.0.1:${closed}/openapi.json`],
        new RegExp(
          `^stepflow: --openapi: cannot fetch http://127\\.0\\.0\\.1:${closed}/openapi\\.json: connection refused \\(is the server running, on that port\\?\\)\\.$`,
          "m",
        ),
      ],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await cli([...args, "hi"]);
      expect({ args, code, stderr }).toEqual({ args, code: 2, stderr: expect.stringMatching(message) });
      expect(stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});

describe("stepflow --api-header: a key in a header other than Authorization", { timeout: 180_000 }, () => {
  const KEY = "xk-live-4242-secret";
  const keyedDocument = {
    openapi: "3.0.3",
    info: { title: "Items API", version: "1" },
    components: { securitySchemes: { key: { type: "apiKey", in: "header", name: "X-API-Key" } } },
    security: [{ key: [] }],
    paths: { "/items": { get: { operationId: "listItems", responses: { "200": { description: "the items" } } } } },
  };

  it("sends the key from the named variable in X-API-Key, and neither the terminal, the trace nor the model sees it", async () => {
    const seen: (string | undefined)[] = [];
    // An API that takes its key in X-API-Key only, and repeats it in its answer, as some do.
    const api = createHttpServer((req, res) => {
      const key = req.headers["x-api-key"];
      seen.push(typeof key === "string" ? key : undefined);
      res.writeHead(key === KEY ? 200 : 401, { "content-type": "application/json" });
      res.end(JSON.stringify(key === KEY ? { items: ["lamp"], yourKey: key } : { error: "missing X-API-Key" }));
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    const baseURL = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), "stepflow-openapi-"));
    const spec = join(dir, "items.json");
    writeFileSync(spec, JSON.stringify(keyedDocument));
    const llm = await startOpenAIServer({ turns: [{ toolCalls: [{ id: "c1", name: "listItems", arguments: {} }] }, { text: "You have a lamp." }] });
    try {
      const { code, stdout, stderr } = await cli(
        ["--openapi", spec, "--api", baseURL, "--tool-per-operation", "--api-header", "X-API-Key=ITEMS_KEY", "--verbose", "What do I have?"],
        { env: { OPENAI_BASE_URL: llm.baseURL, ITEMS_KEY: KEY } },
      );
      expect(code, stderr).toBe(0);
      expect(seen).toEqual([KEY]);
      expect(stderr).toContain(`REST API: Items API at ${baseURL} (with the X-API-Key header from ITEMS_KEY).`);
      expect(stdout.trim()).toBe("You have a lamp.");
      const toolResult = String(llm.requests[1]?.body.messages.at(-1)?.content);
      expect(toolResult).toContain('"items":["lamp"]');
      expect(`${stdout}${stderr}${JSON.stringify(llm.requests.map((r) => r.body))}`).not.toContain(KEY);
    } finally {
      await llm.close();
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it("refuses a header it cannot send, in one line with exit code 2, never quoting what follows =", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stepflow-openapi-"));
    const spec = join(dir, "items.json");
    writeFileSync(spec, JSON.stringify(keyedDocument));
    const api = ["--api", "http://127.0.0.1:1"];
    const cases: [string[], RegExp][] = [
      [[...api, "--api-header", `X-API-Key: ${KEY}`], /^stepflow: --api-header takes NAME=VARIABLE: .*never the value itself/],
      [[...api, "--api-header", `X-API-Key=${KEY}`], /^stepflow: --api-header X-API-Key=…: after "=" goes the name of the environment variable/],
      [
        [...api, "--api-header", "X-API-Key=UNSET_ITEMS_KEY"],
        /^stepflow: --api-header X-API-Key=…: the environment variable named after "=" is not set, or empty\./,
      ],
      [[...api, "--api-header", "Content-Type=ITEMS_KEY"], /Content-Type is a header every request sets itself, not a credential/],
      [[...api, "--api-header", "X-API-Key=ITEMS_KEY", "--api-header", "x-api-key=ITEMS_KEY"], /names the header x-api-key twice/],
      [["--api-header", "X-API-Key=ITEMS_KEY"], /^stepflow: --api-header goes with --openapi or --api/],
      [["--hr-demo", "--api-header", "X-API-Key=ITEMS_KEY"], /^stepflow: --api-header goes with --openapi or --api: the HR demo API takes no key\./],
      [["--openapi", spec, ...api, "--tool-per-operation"], /or send a key in another header with --api-header NAME=VARIABLE/],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await cli([...args, "hi"], { env: { ITEMS_KEY: "items-key-value" } });
      expect({ args, code, stderr }).toEqual({ args, code: 2, stderr: expect.stringMatching(message) });
      expect(stderr).not.toContain(KEY);
      expect(stderr).not.toContain("items-key-value");
    }
  });
});
