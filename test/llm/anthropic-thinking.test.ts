/**
 * Claude's extended thinking with tools, against the wire as the Messages API streams it: the
 * signed thinking and redacted_thinking blocks of a turn that called tools go back unchanged,
 * before its tool_use blocks, also from a context saved and restored while a call waited.
 */
import type { ServerResponse } from "node:http";
import type { ChatMessage } from "@llamaindex/core/llms";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { StreamEvent, ToolApprovalEvent, ToolApprovalRequestEvent } from "../../events/index.ts";
import { ConfigurationError, Context } from "../../src/index.ts";
import { Anthropic, anthropicMessages, anthropicThinking } from "../../src/llm/anthropic.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent, RESPOND_TOOL } from "../../workflows/function-calling-agent.ts";
import { add, calculatorTools } from "../../workflows/tools/calculator.ts";
import { startAnthropicServer } from "../support/anthropic-wire-server.ts";
import { NOTEBOOK_TURNS } from "../support/provider-scenarios.ts";
import { anthropicEvent, MESSAGE_START } from "../support/anthropic-sse.ts";
import { rawServer } from "../support/raw-server.ts";
import { saveOnEvent } from "../support/save-on-event.ts";

let server: { url: string; close: () => Promise<void> } | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const event = anthropicEvent;
const start = MESSAGE_START;
const block = (index: number, content_block: Record<string, unknown>, ...deltas: Record<string, unknown>[]) =>
  event("content_block_start", { index, content_block }) +
  deltas.map((delta) => event("content_block_delta", { index, delta })).join("") +
  event("content_block_stop", { index });
const thinking = (index: number, signature: string, ...pieces: string[]) =>
  block(index, { type: "thinking", thinking: "", signature: "" }, ...pieces.map((piece) => ({ type: "thinking_delta", thinking: piece })), {
    type: "signature_delta",
    signature,
  });
const redacted = (index: number, data: string) => block(index, { type: "redacted_thinking", data });
const text = (index: number, ...pieces: string[]) => block(index, { type: "text", text: "" }, ...pieces.map((piece) => ({ type: "text_delta", text: piece })));
const toolUse = (index: number, id: string, name: string, ...json: string[]) =>
  block(index, { type: "tool_use", id, name, input: {} }, ...json.map((partial_json) => ({ type: "input_json_delta", partial_json })));
