/**
 * Anthropic's Messages API (`POST /v1/messages`) on 127.0.0.1: it refuses what the real API
 * refuses (no `max_tokens`, roles that do not alternate, a `tool_use` not answered by
 * `tool_result` blocks at the start of the next user turn, a tool input that is not an object,
 * empty text blocks, a system role inside `messages`, a wrong key) with the API's 400/401 error
 * bodies, and streams scripted turns as the API's server-sent events: `message_start` (usage),
 * `content_block_start`/`_delta`/`_stop` for text and `tool_use` blocks (input as
 * `input_json_delta` fragments), `message_delta` (stop reason, cumulative usage), `message_stop`.
 * A request with `thinking` on gets a signed `thinking` block first in each reply (as with
 * interleaved thinking), and is refused as the API refuses it when a thinking block is not as
 * the server signed it, or `tool_choice` forces a tool, or, with manual thinking
 * (`type: "enabled"`), the assistant turn it continues (the tool-use loop since the last user
 * message that is more than tool results) does not start with a thinking block.
 */
import type { ServerResponse } from "node:http";
import { isObject, sendJSON, startWireServer, turnUsage } from "./wire-server.ts";
import type { WireRequest, WireServer, WireTurn } from "./wire-server.ts";

export interface AnthropicServerOptions {
  readonly turns: readonly WireTurn[];
  /** The key the server accepts in `x-api-key` or `Authorization: Bearer`. Default "test-key". */
  readonly apiKey?: string;
  /** Refuse every request with 401, repeating the key sent, as a careless proxy does. */
  readonly echoKey?: boolean;
}

/**
 * @example
 * const server = await startAnthropicServer({ turns: [{ text: "Hi!" }] });
 * const llm = new Anthropic({ baseURL: server.url, apiKey: "test-key" });
 */
export function startAnthropicServer(options: AnthropicServerOptions): Promise<WireServer> {
  const apiKey = options.apiKey ?? "test-key";
  let turnIndex = 0;
  // The thinking the server signed, by signature: a block sent back must be exactly one of these.
  const signed = new Map<string, string>();
  return startWireServer((request, res) => {
    if (request.method !== "POST" || request.path !== "/v1/messages")
      return refuse(res, 404, "not_found_error", `Not found: ${request.method} ${request.path}`);
    // The SDK sends the key as `Authorization: Bearer` (1.x); older clients send `x-api-key`.
    const key = String(request.headers["x-api-key"] ?? String(request.headers.authorization ?? "").replace(/^Bearer /, ""));
    if (options.echoKey) return refuse(res, 401, "authentication_error", `invalid x-api-key: ${key}`);
    if (key !== apiKey) return refuse(res, 401, "authentication_error", "invalid x-api-key");
    if (!request.headers["anthropic-version"]) return refuse(res, 400, "invalid_request_error", "anthropic-version: header is required");
    const problem = invalid(request) ?? unsignedThinking(request, signed);
    if (problem) return refuse(res, 400, "invalid_request_error", problem);
    const index = turnIndex++;
    const turn = options.turns[index];
    if (!turn) return refuse(res, 400, "invalid_request_error", `the test server has no turn #${index + 1}`);
    const body = request.body as { model: string; stream?: boolean; tool_choice?: { type?: string } };
    if (body.stream !== true) return refuse(res, 400, "invalid_request_error", "this test server streams only: send stream: true");
    // The API never answers in text alone when the request makes the model call a tool: a script that does is wrong.
    if ((body.tool_choice?.type === "any" || body.tool_choice?.type === "tool") && !turn.calls?.length)
      return refuse(
        res,
        400,
        "invalid_request_error",
        `the test server's turn #${index + 1} has no tool call, and tool_choice ${body.tool_choice.type} forces one`,
      );
    let thinking: string | undefined;
    if (thinkingOn(request.body)) {
      thinking = turn.calls?.length ? "A tool can work this out." : "I have what I need to answer.";
      signed.set(`sig_test${index}`, thinking);
    }
    stream(res, turn, index, body.model, thinking);
    return undefined;
  });
}

