import { afterEach, describe, expect, it } from "vitest";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../../events/index.ts";
import { ConfigurationError } from "../../src/index.ts";
import { McpConnectionError, McpMessageTooLargeError, mcpTools } from "../../src/mcp/index.ts";
import type { McpToolset } from "../../src/mcp/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { repeatsWhenInDoubt } from "../../workflows/tool-repeat-policy.ts";
import { startMcpHttpServer } from "../support/mcp-server.ts";
import type { McpHttpServer } from "../support/mcp-server.ts";
import { gate } from "../support/gate.ts";
import { REPO } from "../support/run-typescript.ts";

const stdioServer = { command: process.execPath, args: ["--import", "tsx", "test/support/mcp-server.ts"], cwd: REPO, stderr: "pipe" as const };

let toolset: McpToolset | undefined;
let http: McpHttpServer | undefined;
afterEach(async () => {
  await toolset?.close();
  await http?.close();
  toolset = http = undefined;
});

describe("mcpTools over stdio (the server is a child process)", () => {
  it("lists the server's tools as agent tools, with valid names, and says which only read", async () => {
    toolset = await mcpTools(stdioServer, { timeout: 30 });
    expect(toolset.server).toEqual({ name: "notes", version: "1.2.3" });
    expect(toolset.tools.map((t) => t.metadata.name)).toEqual(["add", "list_notes", "delete_note", "notes_search", "always_fails"]);
    expect([...toolset.readOnly].sort()).toEqual(["add", "list_notes", "notes_search"]);
    const add = toolset.tools[0];
    expect(add?.metadata.description).toBe("Add two numbers.");
    expect(add?.metadata.parameters).toMatchObject({ type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"] });
  });

  it("lets the agent call them: the model reads the server's answer", async () => {
    toolset = await mcpTools(stdioServer, { prefix: "notes", timeout: 30 });
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "notes_add", input: { x: 2123, y: 2321 } }] }, { text: ["4444."] }]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: toolset.tools }).run({ input: "2123 + 2321?" });
    expect(sources.map((s) => [s.toolName, s.output, s.isError])).toEqual([["notes_add", "4444", false]]);
    expect(llm.requests[1]?.messages.at(-1)?.content).toBe("4444");
  });

  it("fails with a clear error when the command does not start", async () => {
    const error = await mcpTools({ command: "/nonexistent/mcp-server", stderr: "ignore" }, { timeout: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toMatch(/^Could not connect to the MCP server `\/nonexistent\/mcp-server`: .*ENOENT/);
  });
});

