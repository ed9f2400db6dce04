/**
 * Gemini's streamGenerateContent as the API sends it: function calls without ids, several in
 * one chunk or across chunks, a reply stopped for its token limit or for safety, a stream cut.
 */
import type { ServerResponse } from "node:http";
import type { ToolCall } from "@llamaindex/core/llms";
import { afterEach, describe, expect, it } from "vitest";
import { Gemini, LLMReplyStoppedError, LLMStreamError, retryAfter } from "../../src/llm/gemini.ts";
import { add } from "../../workflows/tools/calculator.ts";
import { rawServer } from "../support/raw-server.ts";

let server: { url: string; close: () => Promise<void> } | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const usage = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
const chunk = (parts: Record<string, unknown>[], finishReason?: string) =>
  `data: ${JSON.stringify({ candidates: [{ content: { parts, role: "model" }, index: 0, ...(finishReason ? { finishReason } : {}) }], usageMetadata: usage, modelVersion: "gemini-2.5-flash" })}\r\n\r\n`;

function streaming(...pieces: string[]) {
  return (res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const piece of pieces) res.write(piece);
    res.end();
  };
}

async function reply(url: string, maxTokens?: number): Promise<{ content: string; calls: ToolCall[] }> {
  const llm = new Gemini({ apiKey: "test-key", baseURL: url, ...(maxTokens ? { maxTokens } : {}) });
  const { message } = await llm.chat({ messages: [{ role: "user", content: "go" }], tools: [add] });
  return { content: String(message.content), calls: (message.options as { toolCall?: ToolCall[] } | undefined)?.toolCall ?? [] };
}

