/**
 * A tool call in doubt (an earlier attempt started it and recorded no outcome: the run was saved
 * while it ran, then resumed) is made again only when making it twice does no more than once: a
 * GET, a PUT or DELETE, a POST to an API that honours its Idempotency-Key, a tool annotated
 * read-only or idempotent. Any other call is not made again, and the model reads that its
 * outcome is unknown.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ChatMessage } from "@llamaindex/core/llms";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigurationError, Context } from "../../src/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import type { ScriptedReply } from "../../src/llm/scripted-llm.ts";
import { annotateTool, tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { repeatsWhenInDoubt } from "../../workflows/tool-repeat-policy.ts";
import { openApiTools, restApiTool } from "../../workflows/tools/rest-api.ts";
import { gate } from "../support/gate.ts";

/** What the API received: by which attempt, the method, the path and the Idempotency-Key. */
interface Received {
  readonly attempt: "first" | "resume";
  readonly method: string;
  readonly path: string;
  readonly key: string | undefined;
}

const received: Received[] = [];
let attempt: Received["attempt"] = "first";
/** Holds the first attempt's requests unanswered: they are in flight when the run is saved. */
const held = gate();
const api = createServer((req, res) => {
  const key = req.headers["idempotency-key"];
  received.push({ attempt, method: req.method ?? "", path: req.url ?? "", key: typeof key === "string" ? key : undefined });
  req.resume();
  const answer = () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  if (attempt === "first") void held.promise.then(answer);
  else answer();
});

const calls: NonNullable<ScriptedReply["toolCalls"]> = [
  { id: "get", name: "call_api", input: { method: "GET", path: "/things" } },
  { id: "delete", name: "call_api", input: { method: "DELETE", path: "/things/7" } },
  { id: "post", name: "call_api", input: { method: "POST", path: "/things", body: { name: "new" } } },
  { id: "pay", name: "call_payments", input: { method: "POST", path: "/payments", body: { cents: 500 } } },
  { id: "email", name: "send_email", input: { to: "bob" } },
  { id: "status", name: "set_status", input: { status: "away" } },
];

/** The agent's tools; `run` is what their own functions do (the REST tools reach the API). */
function toolsFor(baseURL: string, run: (name: string) => Promise<string>) {
  return [
    restApiTool({ baseURL, name: "call_api", description: "The things API." }),
    restApiTool({ baseURL, name: "call_payments", description: "The payments API.", honoursIdempotencyKey: true }),
    tool({ name: "send_email", description: "Send an email.", parameters: z.object({ to: z.string() }), execute: () => run("send_email") }),
    annotateTool(tool({ name: "set_status", description: "Set my status.", parameters: z.object({ status: z.string() }), execute: () => run("set_status") }), {
      idempotentHint: true,
    }),
  ];
}

const toolResult = (messages: readonly ChatMessage[], id: string) =>
  messages.find((m) => (m.options as { toolResult?: { id: string } } | undefined)?.toolResult?.id === id)?.content;

let resumeRequests: readonly ChatMessage[] = [];
const ranOnResume: string[] = [];

beforeAll(async () => {
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  const baseURL = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  // The first attempt: every call starts, none ends; the run is saved meanwhile and stopped.
  const started: string[] = [];
  const allStarted = gate();
  const check = () => started.length + received.length === calls.length && allStarted.open();
  const block = (name: string) => (started.push(name), check(), new Promise<string>(() => {}));
  api.on("request", () => setImmediate(check));
  const first = new FunctionCallingAgent({ llm: new ScriptedLLM([{ toolCalls: calls }]), tools: toolsFor(baseURL, block) });
  const handler = first.run({ input: "Do all six" });
  await allStarted.promise;
  const saved = JSON.stringify(handler.ctx.toJSON());
  handler.cancel();
  await handler.catch(() => undefined);

  // The resume: the calls that are safe to repeat run again, the others are reported as of unknown outcome.
  attempt = "resume";
  const llm = new ScriptedLLM([{ text: "Done." }]);
  const run = async (name: string) => (ranOnResume.push(name), `${name} done`);
  // The unknown outcomes are reported once no other attempt records them, within the tool timeout (and 5 s): a short one.
  const second = new FunctionCallingAgent({ llm, tools: toolsFor(baseURL, run), toolTimeout: 5 });
  await second.run(undefined, { ctx: Context.fromJSON(second, saved) });
  resumeRequests = llm.requests[0]?.messages ?? [];
}, 60_000);

afterAll(async () => {
  held.open();
  api.closeAllConnections();
  await new Promise((resolve) => api.close(resolve));
});

const firstKeyOf = (method: string, path: string) => received.find((r) => r.attempt === "first" && r.method === method && r.path === path)?.key;
const resumed = (method: string, path: string) => received.filter((r) => r.attempt === "resume" && r.method === method && r.path === path);