const end = (stopReason: string) =>
  event("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } }) + event("message_stop", {});

const SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
const REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";

/** The first reply thinks, has a redacted block, says a word and calls add; the second answers. */
const TOOL_TURN =
  start +
  thinking(0, SIGNATURE, "The user wants ", "2123 + 2321.") +
  redacted(1, REDACTED) +
  text(2, "Adding.") +
  toolUse(3, "toolu_1", "add", '{"x":2123,', '"y":2321}') +
  end("tool_use");
const ANSWER_TURN = start + thinking(0, "EuYBCkQYAiJA", "4444 it is.") + text(1, "2123 + 2321 = 4444.") + end("end_turn");

/** What the turn above must come back as: thinking blocks unchanged, before the tool_use block. */
const TOOL_TURN_SENT_BACK = {
  role: "assistant",
  content: [
    { type: "thinking", thinking: "The user wants 2123 + 2321.", signature: SIGNATURE },
    { type: "redacted_thinking", data: REDACTED },
    { type: "text", text: "Adding." },
    { type: "tool_use", id: "toolu_1", name: "add", input: { x: 2123, y: 2321 } },
  ],
};

/** A server answering its n-th request with `turns[n]`, keeping each request's body. */
async function scripted(...turns: string[]): Promise<{ url: string; close: () => Promise<void>; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const started = await rawServer((res: ServerResponse, _req, body) => {
    bodies.push(JSON.parse(body) as Record<string, unknown>);
    res.writeHead(200, { "content-type": "text/event-stream", "request-id": "req_1" });
    res.end(turns[bodies.length - 1] ?? "");
  });
  server = started;
  return { ...started, bodies };
}

const thinkingOn = (url: string) => new Anthropic({ apiKey: "test-key", baseURL: url, maxRetries: 0, thinking: { type: "enabled", budget_tokens: 2048 } });

describe("Anthropic extended thinking with tools", () => {
  it("sends the signed thinking and redacted_thinking blocks back unchanged, before the tool_use, and keeps thinking out of the answer", async () => {
    const { url, bodies } = await scripted(TOOL_TURN, ANSWER_TURN);
    let streamed = "";
    const handler = new FunctionCallingAgent({ llm: thinkingOn(url), tools: [add] }).run({ input: "2123 + 2321?" });
    for await (const ev of handler.streamEvents()) if (ev instanceof StreamEvent) streamed += ev.delta;
    const { response } = await handler;

    expect(bodies[0]).toMatchObject({ thinking: { type: "enabled", budget_tokens: 2048 }, max_tokens: 4096 });
    expect(bodies[0]).not.toHaveProperty("tool_choice");
    expect((bodies[1]?.messages as unknown[])[1]).toEqual(TOOL_TURN_SENT_BACK);
    expect(response.content).toBe("2123 + 2321 = 4444.");
    expect(streamed).toBe("Adding.2123 + 2321 = 4444.");
    expect(anthropicThinking(response)).toBe("4444 it is.");
  });

  it("sends them back from a context saved while the call waited for approval and restored", async () => {
    const { url, bodies } = await scripted(TOOL_TURN, ANSWER_TURN);
    const approvedAdd = tool({
      name: "add",
      description: "Add two numbers.",
      parameters: z.object({ x: z.number(), y: z.number() }),
      execute: ({ x, y }) => String(x + y),
    });
    const make = () => new FunctionCallingAgent({ llm: thinkingOn(url), tools: [approvedAdd], needsApproval: ["add"] });
    const saved = await saveOnEvent(make().run({ input: "2123 + 2321?" }), ToolApprovalRequestEvent);
    expect(saved).toContain(SIGNATURE);

    const restored = make();
    const resumed = restored.run(undefined, { ctx: Context.fromJSON(restored, saved) });
    for await (const ev of resumed.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) resumed.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
    }
    expect((await resumed).response.content).toBe("2123 + 2321 = 4444.");
    expect(bodies).toHaveLength(2);
    expect((bodies[1]?.messages as unknown[])[1]).toEqual(TOOL_TURN_SENT_BACK);
  });

  it("answers the notebook question in two tool rounds from a server that refuses a tool turn sent back without its thinking", async () => {
    const wire = await startAnthropicServer({ turns: NOTEBOOK_TURNS });
    try {
      const { response } = await new FunctionCallingAgent({ llm: thinkingOn(wire.url), tools: calculatorTools }).run({ input: "What is (2123 + 2321) * 312?" });
      expect(response.content).toBe("(2123 + 2321) * 312 = 1386528.");
      expect(anthropicThinking(response)).toBe("I have what I need to answer.");
      expect(wire.refused).toEqual([]);
      expect(wire.requests).toHaveLength(3);
    } finally {
      await wire.close();
    }
  });

  it("keeps interleaved blocks in their order, and each tool_use from the message's call of its id", () => {
    const kept = [
      { type: "thinking", thinking: "First.", signature: "s1" },
      { type: "text", text: "Let me check." },
      { type: "thinking", thinking: "Then.", signature: "s2" },
      { type: "tool_use", id: "toolu_1" },
      { type: "tool_use", id: "toolu_respond" },
    ];
    const { messages } = anthropicMessages([
      { role: "user", content: "Hi" },
      {
        role: "assistant",
        content: "Let me check.",
        options: { toolCall: [{ id: "toolu_1", name: "add", input: { x: 1, y: 2 } }], anthropic: { content: kept } } as never,
      },
    ]);
    expect(messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "First.", signature: "s1" },
        { type: "text", text: "Let me check." },
        { type: "thinking", thinking: "Then.", signature: "s2" },
        { type: "tool_use", id: "toolu_1", name: "add", input: { x: 1, y: 2 } },
      ],
    });
  });

  it("with thinking on, answers responseFormat through the respond tool without forcing it (the API refuses tool_choice any)", async () => {
    const respond = start + thinking(0, SIGNATURE, "Done.") + toolUse(1, "toolu_9", RESPOND_TOOL, '{"total":3}') + end("tool_use");
    const { url, bodies } = await scripted(respond);
    const { object } = await new FunctionCallingAgent({ llm: thinkingOn(url), tools: [add], responseFormat: z.object({ total: z.number() }) }).run({
      input: "1+2?",
    });
    expect(object).toEqual({ total: 3 });
    expect(bodies[0]).not.toHaveProperty("tool_choice");
    expect((bodies[0]?.tools as { name: string }[]).map((t) => t.name)).toEqual(["add", RESPOND_TOOL]);
  });

  it("says what to change when a call forces a tool with thinking on, or the budget does not fit maxTokens", async () => {
    const llm = new Anthropic({ apiKey: "test-key", baseURL: "http://127.0.0.1:9", thinking: { type: "adaptive" } });
    const forced = llm.chat({ messages: [{ role: "user", content: "Hi" }], tools: [add], additionalChatOptions: { toolChoice: "required" } });
    await expect(forced).rejects.toBeInstanceOf(ConfigurationError);
    await expect(forced).rejects.toThrow(/tool_choice "auto" or "none" with thinking/);
    expect(() => new Anthropic({ thinking: { type: "enabled", budget_tokens: 8000 } })).toThrow(
      "Anthropic: thinking.budget_tokens (8000) must be less than maxTokens (4096, the default): thinking counts towards the reply's tokens. Raise maxTokens above the budget, e.g. maxTokens: 12096.",
    );
  });
});

