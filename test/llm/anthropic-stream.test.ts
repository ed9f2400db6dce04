/**
 * Anthropic's Messages API streams as the real API sends them, byte for byte: tool input split
 * anywhere, several blocks, thinking blocks, pings, errors mid-stream, a reply cut off.
 */
import type { ServerResponse } from "node:http";
import type { ToolCall } from "@llamaindex/core/llms";
import { afterEach, describe, expect, it } from "vitest";
import { Anthropic, LLMReplyCutOffError, LLMReplyStoppedError, LLMStreamError, retryAfter } from "../../src/llm/anthropic.ts";
import { add } from "../../workflows/tools/calculator.ts";
import { anthropicEvent, MESSAGE_START } from "../support/anthropic-sse.ts";
import { rawServer } from "../support/raw-server.ts";

let server: { url: string; close: () => Promise<void> } | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const event = anthropicEvent;
const start = MESSAGE_START;
const text = (index: number, ...pieces: string[]) =>
  event("content_block_start", { index, content_block: { type: "text", text: "" } }) +
  pieces.map((piece) => event("content_block_delta", { index, delta: { type: "text_delta", text: piece } })).join("") +
  event("content_block_stop", { index });
const toolUse = (index: number, id: string, name: string, ...json: string[]) =>
  event("content_block_start", { index, content_block: { type: "tool_use", id, name, input: {} } }) +
  json.map((partial_json) => event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } })).join("");
