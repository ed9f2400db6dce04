/**
 * The chat's MCP servers: each `--mcp <server>` is a URL (streamable HTTP) or a command line
 * that starts a server speaking MCP on stdin and stdout. Their tools join the agent's; a tool
 * the server does not mark read-only asks the user before it runs.
 */
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
import type { McpToolset } from "../mcp/index.ts";
import { UsageError } from "./errors.ts";

/** The tools of the chat's MCP servers, and what goes with them. @example `const mcp = await mcpSetup(["npx -y @modelcontextprotocol/server-everything"]);` */
export interface McpSetup {
  readonly tools: BaseTool[];
  /** The agent's `needsApproval` for these tools: every call of a tool not marked read-only. */
  readonly needsApproval: (call: ToolCall) => boolean;
  /** One line per server for the user at start. */
  readonly banner: string;
  /** Stops the servers this started and closes the connections. */
  close(): Promise<void>;
}

/**
 * Splits a command line into words: spaces separate them, quotes ('…' or "…") keep spaces
 * inside one, and a backslash keeps the next character as it is.
 * @example commandWords(`node server.js --root "My Files"`); // ["node", "server.js", "--root", "My Files"]
 */
export function commandWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i] as string;
    if (quote) {
      if (char === quote) quote = undefined;
      else word += char === "\\" && quote === '"' && i + 1 < line.length ? (line[++i] as string) : char;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= "";
    } else if (char === "\\" && i + 1 < line.length) word = (word ?? "") + (line[++i] as string);
    else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? "") + char;
  }
  if (quote) throw new UsageError(`--mcp ${JSON.stringify(line)}: a quote is not closed.`);
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * Connects to each server of `servers` (what `--mcp` was given, in order); `undefined` for none.
 * A server whose tool names clash with `taken` (the chat's other tools) or with an earlier
 * server's is connected again with its name before each tool's (`notes_add`). A server that
 * cannot be reached fails the whole setup, after closing those already open.
 * @example const mcp = await mcpSetup(["http://127.0.0.1:3000/mcp"], new Set(["add", "multiply"]));
 */
export async function mcpSetup(servers: readonly string[], taken: ReadonlySet<string>, command = "npm start --"): Promise<McpSetup | undefined> {
  if (servers.length === 0) return undefined;
  let mcpTools: typeof import("../mcp/index.ts").mcpTools;
  try {
    ({ mcpTools } = await import("../mcp/index.ts"));
  } catch (error) {
    throw new UsageError(`--mcp needs the MCP SDK: npm install @modelcontextprotocol/sdk (${(error as Error).message}).`);
  }
  const open: McpToolset[] = [];
  const lines: string[] = [];
  const names = new Set(taken);
  const close = async () => void (await Promise.allSettled(open.map((toolset) => toolset.close())));
  try {
    for (const server of servers) {
      const connect = (prefix?: string) => mcpTools(serverOf(server, command), prefix === undefined ? {} : { prefix });
      let toolset = await connect();
      let renamed = "";
      if (toolset.tools.some((tool) => names.has(tool.metadata.name))) {
        await toolset.close();
        const prefix = (toolset.server?.name ?? "mcp").replace(/[^A-Za-z0-9]+/g, "_").replace(/^_|_$/g, "") || "mcp";
        toolset = await connect(prefix);
        renamed = `, named ${prefix}_… as their names clash with other tools`;
        const clash = toolset.tools.find((tool) => names.has(tool.metadata.name));
        if (clash) {
          await toolset.close();
          throw new UsageError(
            `Two MCP servers both have a tool named "${clash.metadata.name}": the model could not tell them apart. Use one of them per chat.`,
          );
        }
      }
      open.push(toolset);
      for (const tool of toolset.tools) names.add(tool.metadata.name);
      const asking = toolset.tools.filter((tool) => !toolset.readOnly.has(tool.metadata.name)).length;
      const name = toolset.server ? `${toolset.server.name} ${toolset.server.version}` : server;
      lines.push(`MCP server ${name}: ${toolset.tools.length} tools${renamed}${asking > 0 ? `; ${asking} not marked read-only ask you first` : ""}.`);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const tools = open.flatMap((toolset) => toolset.tools);
  const mcpNames = new Set(tools.map((tool) => tool.metadata.name));
  const readOnly = new Set(open.flatMap((toolset) => [...toolset.readOnly]));
  return { tools, needsApproval: (call) => mcpNames.has(call.name) && !readOnly.has(call.name), banner: lines.join("\n"), close };
}

/** What `--mcp` names: a URL, or the command line of a stdio server. */
function serverOf(server: string, command: string): { url: string } | { command: string; args: string[] } {
  if (/^https?:\/\//i.test(server)) return { url: server };
  const [program, ...args] = commandWords(server);
  if (program === undefined) throw new UsageError(`--mcp needs a URL or a command that starts the server: ${command} --mcp "npx -y my-mcp-server".`);
  return { command: program, args };
}