describe("Gemini streaming, as the API sends it", () => {
  it("keeps every functionCall part, without ids, in one chunk and across chunks, each with an id of its own", async () => {
    server = await rawServer(
      streaming(
        chunk([{ text: "Adding." }]),
        chunk([{ functionCall: { name: "add", args: { x: 1, y: 2 } }, thoughtSignature: "c2ln" }, { functionCall: { name: "add", args: { x: 3, y: 4 } } }]),
        chunk([{ functionCall: { name: "now" } }], "STOP"),
      ),
    );
    const { content, calls } = await reply(server.url);
    expect(content).toBe("Adding.");
    expect(calls.map(({ name, input }) => ({ name, input }))).toEqual([
      { name: "add", input: { x: 1, y: 2 } },
      { name: "add", input: { x: 3, y: 4 } },
      { name: "now", input: {} },
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(3);
    expect(calls[0]?.id).toMatch(/~sig~c2ln$/); // the signature goes back with its call
  });

  it("gives text cut by MAX_TOKENS as the answer, as other providers' length limit", async () => {
    server = await rawServer(streaming(chunk([{ text: "The total" }]), chunk([{ text: " is" }], "MAX_TOKENS")));
    expect(await reply(server.url)).toEqual({ content: "The total is", calls: [] });
  });

  it("fails with LLMReplyStoppedError when MAX_TOKENS stops a reply before it said anything (all spent thinking)", async () => {
    server = await rawServer(streaming(chunk([{ text: "Let me think", thought: true }]), chunk([], "MAX_TOKENS")));
    const stopped = reply(server.url, 256);
    await expect(stopped).rejects.toBeInstanceOf(LLMReplyStoppedError);
    await expect(stopped).rejects.toMatchObject({ reason: 'finishReason "MAX_TOKENS"' });
    await expect(stopped).rejects.toThrow(
      `Gemini's reply reached its token limit (finishReason "MAX_TOKENS") before the model said anything: a thinking model can spend every token thinking. Raise maxTokens (now 256).`,
    );
  });

  it("fails with LLMReplyStoppedError, saying why, when Gemini stops a reply (SAFETY, RECITATION, MALFORMED_FUNCTION_CALL), not with an empty answer", async () => {
    const cases: [string, string][] = [
      [
        "SAFETY",
        `Gemini stopped the reply (finishReason "SAFETY"): its safety filters stopped the reply. Rephrase the request, or leave out what the filters object to.`,
      ],
      ["RECITATION", `Gemini stopped the reply (finishReason "RECITATION"): the reply repeated a source too closely. Ask for the answer in other words.`],
      [
        "MALFORMED_FUNCTION_CALL",
        `Gemini stopped the reply (finishReason "MALFORMED_FUNCTION_CALL"): the model wrote a function call Gemini could not read. Try again; tools with simpler parameters help.`,
      ],
    ];
    for (const [finishReason, message] of cases) {
      // As the API sends it: the last candidate has a finishReason and no content.
      server = await rawServer(
        streaming(chunk([{ text: "Sure: " }]), `data: ${JSON.stringify({ candidates: [{ finishReason, index: 0 }], usageMetadata: usage })}\r\n\r\n`),
      );
      const stopped = reply(server.url);
      await expect(stopped).rejects.toBeInstanceOf(LLMReplyStoppedError);
      await expect(stopped).rejects.toThrow(message);
      await server.close();
      server = undefined;
    }
  });

  it("fails with LLMReplyStoppedError when Gemini refuses the prompt (promptFeedback.blockReason)", async () => {
    server = await rawServer(streaming(`data: ${JSON.stringify({ promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: usage })}\r\n\r\n`));
    await expect(reply(server.url)).rejects.toThrow(
      `Gemini refused the prompt (blockReason "PROHIBITED_CONTENT"): its filters blocked the conversation before the model answered. Rephrase the request, or leave out what the filters object to.`,
    );
  });

  it("fails with the SDK's ApiError and its status when the API sends an error mid-stream", async () => {
    server = await rawServer(
      streaming(
        chunk([{ text: "The total" }]),
        `data: ${JSON.stringify({ error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } })}\r\n\r\n`,
      ),
    );
    const failed = reply(server.url);
    await expect(failed).rejects.toMatchObject({ name: "ApiError", status: 503 });
    await expect(failed).rejects.toThrow("The model is overloaded. Please try again later.");
  });

  it("keeps how long Google asked to wait on the ApiError: Retry-After on a 429 or 503, or RetryInfo's retryDelay in the body", async () => {
    const quota = {
      error: {
        code: 429,
        message: "You exceeded your current quota, please check your plan and billing details.",
        status: "RESOURCE_EXHAUSTED",
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            violations: [{ quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests" }],
          },
          { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "37s" },
        ],
      },
    };
    const overloaded = { error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } };
    const answers: [number, Record<string, string>, unknown, number][] = [
      [429, {}, quota, 37],
      [503, { "retry-after": "12" }, overloaded, 12],
      [429, { "retry-after": "5" }, quota, 5], // the header first, as the other SDKs read it
    ];
    for (const [status, headers, body, seconds] of answers) {
      server = await rawServer((res) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(body));
      });
      const error = await reply(server.url).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "ApiError", status, retryAfter: seconds });
      expect(retryAfter(error)).toBe(seconds);
      if (headers["retry-after"]) expect((error as { headers: Headers }).headers.get("retry-after")).toBe(headers["retry-after"]);
      await server.close();
      server = undefined;
    }
    // In an error sent mid-stream, the body says it.
    server = await rawServer(streaming(`data: ${JSON.stringify({ ...quota })}\r\n\r\n`));
    expect(retryAfter(await reply(server.url).catch((e: unknown) => e))).toBe(37);
  });

  it("fails with LLMStreamError when the stream ends before its finishReason, not with its text as the whole answer", async () => {
    server = await rawServer(streaming(chunk([{ text: "The total" }])));
    const cut = reply(server.url);
    await expect(cut).rejects.toBeInstanceOf(LLMStreamError);
    await expect(cut).rejects.toMatchObject({ baseURL: server.url, problem: "broken-off" });
    await expect(cut).rejects.toThrow(
      `The server at ${server.url} broke off its reply: the stream ended before a chunk with its finishReason. Try again; if it happens again, check the server and the network between.`,
    );
  });

  it('says the server broke off its reply when the connection drops mid-stream, not fetch\'s bare "terminated"', async () => {
    server = await rawServer((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk([{ text: "The total" }]), () => res.socket?.destroy());
    });
    const cut = reply(server.url);
    await expect(cut).rejects.toMatchObject({ problem: "broken-off", cause: expect.any(TypeError) });
    await expect(cut).rejects.toThrow(
      new RegExp(`^The server at ${server.url} broke off its reply: .+\\. Try again; if it happens again, check the server and the network between\\.$`),
    );
  });
});