function refuse(res: ServerResponse, status: number, type: string, message: string): string {
  sendJSON(res, status, { type: "error", error: { type, message }, request_id: "req_test" });
  return message;
}

/** Why the real API would refuse this request body, if it would. */
function invalid(request: WireRequest): string | undefined {
  const body = request.body;
  if (!isObject(body)) return "body: must be a JSON object";
  if (typeof body.model !== "string" || body.model === "") return "model: Field required";
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) return "max_tokens: Field required";
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system)) return "system: Input should be a valid string or list";
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "tools: Input should be a valid list";
    for (const [i, tool] of body.tools.entries()) {
      if (!isObject(tool) || typeof tool.name !== "string" || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name)) return `tools.${i}.name: String should match pattern`;
      if (!isObject(tool.input_schema) || tool.input_schema.type !== "object") return `tools.${i}.input_schema.type: Input should be 'object'`;
    }
  }
  if (body.tool_choice !== undefined) {
    const choice = body.tool_choice;
    if (!isObject(choice) || !["auto", "any", "tool", "none"].includes(String(choice.type)))
      return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'";
    const names = Array.isArray(body.tools) ? body.tools.map((tool) => (tool as { name?: unknown }).name) : [];
    if ((choice.type === "any" || choice.type === "tool") && names.length === 0) return `tool_choice: tool_choice ${choice.type} requires tools`;
    if (choice.type === "tool" && !names.includes(choice.name)) return `tool_choice.name: no tool named ${String(choice.name)}`;
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return "messages: at least one message is required";
  let pendingToolUses: string[] = [];
  for (const [i, message] of messages.entries()) {
    if (!isObject(message)) return `messages.${i}: Input should be an object`;
    if (message.role !== "user" && message.role !== "assistant") {
      return `messages.${i}.role: Input should be 'user' or 'assistant'${message.role === "system" ? " (use the top-level system parameter)" : ""}`;
    }
    if (i === 0 && message.role !== "user") return 'messages: first message must use the "user" role';
    if (i > 0 && (messages[i - 1] as { role: unknown }).role === message.role)
      return `messages: roles must alternate between "user" and "assistant" (messages.${i - 1} and messages.${i} are both "${message.role}")`;
    const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (!Array.isArray(blocks) || blocks.length === 0) return `messages.${i}.content: must be a non-empty string or list of blocks`;
    const results: string[] = [];
    const uses: string[] = [];
    for (const [j, block] of (blocks as unknown[]).entries()) {
      const where = `messages.${i}.content.${j}`;
      if (!isObject(block)) return `${where}: Input should be an object`;
      if (block.type === "text" && (typeof block.text !== "string" || block.text.trim() === "")) return `${where}: text content blocks must be non-empty`;
      if (block.type === "tool_use") {
        if (message.role !== "assistant") return `${where}: tool_use blocks are only allowed in assistant messages`;
        if (typeof block.id !== "string" || !/^[a-zA-Z0-9_-]+$/.test(block.id)) return `${where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
        if (!isObject(block.input)) return `${where}.input: Input should be a valid dictionary`;
        uses.push(block.id);
      }
      if (block.type === "tool_result") {
        if (message.role !== "user") return `${where}: tool_result blocks are only allowed in user messages`;
        if (results.length !== j) return `${where}: tool_result blocks must come first in the user message, before any other content`;
        if (typeof block.content !== "string" && !Array.isArray(block.content)) return `${where}.content: Input should be a valid string or list`;
        results.push(String(block.tool_use_id));
      }
    }
    if (message.role === "user") {
      const unanswered = pendingToolUses.filter((id) => !results.includes(id));
      if (unanswered.length > 0) {
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
      const unexpected = results.filter((id) => !pendingToolUses.includes(id));
      if (unexpected.length > 0)
        return `messages.${i}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
    pendingToolUses = uses;
  }
  if (pendingToolUses.length > 0) return "messages: the last message has tool_use blocks without tool_result blocks after them";
  return undefined;
}

const thinkingOn = (body: unknown): boolean => isObject(body) && isObject(body.thinking) && body.thinking.type !== "disabled";

/** Why the API would refuse the thinking of this request, if it would. */
function unsignedThinking(request: WireRequest, signed: ReadonlyMap<string, string>): string | undefined {
  const body = request.body as { thinking?: unknown; tool_choice?: { type?: unknown }; messages: { role: string; content: unknown }[] };
  const on = thinkingOn(body);
  if (on && (body.tool_choice?.type === "any" || body.tool_choice?.type === "tool")) return "Thinking may not be enabled when tool_choice forces tool use.";
  for (const [i, message] of body.messages.entries()) {
    if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
    for (const [j, block] of (message.content as Record<string, unknown>[]).entries()) {
      if (block.type === "thinking" && signed.get(String(block.signature)) !== block.thinking)
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  // Manual thinking only: adaptive thinking may answer any request without thinking, so a turn
  // that began without it is one the API itself makes.
  if (!on || (body.thinking as { type?: unknown }).type !== "enabled") return undefined;
  // The assistant turn being continued: the messages after the last user message that is more
  // than tool results. Its first message must start with thinking; later ones need not (without
  // interleaved thinking Claude thinks once, at the start of the turn).
  let first = -1;
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message = body.messages[i] as { role: string; content: unknown };
    if (message.role === "assistant") first = i;
    else if (!Array.isArray(message.content) || (message.content as { type: string }[]).some((block) => block.type !== "tool_result")) break;
  }
  if (first < 0) return undefined;
  const content = body.messages[first]?.content;
  const opening = typeof content === "string" ? "text" : (content as { type: string }[])[0]?.type;
  if (opening === "thinking" || opening === "redacted_thinking") return undefined;
  return `messages.${first}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${opening}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
}

function stream(res: ServerResponse, turn: WireTurn, index: number, model: string, thinking?: string): void {
  const usage = turnUsage(turn, index);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": "req_test" });
  const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send("message_start", {
    message: {
      id: `msg_test${index}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.input, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: "standard" },
    },
  });
  send("ping", {});
  let block = 0;
  if (thinking !== undefined) {
    send("content_block_start", { index: block, content_block: { type: "thinking", thinking: "", signature: "" } });
    send("content_block_delta", { index: block, delta: { type: "thinking_delta", thinking } });
    send("content_block_delta", { index: block, delta: { type: "signature_delta", signature: `sig_test${index}` } });
    send("content_block_stop", { index: block++ });
  }
  if (turn.text) {
    send("content_block_start", { index: block, content_block: { type: "text", text: "" } });
    const half = Math.ceil(turn.text.length / 2);
    for (const piece of [turn.text.slice(0, half), turn.text.slice(half)])
      send("content_block_delta", { index: block, delta: { type: "text_delta", text: piece } });
    send("content_block_stop", { index: block++ });
  }
  for (const [i, call] of (turn.calls ?? []).entries()) {
    send("content_block_start", { index: block, content_block: { type: "tool_use", id: `toolu_test${index}_${i}`, name: call.name, input: {} } });
    const json = JSON.stringify(call.input);
    const third = Math.ceil(json.length / 3);
    send("content_block_delta", { index: block, delta: { type: "input_json_delta", partial_json: "" } });
    for (const piece of [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)])
      send("content_block_delta", { index: block, delta: { type: "input_json_delta", partial_json: piece } });
    send("content_block_stop", { index: block++ });
  }
  send("message_delta", {
    delta: { stop_reason: turn.calls?.length ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  send("message_stop", {});
  res.end();
}

/** The contents of the `tool_result` blocks of a request's last user turn, in order. */
export function anthropicToolResults(body: unknown): string[] {
  const last = (body as { messages: { role: string; content: unknown }[] }).messages.at(-1);
  if (!last || !Array.isArray(last.content)) return [];
  return (last.content as { type: string; content?: unknown }[]).filter((block) => block.type === "tool_result").map((block) => String(block.content));
}