describe("a tool call in doubt, when the run is resumed", () => {
  it("a POST through the REST tool is not sent again: the model reads that its outcome is unknown", () => {
    expect(resumed("POST", "/things")).toEqual([]);
    expect(toolResult(resumeRequests, "post")).toMatch(
      /^The call to call_api was started before, .* It was not made again, as that could apply it twice: it may or may not have taken effect\. Check before calling it again\.$/,
    );
  });

  it("a GET and a DELETE are sent again, the DELETE with its first Idempotency-Key", () => {
    expect(resumed("GET", "/things")).toHaveLength(1);
    const [del] = resumed("DELETE", "/things/7");
    expect(del?.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(del?.key).toBe(firstKeyOf("DELETE", "/things/7"));
    expect(toolResult(resumeRequests, "get")).toBe('{"status":200,"body":{"ok":true}}');
    expect(toolResult(resumeRequests, "delete")).toBe('{"status":200,"body":{"ok":true}}');
  });

  it("a POST to an API that honours Idempotency-Key (honoursIdempotencyKey) is sent again with its first key", () => {
    const [pay] = resumed("POST", "/payments");
    expect(pay?.key).toBeDefined();
    expect(pay?.key).toBe(firstKeyOf("POST", "/payments"));
    expect(toolResult(resumeRequests, "pay")).toBe('{"status":200,"body":{"ok":true}}');
  });

  it("a tool made with tool() is not made again unless annotated idempotent or read-only", () => {
    expect(ranOnResume).toEqual(["set_status"]);
    expect(toolResult(resumeRequests, "status")).toBe("set_status done");
    expect(toolResult(resumeRequests, "email")).toMatch(/^The call to send_email was started before, .* it may or may not have taken effect\./);
  });
});

describe("openApiTools: each operation's method says whether its call may be made again", () => {
  it("a GET, PUT or DELETE operation may; a POST or PATCH only with honoursIdempotencyKey", () => {
    const op = (operationId: string) => ({ operationId });
    const openApi = {
      openapi: "3.0.0",
      info: { title: "T", version: "1" },
      paths: { "/x": { get: op("read_x"), put: op("put_x"), delete: op("delete_x"), post: op("make_x"), patch: op("patch_x") } },
    };
    const repeats = (tools: ReturnType<typeof openApiTools>) =>
      tools.map((t) => [t.metadata.name, repeatsWhenInDoubt({ id: "c", name: t.metadata.name, input: {} }, tools)]);
    expect(repeats(openApiTools({ openApi, baseURL: "http://127.0.0.1:1" }))).toEqual([
      ["read_x", true],
      ["put_x", true],
      ["delete_x", true],
      ["make_x", false],
      ["patch_x", false],
    ]);
    expect(repeats(openApiTools({ openApi, baseURL: "http://127.0.0.1:1", honoursIdempotencyKey: true })).filter(([, yes]) => !yes)).toEqual([]);
  });
});

describe("annotateTool", () => {
  it("marks the tool it returns, the tools its bind() makes too, and refuses annotations that are not an object or a function", () => {
    const setStatus = tool(({ status }: { status: string }, bound?: { user: string }) => `${bound?.user ?? "?"} is ${status}`, {
      name: "set_status",
      description: "Set a status.",
      parameters: { type: "object", properties: { status: { type: "string" } }, required: ["status"] },
    });
    const call = { id: "c1", name: "set_status", input: { status: "away" } };
    expect(repeatsWhenInDoubt(call, [setStatus])).toBe(false);
    expect(annotateTool(setStatus, { idempotentHint: true })).toBe(setStatus);
    expect(repeatsWhenInDoubt(call, [setStatus])).toBe(true);
    expect(repeatsWhenInDoubt(call, [setStatus.bind({ user: "ada" })])).toBe(true);
    expect(() => annotateTool(setStatus, "idempotent" as never)).toThrow(ConfigurationError);
  });
});

describe("the REST tools' honoursIdempotencyKey", () => {
  it("is refused without a key to honour, and when it is not a boolean", () => {
    const make = () => restApiTool({ baseURL: "http://127.0.0.1:1", description: "An API.", honoursIdempotencyKey: true, idempotencyKeyHeader: false });
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(/honoursIdempotencyKey says the API applies a repeated idempotency key once, but idempotencyKeyHeader: false sends none/);
    const openApi = { openapi: "3.0.0", info: { title: "T", version: "1" }, paths: { "/x": { post: { operationId: "make_x" } } } };
    expect(() => openApiTools({ openApi, baseURL: "http://127.0.0.1:1", honoursIdempotencyKey: "yes" as unknown as boolean })).toThrow(
      "openApiTools: honoursIdempotencyKey must be true or false (the default), got yes.",
    );
  });
});