describe("mcpTools over streamable HTTP", () => {
  it("sends the headers, returns structured content, and reports an error result as a failed call", async () => {
    http = await startMcpHttpServer();
    toolset = await mcpTools({ url: http.url, headers: { authorization: "Bearer mcp-secret" } });
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { name: "notes_search", input: { word: "milk" } },
          { name: "always_fails", input: {} },
        ],
      },
      { text: ["Done."] },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: toolset.tools }).run({ input: "Find milk." });
    expect(sources.map((s) => [s.toolName, s.output])).toEqual([
      ["notes_search", { ids: ["n1", "n3"] }],
      ["always_fails", "Encountered error in tool call: The disk is full."],
    ]);
    expect(sources.map((s) => s.isError)).toEqual([false, true]);
    expect(http.authorizations.length).toBeGreaterThan(0);
    expect(http.authorizations.every((a) => a === "Bearer mcp-secret")).toBe(true);
  });

  it("checks arguments against the tool's input schema before the server is called", async () => {
    http = await startMcpHttpServer();
    toolset = await mcpTools({ url: http.url });
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { name: "delete_note", input: { id: 7 } },
          { name: "add", input: { x: "two", y: 2 } },
        ],
      },
      { text: ["Sorry."] },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: toolset.tools }).run({ input: "Delete note 7." });
    expect(sources.map((s) => s.content)).toEqual([
      expect.stringMatching(/^Invalid arguments for tool delete_note: id: .*string.*The tool was not run/),
      expect.stringMatching(/^Invalid arguments for tool add: x: .*number.*The tool was not run/),
    ]);
    expect(http.calls).toEqual([]);
    expect(http.notes.size).toBe(3);
  });

  it("checks the required arguments and their types of a tool whose input schema zod cannot read, before the server is called", async () => {
    const received: unknown[] = [];
    // A Pydantic server's schema: a Python regex (`(?P<…>)`, which JavaScript refuses) and a $ref to a definition it left out.
    const inputSchema = {
      type: "object",
      properties: {
        date: { type: "string", pattern: "^(?P<year>\\d{4})-(?P<month>\\d{2})-(?P<day>\\d{2})$" },
        room: { $ref: "#/$defs/Room" },
        guests: { type: "integer" },
      },
      required: ["date", "room"],
      additionalProperties: false,
    };
    http = await startMcpHttpServer({
      moreTools: (server) => {
        server.registerTool(
          "book_room",
          { description: "Book a room.", inputSchema: { date: z.unknown(), room: z.unknown(), guests: z.unknown() } },
          (args) => {
            received.push(args);
            return { content: [{ type: "text", text: "booked" }] };
          },
        );
        server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: "book_room", description: "Book a room.", inputSchema }] }));
      },
    });
    toolset = await mcpTools({ url: http.url });
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { name: "book_room", input: { day: "2026-12-01", guests: "two" } },
          { name: "book_room", input: { date: "2026-12-01", room: "blue", guests: 2 } },
        ],
      },
      { text: ["Booked."] },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: toolset.tools }).run({ input: "Book the blue room on 1 December for two." });
    expect(sources.map((s) => s.content)).toEqual([
      "Invalid arguments for tool book_room: date: missing: it is required (a string); room: missing: it is required; day: not an argument of this tool; it takes date, room, guests; guests: expected integer, got string. The tool was not run; call it again with arguments that match its schema.",
      "booked",
    ]);
    expect(received).toEqual([{ date: "2026-12-01", room: "blue", guests: 2 }]);
  });

  it("names a tool's arguments as every provider takes them (filter[status]), and calls the server with its own names", async () => {
    const received: unknown[] = [];
    http = await startMcpHttpServer({
      moreTools: (server) =>
        server.registerTool(
          "list_builds",
          { description: "List builds.", inputSchema: { "filter[status]": z.enum(["ok", "failed"]), $top: z.number().optional() } },
          (args) => (received.push(args), { content: [{ type: "text", text: "build 7" }] }),
        ),
    });
    toolset = await mcpTools({ url: http.url }, { include: ["list_builds"] });
    const parameters = toolset.tools[0]?.metadata.parameters as { properties: Record<string, unknown>; required: string[] };
    // Anthropic's rule for the keys of input_schema.properties: it refuses the whole request otherwise.
    expect(Object.keys(parameters.properties)).toEqual(["filter.status", "top"]);
    expect(parameters.required).toEqual(["filter.status"]);
    const llm = new ScriptedLLM([
      { toolCalls: [{ name: "list_builds", input: { top: 5 } }] },
      { toolCalls: [{ name: "list_builds", input: { "filter.status": "failed", top: 5 } }] },
      { text: ["Build 7 failed."] },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: toolset.tools }).run({ input: "Failed builds?" });
    expect(sources.map((s) => s.content)).toEqual([expect.stringMatching(/^Invalid arguments for tool list_builds: filter\.status: /), "build 7"]);
    expect(received).toEqual([{ "filter[status]": "failed", $top: 5 }]);
  });

  it("names a tool whose name starts with a digit so that Gemini takes it, and calls the server's tool", async () => {
    http = await startMcpHttpServer({
      moreTools: (server) => server.registerTool("3d_render", { description: "Render a model." }, () => ({ content: [{ type: "text", text: "rendered" }] })),
    });
    toolset = await mcpTools({ url: http.url }, { include: ["3d_render"] });
    expect(toolset.tools.map((t) => t.metadata.name)).toEqual(["_3d_render"]);
    expect(await toolset.tools[0]?.call?.({})).toBe("rendered");
  });

  it("works with the agent's approval: a human approves the tools that do not only read", async () => {
    http = await startMcpHttpServer();
    const tools = (toolset = await mcpTools({ url: http.url }));
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { name: "list_notes", input: {} },
          { name: "delete_note", input: { id: "n2" } },
        ],
      },
      { text: ["Deleted."] },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools: tools.tools, needsApproval: (call) => !tools.readOnly.has(call.name), timeout: null });
    const handler = agent.run({ input: "Delete the Lawson note." });
    const asked: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        asked.push(ev.toolCall.name);
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
      }
    }
    await handler;
    expect(asked).toEqual(["delete_note"]);
    expect(http.calls.sort()).toEqual(["delete_note n2", "list_notes"]);
    expect([...http.notes.keys()]).toEqual(["n1", "n3"]);
  });

  it("cancels a call on the server when the run is cancelled while the call runs", async () => {
    const started = gate();
    const cancelled = gate<string>();
    http = await startMcpHttpServer({
      moreTools: (server) =>
        server.registerTool("export_all", { description: "Exports everything; takes long." }, (extra) => {
          started.open();
          return new Promise((resolve) =>
            extra.signal.addEventListener("abort", () => {
              cancelled.open("the server saw the cancellation");
              resolve({ content: [{ type: "text", text: "cancelled" }] });
            }),
          );
        }),
    });
    toolset = await mcpTools({ url: http.url }, { include: ["export_all"] });
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "export_all", input: {} }] }, { text: ["Never read."] }]);
    const handler = new FunctionCallingAgent({ llm, tools: toolset.tools, timeout: null }).run({ input: "Export." });
    await started.promise;
    handler.cancel();
    await handler.catch(() => undefined);
    expect(await cancelled.promise).toBe("the server saw the cancellation");
  });

  it("carries the server's readOnlyHint and idempotentHint over: only those calls are made again when cut short", async () => {
    const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
    http = await startMcpHttpServer({
      moreTools: (server) => {
        server.registerTool("set_status", { description: "Set my status.", annotations: { idempotentHint: true } }, () => text("set"));
        server.registerTool("append_log", { description: "Append a line.", annotations: { idempotentHint: false } }, () => text("appended"));
      },
    });
    toolset = await mcpTools({ url: http.url }, { include: ["list_notes", "set_status", "append_log", "always_fails"] });
    const inDoubt = (name: string) => repeatsWhenInDoubt({ id: "c1", name, input: {} }, toolset?.tools ?? []);
    expect(["list_notes", "set_status", "append_log", "always_fails"].map((name) => [name, inDoubt(name)])).toEqual([
      ["list_notes", true], // readOnlyHint
      ["set_status", true], // idempotentHint
      ["append_log", false],
      ["always_fails", false], // no annotations
    ]);
  });

  it("refuses a tool the server does not have, and a URL nothing answers", async () => {
    http = await startMcpHttpServer();
    await expect(mcpTools({ url: http.url }, { include: ["add", "launch"] })).rejects.toThrow(/has no tool "launch"; it has: add\.$/);
    const url = http.url;
    await http.close();
    http = undefined;
    await expect(mcpTools({ url }, { timeout: 10 })).rejects.toThrow(McpConnectionError);
    await expect(mcpTools({ url: "ftp://example.com/mcp" })).rejects.toThrow(/url must be an http\(s\) URL/);
  });
});

