import { afterEach, describe, expect, it } from "vitest";
import { FunctionOutputEvent } from "../../../events/index.ts";
import { Context } from "../../../src/index.ts";
import { ScriptedLLM } from "../../../src/llm/scripted-llm.ts";
import { secretRedactor } from "../../../src/tools/secrets.ts";
import { FunctionCallingAgent } from "../../../workflows/function-calling-agent.ts";
import { restApiTool } from "../../../workflows/tools/rest-api.ts";
import { startHrApiServer } from "../../support/hr-api-server.ts";
import type { HrApiServer } from "../../support/hr-api-server.ts";

let hr: HrApiServer | undefined;
afterEach(async () => {
  await hr?.close();
  hr = undefined;
});

const KEY = "hr-secret-4f9a";
const QUERY_KEY = "q/key+with space&more";
const call = (id: string, method: string, path: string) => ({ id, name: "call_rest_api", input: { method, path } });

describe("restApiTool: configured secrets never reach the model", () => {
  it("hides header and baseURL query values that the API echoes, redirects to or repeats in a 404, in every form", async () => {
    hr = await startHrApiServer();
    const api = restApiTool({
      baseURL: `${hr.baseURL}/?api_key=${encodeURIComponent(QUERY_KEY)}`,
      description: "The HR API.",
      headers: { authorization: `Bearer ${KEY}`, "x-api-key": KEY },
    });
    const llm = new ScriptedLLM([
      { toolCalls: [call("echo", "GET", "/api/echo"), call("redirect", "GET", "/api/login-redirect"), call("missing", "GET", "/api/nothing-here")] },
      { text: "Done." },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools: [api], verbose: true });
    const lines: string[] = [];
    const log = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
    const original = console.log;
    console.log = log;
    const ctx = new Context(agent);
    const streamed: string[] = [];
    try {
      const handler = agent.run({ input: "Show me" }, { ctx });
      for await (const ev of handler.streamEvents()) if (ev instanceof FunctionOutputEvent) streamed.push(JSON.stringify(ev.output));
      const { sources } = await handler;
      // The API did get the secrets…
      expect(hr.requests[0]?.authorization).toBe(`Bearer ${KEY}`);
      expect(hr.requests[0]?.path).toContain(`api_key=${new URLSearchParams({ k: QUERY_KEY }).toString().slice(2)}`);
      // …and what it echoed reached the model with each of them hidden.
      const [echo, redirect, missing] = sources.map((s) => JSON.parse(s.content) as { status: number; body: Record<string, unknown>; location?: string });
      expect(echo?.body).toMatchObject({ headers: { authorization: "***", "x-api-key": "***" } });
      expect(String(echo?.body.url)).toBe("/api/echo?api_key=***");
      expect(redirect).toEqual({ status: 302, body: "", location: "https://login.example.com/start?api_key=***" });
      expect(missing).toEqual({ status: 404, body: { error: "Not found: /api/nothing-here?api_key=***" } });
    } finally {
      console.log = original;
    }
    const everywhere = JSON.stringify([llm.requests, ctx.toJSON(), streamed, lines]);
    for (const secret of [KEY, QUERY_KEY, encodeURIComponent(QUERY_KEY), new URLSearchParams({ k: QUERY_KEY }).toString().slice(2)]) {
      expect(everywhere).not.toContain(secret);
    }
    expect(lines.join("\n")).toContain("Got output:");
  });

  it("hides a secret cut at maxBodyChars, and one in an error text", async () => {
    const server = (hr = await startHrApiServer());
    const echoOnly = (maxBodyChars: number) =>
      restApiTool({ baseURL: server.baseURL, description: "The HR API.", headers: { "x-api-key": KEY }, maxBodyChars });
    // The echo body holds the key near its end; a limit ending inside the key must not leave its first characters.
    const full = JSON.stringify(await echoOnly(100_000).call({ method: "GET", path: "/api/echo" }));
    for (let limit = 20; limit < 120; limit++) {
      const result = (await echoOnly(limit).call({ method: "GET", path: "/api/echo" })) as { body: string };
      expect({ limit, leaked: /hr-se|4f9a/.test(result.body) }).toEqual({ limit, leaked: false });
    }
    expect(full).not.toContain(KEY);
    // A value named in `secrets` (here one the API repeats from the query) is hidden too.
    const withSecrets = restApiTool({ baseURL: server.baseURL, description: "The HR API.", secrets: ["session-0xBEEF"] });
    expect(JSON.stringify(await withSecrets.call({ method: "GET", path: "/api/echo?s=session-0xBEEF" }))).toContain('"url":"/api/echo?s=***"');
    const unreachable = restApiTool({ baseURL: `http://127.0.0.1:1/?token=${KEY}`, description: "Nothing.", timeout: 5 });
    await expect(unreachable.call({ method: "GET", path: "/x" })).rejects.toThrow(/^Cannot reach the API at http:\/\/127\.0\.0\.1:1\//);
  });

  it("secretRedactor hides a value as written, percent-encoded in either case, form-encoded and JSON-escaped, and leaves short values alone", () => {
    const redact = secretRedactor(['s3cr3t "v"/ä', "en"]);
    expect(redact('a s3cr3t "v"/ä b')).toBe("a *** b");
    expect(redact("x=s3cr3t%20%22v%22%2F%C3%A4&y")).toBe("x=***&y");
    expect(redact("x=s3cr3t%20%22v%22%2f%c3%a4")).toBe("x=***");
    expect(redact("x=s3cr3t+%22v%22%2F%C3%A4")).toBe("x=***");
    expect(redact('{"k":"s3cr3t \\"v\\"/ä"}')).toBe('{"k":"***"}');
    expect(redact("en-US, en")).toBe("en-US, en");
  });
});