const stop = (index: number) => event("content_block_stop", { index });
const end = (stopReason: string) =>
  event("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } }) + event("message_stop", {});

/** Streams `body` in the pieces given (bytes, to split inside a character). */
function streaming(...pieces: (string | Buffer)[]) {
  return (res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream", "request-id": "req_1" });
    for (const piece of pieces) res.write(piece);
    res.end();
  };
}

async function reply(url: string, maxTokens?: number): Promise<{ content: string; calls: ToolCall[] }> {
  const llm = new Anthropic({ apiKey: "test-key", baseURL: url, maxRetries: 0, ...(maxTokens ? { maxTokens } : {}) });
  const { message } = await llm.chat({ messages: [{ role: "user", content: "go" }], tools: [add] });
  return { content: String(message.content), calls: (message.options as { toolCall?: ToolCall[] } | undefined)?.toolCall ?? [] };
}

describe("Anthropic streaming, as the API sends it", () => {
  it("keeps how long a 429 asked to wait, read with retryAfter", async () => {
    server = await rawServer((res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "17" });
      res.end(
        JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" } }),
      );
    });
    const error = await reply(server.url).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429 });
    expect(retryAfter(error)).toBe(17);
  });

  it("joins tool input split inside a UTF-8 character, inside an escape, with pings between", async () => {
    const body =
      start + event("ping", {}) + toolUse(0, "toolu_1", "add", '{"note": "caf', "é \\", '"ok\\', 'u00e9\\"", "x": 1, "y": 2}') + stop(0) + end("tool_use");
    const bytes = Buffer.from(body);
    const cut = bytes.indexOf(Buffer.from("é")) + 1; // between the two bytes of é
    server = await rawServer(streaming(bytes.subarray(0, cut), bytes.subarray(cut)));
    expect((await reply(server.url)).calls).toEqual([{ id: "toolu_1", name: "add", input: { note: 'café "oké"', x: 1, y: 2 } }]);
  });

  it("gives a tool called without arguments (an empty partial_json) the input {}", async () => {
    server = await rawServer(streaming(start + toolUse(0, "toolu_1", "now", "") + stop(0) + end("tool_use")));
    expect((await reply(server.url)).calls).toEqual([{ id: "toolu_1", name: "now", input: {} }]);
  });

  it("takes a tool_use input given whole in content_block_start with no deltas, as the SDK's MessageStream does (compatible servers)", async () => {
    const whole = event("content_block_start", { index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "add", input: { x: 1, y: 2 } } });
    server = await rawServer(streaming(start + whole + stop(0) + end("tool_use")));
    expect((await reply(server.url)).calls).toEqual([{ id: "toolu_1", name: "add", input: { x: 1, y: 2 } }]);
  });

  it("keeps text and several tool_use blocks of one message, in order, and passes thinking over", async () => {
    const thinking =
      event("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }) +
      event("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "Two sums." } }) +
      event("content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "EqQBCgIYAhIM" } }) +
      stop(0) +
      event("content_block_start", { index: 1, content_block: { type: "redacted_thinking", data: "EmwKAhgBEgy3" } }) +
      stop(1);
    server = await rawServer(
      streaming(
        start +
          thinking +
          text(2, "Adding ", "both.") +
          toolUse(3, "toolu_a", "add", '{"x":1,', '"y":2}') +
          stop(3) +
          text(4, "And:") +
          toolUse(5, "toolu_b", "add", '{"x":3,"y":4}') +
          stop(5) +
          end("tool_use"),
      ),
    );
    expect(await reply(server.url)).toEqual({
      content: "Adding both.And:",
      calls: [
        { id: "toolu_a", name: "add", input: { x: 1, y: 2 } },
        { id: "toolu_b", name: "add", input: { x: 3, y: 4 } },
      ],
    });
  });

  it("fails with LLMReplyCutOffError when max_tokens cuts a tool call's input off, not a call with half its arguments", async () => {
    server = await rawServer(streaming(start + text(0, "Adding.") + toolUse(1, "toolu_1", "add", '{"x": 2123, "y"') + stop(1) + end("max_tokens")));
    const cut = reply(server.url, 12);
    await expect(cut).rejects.toBeInstanceOf(LLMReplyCutOffError);
    await expect(cut).rejects.toMatchObject({ tool: "add", maxTokens: 12 });
    await expect(cut).rejects.toThrow(
      `The model's reply was cut off by its token limit (stop_reason "max_tokens") in the middle of a call to tool add, so its arguments are incomplete. Raise maxTokens (now 12) or ask for less.`,
    );
    await server.close();
    // Cut off right after the name: no input at all, which would otherwise run the tool with {}.
    server = await rawServer(streaming(start + toolUse(0, "toolu_1", "add") + stop(0) + end("max_tokens")));
    await expect(reply(server.url)).rejects.toMatchObject({ tool: "add", maxTokens: 4096 });
    await server.close();
    // A complete call before the limit cut the text after it is the model's whole call.
    server = await rawServer(streaming(start + toolUse(0, "toolu_1", "add", '{"x":1,"y":2}') + stop(0) + text(1, "Now I") + end("max_tokens")));
    expect(await reply(server.url)).toEqual({ content: "Now I", calls: [{ id: "toolu_1", name: "add", input: { x: 1, y: 2 } }] });
  });

  it("fails with LLMReplyCutOffError naming the context window when it cuts a tool call's input off", async () => {
    server = await rawServer(streaming(start + toolUse(0, "toolu_1", "add", '{"x": 2123') + stop(0) + end("model_context_window_exceeded")));
    const cut = reply(server.url);
    await expect(cut).rejects.toMatchObject({ name: "LLMReplyCutOffError", tool: "add", limit: "context-window" });
    await expect(cut).rejects.toThrow(
      `The model's reply was cut off by its context window (stop_reason "model_context_window_exceeded") in the middle of a call to tool add, so its arguments are incomplete: the conversation and the reply no longer fit the model. Send less history (a smaller memory token limit), shorter tool results, or use a model with a larger context window.`,
    );
    await server.close();
    // Text cut off by the window, after a whole call, is still the model's reply.
    server = await rawServer(
      streaming(start + toolUse(0, "toolu_1", "add", '{"x":1,"y":2}') + stop(0) + text(1, "Now I") + end("model_context_window_exceeded")),
    );
    expect(await reply(server.url)).toEqual({ content: "Now I", calls: [{ id: "toolu_1", name: "add", input: { x: 1, y: 2 } }] });
  });
  it("fails with LLMStreamError when the stream ends before the message does, not with its text as the whole answer", async () => {
    server = await rawServer(streaming(start + text(0, "The total is 13")));
    const cut = reply(server.url);
    await expect(cut).rejects.toBeInstanceOf(LLMStreamError);
    await expect(cut).rejects.toMatchObject({ baseURL: server.url, problem: "broken-off" });
    await expect(cut).rejects.toThrow(
      `The server at ${server.url} broke off its reply: the stream ended before the message's stop_reason and message_stop. Try again; if it happens again, check the server and the network between.`,
    );
  });

  it('says the server broke off its reply when the connection drops mid-stream, not fetch\'s bare "terminated"', async () => {
    server = await rawServer((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(start + text(0, "Hel"), () => res.socket?.destroy());
    });
    const cut = reply(server.url);
    await expect(cut).rejects.toMatchObject({ problem: "broken-off", cause: expect.any(TypeError) });
    await expect(cut).rejects.toThrow(
      new RegExp(`^The server at ${server.url} broke off its reply: .+\\. Try again; if it happens again, check the server and the network between\\.$`),
    );
  });

  it("fails with the SDK's APIError of the API's type when an error event comes mid-stream (overloaded_error)", async () => {
    server = await rawServer(streaming(start + text(0, "Hel") + event("error", { error: { type: "overloaded_error", message: "Overloaded" } })));
    const failed = reply(server.url);
    await expect(failed).rejects.toMatchObject({ name: "APIError", type: "overloaded_error" });
    await expect(failed).rejects.toThrow("Overloaded");
  });

  it("fails with the SDK's typed errors and their status: 429 with Retry-After, 529, a proxy's HTML 502", async () => {
    const answers: [number, string, string, Record<string, unknown>][] = [
      [
        429,
        "application/json",
        JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "rate limited" } }),
        { name: "RateLimitError", type: "rate_limit_error" },
      ],
      [529, "application/json", JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }), { name: "OverloadedError" }],
      [502, "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>", { name: "InternalServerError" }],
    ];
    for (const [status, type, body, expected] of answers) {
      server = await rawServer((res) => {
        res.writeHead(status, { "content-type": type, "retry-after": "7" });
        res.end(body);
      });
      const error = (await reply(server.url).catch((e: unknown) => e)) as { status: number; headers: Headers };
      expect(error).toMatchObject({ status, ...expected });
      expect(error.headers.get("retry-after")).toBe("7"); // for a caller that waits itself
      await server.close();
      server = undefined;
    }
  });

  it('fails with LLMReplyStoppedError when the classifiers stop a reply (stop_reason "refusal"), not with its start as the answer', async () => {
    server = await rawServer(streaming(start + text(0, "Here is how") + end("refusal")));
    const stopped = reply(server.url);
    await expect(stopped).rejects.toBeInstanceOf(LLMReplyStoppedError);
    await expect(stopped).rejects.toMatchObject({ reason: 'stop_reason "refusal"' });
    await expect(stopped).rejects.toThrow(
      `Claude stopped the reply (stop_reason "refusal"): Anthropic's safety classifiers declined it. Rephrase the request, or leave out what the classifiers object to.`,
    );
  });
});
