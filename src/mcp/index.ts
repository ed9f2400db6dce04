/**
 * `stepflow/mcp`: the tools of a Model Context Protocol server as agent tools. The server runs
 * as a child process (stdio) or answers over HTTP (streamable HTTP); each tool it lists becomes a
 * LlamaIndex `BaseTool` whose input schema the agent checks, like any tool's, before the call
 * goes to the server.
 */
import type { JSONValue } from "@llamaindex/core/global";
import type { BaseTool, ToolMetadata } from "@llamaindex/core/llms";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ConfigurationError, StepflowError, maskCredentials } from "../core/internal.ts";
import type { ToolCallDetails } from "../tools/current-tool-call.ts";
import { providerArgumentNames } from "../tools/argument-names.ts";
import { cutForModel } from "../tools/cut-text.ts";
import { annotateTool } from "../tools/tool-annotations.ts";
import type { ToolAnnotations } from "../tools/tool-annotations.ts";
import { DEFAULT_MAX_MESSAGE_BYTES, McpMessageTooLargeError, bytesText, messageCappedFetch } from "./message-cap.ts";

export { McpMessageTooLargeError } from "./message-cap.ts";

/** An MCP server started as a child process, spoken to over its stdin and stdout. @example `{ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] }` */
export interface McpStdioServer {
  readonly command: string;
  readonly args?: readonly string[];
  /**
   * The child's environment. Default: only the variables the MCP SDK deems safe (PATH, HOME, …),
   * so that the application's secrets (OPENAI_API_KEY, …) do not reach the server unless given here.
   */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** The child's stderr: `"inherit"` (default: its logs show in this process's stderr), `"ignore"` or `"pipe"`. */
  readonly stderr?: "inherit" | "ignore" | "pipe";
}