describe("mcpTools: the size of what the model reads", () => {
  it("cuts a tool's text, structured content and error text at maxOutputChars and tells the model, instead of passing megabytes on", async () => {
    http = await startMcpHttpServer({
      moreTools: (server) => {
        const big = "log line\n".repeat(600_000); // 5.4 MB
        server.registerTool("read_log", { description: "The whole log." }, () => ({ content: [{ type: "text", text: big }] }));
        server.registerTool("log_lines", { description: "The log as lines.", outputSchema: { lines: z.array(z.string()) } }, () => ({
          content: [{ type: "text", text: "see structured content" }],
          structuredContent: { lines: big.split("\n", 50_000) },
        }));
        server.registerTool("fail_loudly", { description: "Fails." }, () => ({ content: [{ type: "text", text: big }], isError: true }));
      },
    });
    toolset = await mcpTools({ url: http.url }, { include: ["read_log", "log_lines", "fail_loudly"], maxOutputChars: 1_000 });
    const llm = new ScriptedLLM([{ toolCalls: ["read_log", "log_lines", "fail_loudly"].map((name) => ({ name, input: {} })) }, { text: ["The log is long."] }]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: toolset.tools }).run({ input: "Read the log." });
    const cutAfter = (n: number) => `… (cut after ${n} characters; ask for less, e.g. a page or one item)`;
    const note = cutAfter(1000);
    expect(sources.map((source) => source.content.length)).toEqual([
      1000 + note.length,
      1000 + note.length,
      "Encountered error in tool call: ".length + 1000 + note.length,
    ]);
    expect(sources.every((source) => source.content.endsWith(note))).toBe(true);
    expect(sources[1]?.content.startsWith('{"lines":["log line","log line"')).toBe(true);
    expect(llm.requests[1]?.messages.slice(-3).map((m) => String(m.content).length)).toEqual(sources.map((source) => source.content.length));

    const defaults = await mcpTools({ url: http.url }, { include: ["read_log", "add"] });
    try {
      const named = (name: string) => defaults.tools.find((t) => t.metadata.name === name);
      expect(String(await named("read_log")?.call?.({})).length).toBe(20_000 + cutAfter(20000).length);
      expect(await named("add")?.call?.({ x: 1, y: 2 })).toBe("3"); // small answers as they are
    } finally {
      await defaults.close();
    }
  });
});

