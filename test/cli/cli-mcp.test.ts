/**
 * The chat with MCP servers (`--mcp`) and per-call tool selection (`--max-tools`): the CLI runs
 * as a child process against the OpenAI-compatible test server; the notes MCP server of
 * test/support runs as the CLI's own child, over stdio, or in this process over HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { commandWords } from "../../src/cli/mcp-setup.ts";
import { startMcpHttpServer } from "../support/mcp-server.ts";
import type { McpHttpServer } from "../support/mcp-server.ts";
import { startOpenAIServer } from "../support/openai-sse-server.ts";
import type { OpenAIServer } from "../support/openai-sse-server.ts";
import { runCli as cli } from "../support/cli-process.ts";

const NOTES_STDIO = `${JSON.stringify(process.execPath)} --import tsx test/support/mcp-server.ts`;

let llm: OpenAIServer | undefined;
let notes: McpHttpServer | undefined;
afterEach(async () => {
  await llm?.close();
  await notes?.close();
  llm = notes = undefined;
});

const toolNames = (request: { body: { tools?: { function: { name: string } }[] } } | undefined) => request?.body.tools?.map((t) => t.function.name) ?? [];

describe("stepflow --mcp", { timeout: 180_000 }, () => {
  it("starts a stdio server, asks before a tool not marked read-only, and runs a read-only one without asking", async () => {
    llm = await startOpenAIServer({
      turns: [
        { toolCalls: [{ id: "c1", name: "notes_list_notes", arguments: {} }] },
        { toolCalls: [{ id: "c2", name: "notes_delete_note", arguments: { id: "n1" } }] },
        { text: "Deleted the milk note." },
      ],
    });
    const { code, stdout, stderr } = await cli(["--mcp", NOTES_STDIO, "Delete the note about milk"], { stdin: "y\n", env: { OPENAI_BASE_URL: llm.baseURL } });
    expect(code, stderr).toBe(0);
    // The server's `add` clashes with the calculator's: its tools get the server's name before theirs.
    expect(stderr).toContain("MCP server notes 1.2.3: 5 tools, named notes_… as their names clash with other tools; 2 not marked read-only ask you first.");
    expect(stderr).toContain('Approve notes_delete_note({"id":"n1"})? [y/N] y');
    expect(stderr).not.toContain("Approve notes_list_notes");
    expect(stdout.trim()).toBe("Deleted the milk note.");
    expect(toolNames(llm.requests[0])).toEqual(expect.arrayContaining(["add", "multiply", "notes_add", "notes_list_notes", "notes_delete_note"]));
    expect(llm.requests[1]?.body.messages.at(-1)?.content).toContain("n1: Buy milk");
    expect(llm.requests[2]?.body.messages.at(-1)?.content).toContain("Deleted n1.");
  });

  it("runs nothing the user refuses: the model is told, the server never called", async () => {
    notes = await startMcpHttpServer();
    llm = await startOpenAIServer({
      turns: [{ toolCalls: [{ id: "c1", name: "notes_delete_note", arguments: { id: "n2" } }] }, { text: "I did not delete it." }],
    });
    const { code, stderr } = await cli(["--mcp", notes.url, "Delete note n2"], { stdin: "n\n", env: { OPENAI_BASE_URL: llm.baseURL } });
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('Approve notes_delete_note({"id":"n2"})? [y/N] n');
    expect(notes.calls).toEqual([]);
    expect(notes.notes.get("n2")).toBe("Call Lawson");
  });

  it("says which server could not be reached, and exits 1", async () => {
    const { code, stderr } = await cli(["--mcp", "/nonexistent/mcp-server", "hi"], { env: { OPENAI_BASE_URL: "http://127.0.0.1:9" } });
    expect(code).toBe(1);
    expect(stderr).toMatch(/Could not connect to the MCP server `\/nonexistent\/mcp-server`: .*ENOENT/);
  });
});

describe("stepflow --max-tools", { timeout: 180_000 }, () => {
  it("sends the model only the N tools that best match the question", async () => {
    notes = await startMcpHttpServer();
    llm = await startOpenAIServer({ turns: [{ text: "Your notes: Buy milk, Call Lawson, Milk the cow." }] });
    const { code, stderr } = await cli(["--mcp", notes.url, "--max-tools", "2", "List my notes"], { env: { OPENAI_BASE_URL: llm.baseURL } });
    expect(code, stderr).toBe(0);
    expect(toolNames(llm.requests[0])).toHaveLength(2);
    expect(toolNames(llm.requests[0])).toContain("notes_list_notes");
  });

  it("takes a whole number only", async () => {
    const { code, stderr } = await cli(["--max-tools", "0", "hi"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--max-tools takes a whole number ≥ 1 (the default is every tool); got");
  });
});

describe("commandWords", () => {
  it("splits at spaces, keeps quoted spaces and escaped characters", () => {
    expect(commandWords(`node server.js --root "My Files" 'a b' c\\ d ""`)).toEqual(["node", "server.js", "--root", "My Files", "a b", "c d", ""]);
    expect(() => commandWords(`node "open`)).toThrow('--mcp "node \\"open": a quote is not closed.');
  });
});