/** An MCP server reached over streamable HTTP. @example `{ url: "http://127.0.0.1:3000/mcp", headers: { authorization: "Bearer …" } }` */
export interface McpHttpServer {
  readonly url: string | URL;
  /** Sent with every request (an `authorization` header, say). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Options of {@link mcpTools}. @example `{ prefix: "files", timeout: 30 }` */
export interface McpToolsOptions {
  /** Put before each tool's name (`files_read_file`), so that tools of several servers do not clash. */
  readonly prefix?: string;
  /** Only these of the server's tools (names as the server gives them). Default: all. */
  readonly include?: readonly string[];
  /** Seconds a call (and connecting) may take before it fails. Default 60. */
  readonly timeout?: number;
  /** The name this client gives the server. Default `stepflow`. */
  readonly clientName?: string;
  /**
   * Characters of a call's result the model reads (its text, or its structured content as
   * JSON); the rest is cut off, and the model is told so and asked for less. Default 20,000.
   */
  readonly maxOutputChars?: number;
  /**
   * Bytes of one message the server may send (over stdio or HTTP). A larger answer is not read:
   * its call fails with a message telling the model to ask for less, and the next call
   * reconnects if the connection was lost (a stdio server is started again). Default 10 MiB.
   */
  readonly maxMessageBytes?: number;
}

/** The tools of a connected MCP server. Close it when done: a stdio server's process ends then. @example `await using files = await mcpTools({ command: "mcp-files" });` */
export interface McpToolset {
  /** The server's tools, ready for `new FunctionCallingAgent({ tools })`. */
  readonly tools: BaseTool[];
  /**
   * Per tool name (as in `tools`): whether the server says the tool only reads (`readOnlyHint`),
   * for `needsApproval`. Each tool also carries the server's `readOnlyHint` and `idempotentHint`
   * for the agent: a call cut short (its process killed mid-call) is made again only if one of
   * them is true. They are the server's word: for a server you do not trust, clear them with
   * `annotateTool(tool, {})`.
   */
  readonly readOnly: ReadonlySet<string>;
  /** The server's name and version, as it introduced itself. */
  readonly server: { readonly name: string; readonly version: string } | undefined;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The MCP server could not be started or reached, or did not list its tools (bad options throw `ConfigurationError`). @example `if (err instanceof McpConnectionError) console.error(err.message)` */
export class McpConnectionError extends StepflowError {
  override name = "McpConnectionError";
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Connects to an MCP server and makes its tools agent tools. A call's result is the tool's
 * structured content when it has some, else its text (images and other content are described
 * in a line); a result the server marks as an error reaches the model as a failed call.
 * @example
 * import { mcpTools } from "stepflow/mcp";
 * const files = await mcpTools({ command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }, { prefix: "files" });
 * const agent = new FunctionCallingAgent({ llm, tools: [...files.tools], needsApproval: (call) => !files.readOnly.has(call.name) });
 * await agent.run({ input: "What files are in /tmp?" });
 * await files.close();
 */
export async function mcpTools(server: McpStdioServer | McpHttpServer, options: McpToolsOptions = {}): Promise<McpToolset> {
  const timeout = options.timeout ?? 60;
  if (!(typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0))
    throw new ConfigurationError(`mcpTools: timeout must be a number of seconds > 0 (the default is 60), got ${String(timeout)}.`, "timeout", timeout);
  const maxOutputChars = options.maxOutputChars ?? 20_000;
  if (!Number.isInteger(maxOutputChars) || maxOutputChars < 1)
    throw new ConfigurationError(
      `mcpTools: maxOutputChars must be a whole number ≥ 1 (the default is 20,000), got ${String(maxOutputChars)}.`,
      "maxOutputChars",
      maxOutputChars,
    );
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isInteger(maxMessageBytes) || maxMessageBytes < 1024)
    throw new ConfigurationError(
      `mcpTools: maxMessageBytes must be a whole number ≥ 1024 (the default is 10 MiB, ${DEFAULT_MAX_MESSAGE_BYTES}), got ${String(maxMessageBytes)}.`,
      "maxMessageBytes",
      maxMessageBytes,
    );
  const where = describeServer(server);
  const requestOptions = { timeout: timeout * 1000 };
  transportFor(server, maxMessageBytes, () => undefined); // bad options fail here, before anything starts
  const connection = new McpConnection(server, where, options.clientName ?? "stepflow", maxMessageBytes, requestOptions);
  const client = await connection.client();
  const tools: BaseTool[] = [];
  const readOnly = new Set<string>();
  try {
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, requestOptions);
      for (const listed of page.tools) {
        if (options.include && !options.include.includes(listed.name)) continue;
        const name = toolName(listed.name, options.prefix, where);
        if (tools.some((t) => t.metadata.name === name))
          throw new McpConnectionError(
            `The MCP server ${where} lists two tools named ${JSON.stringify(name)} once made valid tool names; give a prefix or use include.`,
          );
        if (listed.annotations?.readOnlyHint === true) readOnly.add(name);
        tools.push(annotateTool(mcpTool(connection, listed, name, maxOutputChars), repeatHints(listed.annotations)));
      }
      cursor = page.nextCursor;
    } while (cursor);
  } catch (error) {
    await client.close().catch(() => undefined);
    if (error instanceof McpConnectionError) throw error;
    throw new McpConnectionError(`The MCP server ${where} did not list its tools: ${messageOf(error)}.`, { cause: error });
  }
  const missing = (options.include ?? []).filter((wanted) => !tools.some((t) => t.metadata.name === toolName(wanted, options.prefix, where)));
  if (missing.length > 0) {
    await client.close().catch(() => undefined);
    throw new McpConnectionError(
      `The MCP server ${where} has no tool ${missing.map((m) => JSON.stringify(m)).join(", ")}; it has: ${tools.map((t) => t.metadata.name).join(", ") || "none"}.`,
    );
  }
  const version = client.getServerVersion();
  const close = () => connection.close();
  return { tools, readOnly, server: version ? { name: version.name, version: version.version } : undefined, close, [Symbol.asyncDispose]: close };
}

interface ListedTool {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema: { readonly type: "object"; readonly [key: string]: unknown };
}

/**
 * The server's word on a tool's effects, as the agent reads it: whether a call cut short may be
 * made again. MCP defines `idempotentHint` for tools that are not read-only; a server that says
 * nothing says neither.
 */
function repeatHints(annotations: { readonly readOnlyHint?: boolean | undefined; readonly idempotentHint?: boolean | undefined } | undefined): ToolAnnotations {
  return { readOnlyHint: annotations?.readOnlyHint === true, idempotentHint: annotations?.idempotentHint === true };
}

function mcpTool(connection: McpConnection, listed: ListedTool, name: string, maxOutputChars: number): BaseTool {
  const { parameters, serverNames } = providerSchema(listed.inputSchema);
  const metadata: ToolMetadata = {
    name,
    description: listed.description?.trim() || `The ${listed.name} tool of an MCP server.`,
    parameters: parameters as ToolMetadata["parameters"],
  };
  return {
    metadata,
    // The agent hands each call its own details: the request is cancelled when the call is no longer waited for.
    call: async (input: unknown, call?: ToolCallDetails): Promise<JSONValue> => {
      const args = serverNames.size > 0 ? serverArguments(input as Record<string, unknown>, serverNames) : (input as Record<string, unknown>);
      const result = await connection.callTool(listed.name, args, call?.signal);
      const text = cutForModel(contentText(result.content), maxOutputChars).text;
      if (result.isError === true) throw new Error(text || `${listed.name} failed (the MCP server gave no reason).`);
      if (result.structuredContent !== undefined && result.structuredContent !== null) return bounded(result.structuredContent as JSONValue, maxOutputChars);
      if ("toolResult" in result && result.content === undefined) return bounded(result.toolResult as JSONValue, maxOutputChars); // servers of the 2024-10-07 protocol
      return text;
    },
  };
}

