/**
 * Ollama's native chat API (`POST /api/chat`) on 127.0.0.1: it refuses what Ollama refuses (no
 * model, an unknown role, tool-call arguments that are not an object) and what a tool-calling
 * model's template cannot render (a `tool` message that answers no call of the assistant message
 * before it, or names no tool that message called), and streams scripted turns as Ollama does:
 * newline-delimited JSON, text in small pieces, every tool call of the turn whole in one chunk,
 * then a last `done: true` chunk with `prompt_eval_count` and `eval_count`.
 */
import type { ServerResponse } from "node:http";
import { isObject, sendJSON, startWireServer, turnUsage } from "./wire-server.ts";
import type { WireRequest, WireServer, WireTurn } from "./wire-server.ts";

export interface OllamaServerOptions {
  readonly turns: readonly WireTurn[];
  /** Models the server has pulled. Default: llama3.1:8b. */
  readonly models?: readonly string[];
}

/**
 * @example
 * const server = await startOllamaServer({ turns: [{ text: "Hi!" }] });
 * const llm = new Ollama({ host: server.url, model: "llama3.1:8b" });
 */
export function startOllamaServer(options: OllamaServerOptions): Promise<WireServer> {
  const models = options.models ?? ["llama3.1:8b"];
  let turnIndex = 0;
  return startWireServer((request, res) => {
    if (request.method !== "POST" || request.path !== "/api/chat") return refuse(res, 404, "404 page not found");
    const body = request.body;
    if (!isObject(body) || typeof body.model !== "string" || body.model === "") return refuse(res, 400, "model is required");
    if (!models.includes(body.model)) return refuse(res, 404, `model "${body.model}" not found, try pulling it first`);
    const problem = invalid(request);
    if (problem) return refuse(res, 400, problem);
    const index = turnIndex++;
    const turn = options.turns[index];
    if (!turn) return refuse(res, 400, `the test server has no turn #${index + 1}`);
    if (body.stream === false) return refuse(res, 400, "this test server streams only");
    stream(res, turn, index, body.model);
    return undefined;
  });
}

function refuse(res: ServerResponse, status: number, error: string): string {
  sendJSON(res, status, { error });
  return error;
}

function invalid(request: WireRequest): string | undefined {
  const format = (request.body as { format?: unknown }).format;
  if (format !== undefined && format !== "" && format !== "json" && !isObject(format))
    return `invalid format: ${JSON.stringify(format)} (expected "json" or a JSON schema object)`;
  const messages = (request.body as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return "messages: expected an array";
  let called: string[] = [];
  for (const [i, message] of messages.entries()) {
    if (!isObject(message)) return `messages[${i}]: expected an object`;
    if (!["system", "user", "assistant", "tool"].includes(String(message.role))) return `invalid role: ${String(message.role)}`;
    if (typeof message.content !== "string")
      return `json: cannot unmarshal ${typeof message.content} into Go struct field Message.messages.content of type string`;
    if (message.role === "assistant") {
      called = [];
      for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
        const fn = isObject(call) ? call.function : undefined;
        if (!isObject(fn) || typeof fn.name !== "string") return `messages[${i}].tool_calls: a call needs function.name`;
        if (!isObject(fn.arguments))
          return `json: cannot unmarshal ${typeof fn.arguments} into Go struct field ToolCallFunction.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments`;
        called.push(fn.name);
      }
    } else if (message.role === "tool") {
      // The chat template renders a result after the assistant's call of that tool.
      if (called.length === 0) return `messages[${i}]: a tool message must follow an assistant message with tool_calls`;
      if (typeof message.tool_name !== "string" || !called.includes(message.tool_name))
        return `messages[${i}]: tool_name must name a tool the assistant called (${called.join(", ")})`;
    } else called = [];
  }
  return undefined;
}

function stream(res: ServerResponse, turn: WireTurn, index: number, model: string): void {
  const usage = turnUsage(turn, index);
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  const created_at = "2026-11-27T05:00:00.000000Z";
  const send = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    res.write(`${JSON.stringify({ model, created_at, message: { role: "assistant", content: "", ...message }, done: false, ...extra })}\n`);
  const text = turn.text ?? "";
  for (let at = 0; at < text.length; at += 8) send({ content: text.slice(at, at + 8) });
  if (turn.calls?.length) send({ tool_calls: turn.calls.map((call) => ({ function: { name: call.name, arguments: call.input } })) });
  res.end(
    `${JSON.stringify({
      model,
      created_at,
      message: { role: "assistant", content: "" },
      done: true,
      done_reason: "stop",
      total_duration: 512_000_000,
      load_duration: 12_000_000,
      prompt_eval_count: usage.input,
      prompt_eval_duration: 100_000_000,
      eval_count: usage.output,
      eval_duration: 400_000_000,
    })}\n`,
  );
}

/** The contents of the `tool` messages at the end of a request, in order. */
export function ollamaToolResults(body: unknown): string[] {
  const messages = (body as { messages: { role: string; content: string }[] }).messages;
  const results: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === "tool"; i--) results.unshift(String(messages[i]?.content));
  return results;
}
