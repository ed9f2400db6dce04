/**
 * A small MCP server for the tests, built with the official SDK: a notes service whose tools
 * read and change a list of notes. Run as a program it speaks MCP over stdio (what
 * `mcpTools({ command })` starts); `startMcpHttpServer()` serves the same tools over
 * streamable HTTP on 127.0.0.1.
 *
 * Tools: `add` (x + y, read-only), `list_notes` (read-only), `delete_note` (destructive),
 * `notes.search` (a name with a dot; structured content), `always_fails` (an error result).
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** The notes, and the tool calls the servers sharing them received. */
interface NotesState {
  readonly notes: Map<string, string>;
  readonly calls: string[];
}

const newNotes = (): NotesState => ({
  notes: new Map([
    ["n1", "Buy milk"],
    ["n2", "Call Lawson"],
    ["n3", "Milk the cow"],
  ]),
  calls: [],
});

/** The notes server and what its tools did (for the in-process HTTP server); servers given one `state` share the notes. */
export function notesServer(state: NotesState = newNotes()): { server: McpServer; notes: Map<string, string>; calls: string[] } {
  const { notes, calls } = state;
  const server = new McpServer({ name: "notes", version: "1.2.3" });
  const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
  server.registerTool(
    "add",
    { description: "Add two numbers.", inputSchema: { x: z.number(), y: z.number() }, annotations: { readOnlyHint: true } },
    ({ x, y }) => (calls.push(`add ${x} ${y}`), text(String(x + y))),
  );
  server.registerTool("list_notes", { description: "List the notes.", annotations: { readOnlyHint: true } }, () => {
    calls.push("list_notes");
    return text([...notes].map(([id, note]) => `${id}: ${note}`).join("\n"));
  });
  server.registerTool(
    "delete_note",
    { description: "Delete one note.", inputSchema: { id: z.string().regex(/^n\d+$/) }, annotations: { destructiveHint: true } },
    ({ id }) => {
      calls.push(`delete_note ${id}`);
      if (!notes.delete(id)) return { ...text(`No note ${id}.`), isError: true };
      return text(`Deleted ${id}.`);
    },
  );
  server.registerTool(
    "notes.search",
    {
      description: "Find notes holding a word.",
      inputSchema: { word: z.string() },
      outputSchema: { ids: z.array(z.string()) },
      annotations: { readOnlyHint: true },
    },
    ({ word }) => {
      calls.push(`notes.search ${word}`);
      const ids = [...notes].filter(([, note]) => note.toLowerCase().includes(word.toLowerCase())).map(([id]) => id);
      return { ...text(ids.join(", ")), structuredContent: { ids } };
    },
  );
  server.registerTool("always_fails", { description: "Fails." }, () => ({ ...text("The disk is full."), isError: true }));
  return { server, notes, calls };
}

export interface McpHttpServer {
  /** e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  readonly notes: Map<string, string>;
  readonly calls: string[];
  /** The authorization header of every request. */
  readonly authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/**
 * `moreTools` registers tools of a test's own beside the notes tools.
 * @example
 * const mcp = await startMcpHttpServer();
 * const toolset = await mcpTools({ url: mcp.url });
 */
export async function startMcpHttpServer(options: { readonly moreTools?: (server: McpServer) => void } = {}): Promise<McpHttpServer> {
  const state = newNotes();
  const { notes, calls } = state;
  // One MCP server and transport per client session, as a real server runs them; the notes are shared.
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const authorizations: (string | undefined)[] = [];
  const http = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    if (!req.url?.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    const id = req.headers["mcp-session-id"];
    const known = typeof id === "string" ? sessions.get(id) : undefined;
    if (known) return void known.handleRequest(req, res);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    const { server } = notesServer(state);
    options.moreTools?.(server);
    servers.push(server);
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    notes,
    calls,
    authorizations,
    close: async () => {
      await Promise.all(servers.map((server) => server.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

// As a program: the notes server over stdio; with `--huge-answer`, also a tool answering 2 MB;
// with `--crash`, a tool whose call ends the server's process before it answers.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { server } = notesServer();
  if (process.argv.includes("--huge-answer"))
    server.registerTool("huge_answer", { description: "Two megabytes." }, () => ({ content: [{ type: "text", text: "x".repeat(2_000_000) }] }));
  if (process.argv.includes("--crash")) server.registerTool("crash", { description: "Ends the server." }, () => process.exit(3));
  await server.connect(new StdioServerTransport());
}