type CallResult = Awaited<ReturnType<Client["callTool"]>>;

/** The MCP SDK's `ErrorCode.ConnectionClosed`, for a request whose connection closed before its answer. */
const CONNECTION_CLOSED = -32000;

/**
 * A tool's input schema with its arguments named as every provider takes them (argument-names.ts:
 * one tool with `filter[id]` makes Anthropic refuse every request), and the server's name of
 * each argument renamed.
 */
function providerSchema(inputSchema: ListedTool["inputSchema"]): { parameters: Record<string, unknown>; serverNames: Map<string, string> } {
  const parameters: Record<string, unknown> = { ...inputSchema, type: "object" };
  const properties = parameters.properties;
  const serverNames = new Map<string, string>();
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return { parameters, serverNames };
  const renamed = providerArgumentNames(Object.keys(properties));
  if (renamed.size === 0) return { parameters, serverNames };
  for (const [server, argument] of renamed) serverNames.set(argument, server);
  parameters.properties = Object.fromEntries(Object.entries(properties).map(([key, schema]) => [renamed.get(key) ?? key, schema]));
  if (Array.isArray(parameters.required))
    parameters.required = parameters.required.map((key: unknown) => (typeof key === "string" ? (renamed.get(key) ?? key) : key));
  return { parameters, serverNames };
}

/** A call's arguments under the names the server gave them. */
function serverArguments(input: Record<string, unknown>, serverNames: ReadonlyMap<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).map(([argument, value]) => [serverNames.get(argument) ?? argument, value]));
}

/** Why the calls in flight were aborted: a message over `maxMessageBytes` was dropped. */
class MessageDropped {
  constructor(readonly connectionLost: boolean) {}
}

/**
 * The one client of a toolset, connected again on the next call after the connection was lost
 * (the SDK drops a stdio connection when a message is over its read buffer), and the calls in
 * flight, failed at once with a clear message when a message is too large (over HTTP the SDK
 * would otherwise wait for the timeout).
 */
class McpConnection {
  #connected: Promise<Client> | undefined;
  #closed = false;
  readonly #inFlight = new Set<AbortController>();

  constructor(
    readonly server: McpStdioServer | McpHttpServer,
    readonly where: string,
    readonly clientName: string,
    readonly maxMessageBytes: number,
    readonly requestOptions: { readonly timeout: number },
  ) {}