describe("mcpTools: one message larger than maxMessageBytes", () => {
  const tooLarge = (where: RegExp, lost: boolean) =>
    new RegExp(
      `^The MCP server ${where.source} sent a message over 1 MiB \\(maxMessageBytes\\) while huge_answer ran, and it was not read` +
        `${lost ? "; the connection was lost, so this call's outcome is unknown" : ""}\\. Ask for less \\(a page, a filter, one item\\)\\.$`,
    );

  it("over HTTP: fails that call with a message the model can act on, and the next call works", async () => {
    http = await startMcpHttpServer({
      moreTools: (server) =>
        server.registerTool("huge_answer", { description: "Two megabytes." }, () => ({ content: [{ type: "text", text: "x".repeat(2_000_000) }] })),
    });
    toolset = await mcpTools({ url: http.url }, { include: ["huge_answer", "add"], maxMessageBytes: 1024 * 1024 });
    const llm = new ScriptedLLM([
      { toolCalls: [{ name: "huge_answer", input: {} }] },
      { toolCalls: [{ name: "add", input: { x: 2, y: 3 } }] },
      { text: ["5."] },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: toolset.tools }).run({ input: "Read it all, then add." });
    expect(sources[0]?.isError).toBe(true);
    expect(sources[0]?.content.replace(/^Encountered error in tool call: /, "")).toMatch(tooLarge(/at http:\/\/127\.0\.0\.1:\d+\/mcp/, false));
    expect(sources[1]?.content).toBe("5");
  });

  it("over stdio: the SDK drops the connection; the call says its outcome is unknown and the next call starts the server again", async () => {
    toolset = await mcpTools(
      { ...stdioServer, args: [...stdioServer.args, "--huge-answer"] },
      { include: ["huge_answer", "add"], maxMessageBytes: 1024 * 1024 },
    );
    const huge = toolset.tools.find((t) => t.metadata.name === "huge_answer");
    const error = await Promise.resolve(huge?.call?.({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpMessageTooLargeError);
    expect((error as Error).message).toMatch(tooLarge(/`.+ test\/support\/mcp-server\.ts --huge-answer`/, true));
    expect(await toolset.tools.find((t) => t.metadata.name === "add")?.call?.({ x: 2, y: 3 })).toBe("5");
  });
});

describe("mcpTools: a server that stops mid-call", () => {
  it("over stdio: the model reads that the server went away and the outcome is unknown, and the next call starts it again", async () => {
    toolset = await mcpTools({ ...stdioServer, args: [...stdioServer.args, "--crash"] }, { include: ["crash", "add"] });
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "crash", input: {} }] }, { toolCalls: [{ name: "add", input: { x: 2, y: 3 } }] }, { text: ["5."] }]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: toolset.tools }).run({ input: "Crash, then add." });
    expect(sources.map((s) => [s.isError, s.content])).toEqual([
      [
        true,
        expect.stringMatching(
          /^Encountered error in tool call: The MCP server `.+ test\/support\/mcp-server\.ts --crash` closed the connection while crash ran \(it may have stopped or crashed\), so this call's outcome is unknown: check before calling it again\. The next call starts the server again/,
        ),
      ],
      [false, "5"],
    ]);
  });
});

describe("mcpTools options", () => {
  it("refuses bad options with a ConfigurationError naming the option, before starting anything", async () => {
    const bad = async (run: () => Promise<unknown>) => run().catch((e: unknown) => e as ConfigurationError);
    const timeout = await bad(() => mcpTools({ command: "node" }, { timeout: 0 }));
    expect(timeout).toBeInstanceOf(ConfigurationError);
    expect(timeout).toMatchObject({ option: "timeout", received: 0 });
    expect(await bad(() => mcpTools({ command: " " }))).toMatchObject({ option: "command" });
    expect(await bad(() => mcpTools({ command: "node" }, { maxOutputChars: 0.5 }))).toMatchObject({
      option: "maxOutputChars",
      message: "mcpTools: maxOutputChars must be a whole number ≥ 1 (the default is 20,000), got 0.5.",
    });
    expect(await bad(() => mcpTools({ url: "not a url" }))).toMatchObject({ option: "url", message: expect.stringContaining("absolute http(s) URL") });
    expect(await bad(() => mcpTools({ command: "node" }, { maxMessageBytes: 100 }))).toMatchObject({
      option: "maxMessageBytes",
      message: "mcpTools: maxMessageBytes must be a whole number ≥ 1024 (the default is 10 MiB, 10485760), got 100.",
    });
  });
});