describe("Anthropic thinking turned on in the middle of a tool-use loop", () => {
  const approvedAdd = tool({
    name: "add",
    description: "Add two numbers.",
    parameters: z.object({ x: z.number(), y: z.number() }),
    execute: ({ x, y }) => String(x + y),
  });
  const agent = (url: string, thinking?: { type: "enabled"; budget_tokens: number } | { type: "adaptive" }) =>
    new FunctionCallingAgent({
      llm: new Anthropic({ apiKey: "test-key", baseURL: url, maxRetries: 0, ...(thinking ? { thinking } : {}) }),
      tools: [approvedAdd],
      needsApproval: ["add"],
    });
  /** Runs a restored context until it answers, approving every call. */
  async function approveAll(handler: ReturnType<ReturnType<typeof agent>["run"]>): Promise<string> {
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
    }
    return String((await handler).response.content);
  }

  it("finishes a tool turn saved before thinking was on without thinking, and thinks again at the next question", async () => {
    const wire = await startAnthropicServer({
      turns: [{ text: "Adding.", calls: [{ name: "add", input: { x: 2123, y: 2321 } }] }, { text: "2123 + 2321 = 4444." }, { text: "You are welcome." }],
    });
    server = wire;
    const saved = await saveOnEvent(agent(wire.url).run({ input: "2123 + 2321?" }), ToolApprovalRequestEvent);
    expect(wire.requests[0]?.body).not.toHaveProperty("thinking");

    const thinking = { type: "enabled", budget_tokens: 2048 } as const;
    const restored = agent(wire.url, thinking);
    const resumed = restored.run(undefined, { ctx: Context.fromJSON(restored, saved) });
    expect(await approveAll(resumed)).toBe("2123 + 2321 = 4444.");
    expect(wire.refused).toEqual([]);
    expect(wire.requests[1]?.body).not.toHaveProperty("thinking"); // the turn began without thinking

    const { response } = await restored.run({ input: "Thanks!" }, { ctx: resumed.ctx });
    expect(response.content).toBe("You are welcome.");
    expect(wire.requests[2]?.body).toMatchObject({ thinking });
    expect(anthropicThinking(response)).toBe("I have what I need to answer.");
    expect(wire.refused).toEqual([]);
  });

  it("sends adaptive thinking as it is: the model may leave any reply without thinking, so the API does not ask for it", async () => {
    const wire = await startAnthropicServer({ turns: [{ calls: [{ name: "add", input: { x: 1, y: 2 } }] }, { text: "1 + 2 = 3." }] });
    server = wire;
    const saved = await saveOnEvent(agent(wire.url).run({ input: "1 + 2?" }), ToolApprovalRequestEvent);
    const restored = agent(wire.url, { type: "adaptive" });
    expect(await approveAll(restored.run(undefined, { ctx: Context.fromJSON(restored, saved) }))).toBe("1 + 2 = 3.");
    expect(wire.requests[1]?.body).toMatchObject({ thinking: { type: "adaptive" } });
    expect(wire.refused).toEqual([]);
  });

  it("keeps thinking on when the loop began with thinking, though its later replies had none", async () => {
    const { url, bodies } = await scripted(ANSWER_TURN);
    const llm = thinkingOn(url);
    const call = (id: string, blocks?: unknown[]): ChatMessage => ({
      role: "assistant",
      content: "",
      options: { toolCall: [{ id, name: "add", input: { x: 1, y: 2 } }], ...(blocks ? { anthropic: { content: blocks } } : {}) } as never,
    });
    const answer = (id: string): ChatMessage => ({ role: "user", content: "3", options: { toolResult: { id, result: "3", isError: false } } });
    // Without interleaved thinking Claude thinks once per turn: the second call has no thinking block.
    const first = call("toolu_1", [
      { type: "thinking", thinking: "Add twice.", signature: SIGNATURE },
      { type: "tool_use", id: "toolu_1" },
    ]);
    await llm.chat({ messages: [{ role: "user", content: "1 + 2, twice?" }, first, answer("toolu_1"), call("toolu_2"), answer("toolu_2")], tools: [add] });
    expect(bodies[0]).toMatchObject({ thinking: { type: "enabled", budget_tokens: 2048 } });
  });

  it("is refused by the test server as the API refuses it: the loop's first assistant message must start with thinking", async () => {
    const wire = await startAnthropicServer({ turns: [{ text: "3" }] });
    server = wire;
    const body = {
      model: "claude-sonnet-5-5",
      max_tokens: 4096,
      stream: true,
      thinking: { type: "enabled", budget_tokens: 2048 },
      messages: [
        { role: "user", content: "1 + 2?" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Adding." },
            { type: "tool_use", id: "toolu_1", name: "add", input: { x: 1, y: 2 } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "3" }] },
      ],
    };
    const response = await fetch(`${wire.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "test-key", "anthropic-version": "2023-06-01" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    expect(wire.refused[0]).toMatch(/^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `text`\./);
  });
});