  client(): Promise<Client> {
    if (this.#closed) return Promise.reject(new McpConnectionError(`The tools of the MCP server ${this.where} were closed; connect again with mcpTools().`));
    this.#connected ??= this.#connect();
    return this.#connected;
  }

  async callTool(name: string, args: Record<string, unknown>, stopped: AbortSignal | undefined): Promise<CallResult> {
    const client = await this.client();
    const call = new AbortController();
    const stop = () => call.abort(stopped?.reason);
    if (stopped?.aborted) stop();
    stopped?.addEventListener("abort", stop, { once: true });
    this.#inFlight.add(call);
    try {
      return await client.callTool({ name, arguments: args }, undefined, { ...this.requestOptions, signal: call.signal });
    } catch (error) {
      const reason: unknown = call.signal.reason;
      if (reason instanceof MessageDropped)
        throw new McpMessageTooLargeError(
          `The MCP server ${this.where} sent a message over ${bytesText(this.maxMessageBytes)} (maxMessageBytes) while ${name} ran, and it was not read` +
            `${reason.connectionLost ? "; the connection was lost, so this call's outcome is unknown" : ""}. Ask for less (a page, a filter, one item).`,
          { cause: error },
        );
      // The server went away mid-call (its process crashed or exited, the HTTP server dropped the
      // stream): the SDK says only "Connection closed", which tells the model nothing it can act on.
      if (!call.signal.aborted && (error as { code?: unknown } | null)?.code === CONNECTION_CLOSED)
        throw new McpConnectionError(
          `The MCP server ${this.where} closed the connection while ${name} ran (it may have stopped or crashed), so this call's outcome is unknown: check before calling it again. ` +
            `The next call ${"command" in this.server ? "starts the server again (a server that keeps state in its process starts empty)" : "connects again"}.`,
          { cause: error },
        );
      throw error;
    } finally {
      this.#inFlight.delete(call);
      stopped?.removeEventListener("abort", stop);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const connected = this.#connected;
    this.#connected = undefined;
    await (await connected?.catch(() => undefined))?.close();
  }

  #connect(): Promise<Client> {
    const client = new Client({ name: this.clientName, version: "1" });
    const tooLarge = (connectionLost: boolean) => {
      for (const call of this.#inFlight) call.abort(new MessageDropped(connectionLost));
    };
    client.onerror = (error) => {
      // stdio: the SDK's read buffer overflowed, and it is closing the connection; the next call starts a new one.
      if (!/ReadBuffer exceeded maximum size/.test(error.message)) return;
      if (this.#connected === connected) this.#connected = undefined;
      tooLarge(true);
    };
    client.onclose = () => {
      if (this.#connected === connected) this.#connected = undefined; // the next call connects again
    };
    const connected = (async () => {
      try {
        await client.connect(
          transportFor(this.server, this.maxMessageBytes, () => tooLarge(false)),
          this.requestOptions,
        );
        return client;
      } catch (error) {
        await client.close().catch(() => undefined);
        throw new McpConnectionError(`Could not connect to the MCP server ${this.where}: ${messageOf(error)}. Check that it starts and speaks MCP.`, {
          cause: error,
        });
      }
    })();
    connected.catch(() => {
      if (this.#connected === connected) this.#connected = undefined;
    });
    return connected;
  }
}

/** `value` as it is when its JSON has at most `maxChars` characters, else that JSON cut, as text. */
function bounded(value: JSONValue, maxChars: number): JSONValue {
  const json = JSON.stringify(value) ?? "null";
  return json.length <= maxChars ? value : cutForModel(json, maxChars).text;
}

/** The content of a result as the model reads it: texts as they are, other content as a line saying what it is. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((item: { type?: unknown; text?: unknown; mimeType?: unknown; resource?: { uri?: unknown; text?: unknown }; uri?: unknown; name?: unknown }) => {
      if (item.type === "text" && typeof item.text === "string") return item.text;
      if (item.type === "resource" && typeof item.resource?.text === "string") return item.resource.text;
      if (item.type === "resource_link") return `[resource ${String(item.name ?? item.uri)}: ${String(item.uri)}]`;
      return `[${String(item.type)}${typeof item.mimeType === "string" ? ` ${item.mimeType}` : ""} content]`;
    })
    .join("\n");
}

/**
 * A name every provider takes: OpenAI's `^[a-zA-Z0-9_-]{1,64}$` (other characters become `_`),
 * starting with a letter or `_` as Gemini wants (`3d_render` becomes `_3d_render`).
 */
function toolName(name: string, prefix: string | undefined, where: string): string {
  const valid = `${prefix ? `${prefix}_` : ""}${name}`.replace(/[^a-zA-Z0-9_-]/g, "_");
  const made = (/^[a-zA-Z_]/.test(valid) || valid === "" ? valid : `_${valid}`).slice(0, 64);
  if (!TOOL_NAME.test(made)) throw new McpConnectionError(`The MCP server ${where} lists a tool with an empty name.`);
  return made;
}

function transportFor(server: McpStdioServer | McpHttpServer, maxMessageBytes: number, tooLarge: () => void): Transport {
  if ("command" in server) {
    if (typeof server.command !== "string" || server.command.trim() === "")
      throw new ConfigurationError(
        'mcpTools: give the command that starts the MCP server, e.g. { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] }.',
        "command",
        server.command,
      );
    return new StdioClientTransport({
      command: server.command,
      args: [...(server.args ?? [])],
      ...(server.env ? { env: { ...server.env } } : {}),
      ...(server.cwd ? { cwd: server.cwd } : {}),
      stderr: server.stderr ?? "inherit",
      maxBufferSize: maxMessageBytes,
    });
  }
  let url: URL;
  try {
    url = new URL(server.url);
  } catch (error) {
    const shown = maskCredentials(String(server.url));
    throw new ConfigurationError(`mcpTools: url must be an absolute http(s) URL, e.g. http://127.0.0.1:3000/mcp; got ${JSON.stringify(shown)}.`, "url", shown, {
      cause: error,
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigurationError(`mcpTools: url must be an http(s) URL; got ${JSON.stringify(maskCredentials(url.href))}.`, "url", maskCredentials(url.href));
  return new StreamableHTTPClientTransport(url, {
    fetch: messageCappedFetch(maxMessageBytes, tooLarge),
    ...(server.headers ? { requestInit: { headers: { ...server.headers } } } : {}),
  });
}

/** The server as error messages name it: the command, or the URL without credentials or query. */
function describeServer(server: McpStdioServer | McpHttpServer): string {
  if ("command" in server) return `\`${[server.command, ...(server.args ?? [])].join(" ")}\``;
  try {
    const url = new URL(server.url);
    return `at ${url.origin}${url.pathname}`;
  } catch {
    return "at an invalid URL";
  }
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\.$/, "");
}
