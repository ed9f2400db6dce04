/**
 * Ollama's /api/chat as the server sends it: NDJSON lines split anywhere, tool calls whole,
 * a reply cut by its token limit, an error mid-stream, a stream cut, a key never shown.
 */
import type { ServerResponse } from "node:http";
import { inspect } from "node:util";
import type { ToolCall } from "@llamaindex/core/llms";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LLMStreamError, Ollama } from "../../src/llm/ollama.ts";
import { add } from "../../workflows/tools/calculator.ts";
import { rawServer } from "../support/raw-server.ts";

let server: { url: string; close: () => Promise<void> } | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const line = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ model: "llama3.1:8b", created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", content: "", ...message }, done: false, ...extra })}\n`;
const last = (doneReason: string) => line({}, { done: true, done_reason: doneReason, prompt_eval_count: 10, eval_count: 5 });

function streaming(...pieces: (string | Buffer)[]) {
  return (res: ServerResponse) => {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    for (const piece of pieces) res.write(piece);
    res.end();
  };
}

async function reply(url: string, apiKey?: string): Promise<{ content: string; calls: ToolCall[] }> {
  const llm = new Ollama({ host: url, ...(apiKey ? { apiKey } : {}) });
  const { message } = await llm.chat({ messages: [{ role: "user", content: "go" }], tools: [add] });
  return { content: String(message.content), calls: (message.options as { toolCall?: ToolCall[] } | undefined)?.toolCall ?? [] };
}

describe("Ollama streaming, as the server sends it", () => {
  it("reads lines split inside a UTF-8 character and inside a line, with the turn's tool calls", async () => {
    const body = Buffer.from(
      line({ content: "Café " }) + line({ content: "✓" }) + line({ tool_calls: [{ function: { name: "add", arguments: { x: 1, y: 2 } } }] }) + last("stop"),
    );
    const cut = body.indexOf(Buffer.from("é")) + 1;
    const cut2 = body.indexOf(Buffer.from("✓")) + 2;
    server = await rawServer(streaming(body.subarray(0, cut), body.subarray(cut, cut2), body.subarray(cut2)));
    const { content, calls } = await reply(server.url);
    expect({ content, calls: calls.map(({ name, input }) => ({ name, input })) }).toEqual({
      content: "Café ✓",
      calls: [{ name: "add", input: { x: 1, y: 2 } }],
    });
  });

  it('gives text cut by the token limit (done_reason "length") as the answer, as other providers\' length limit', async () => {
    server = await rawServer(streaming(line({ content: "The total" }) + last("length")));
    expect(await reply(server.url)).toEqual({ content: "The total", calls: [] });
  });

  it("fails with the server's error line mid-stream", async () => {
    server = await rawServer(
      streaming(line({ content: "The total" }) + `${JSON.stringify({ error: "an error was encountered while running the model: unexpected EOF" })}\n`),
    );
    await expect(reply(server.url)).rejects.toThrow("an error was encountered while running the model: unexpected EOF");
  });

  it("fails with LLMStreamError naming the server when the stream ends before its done line", async () => {
    server = await rawServer(streaming(line({ content: "The total" })));
    const cut = reply(server.url);
    await expect(cut).rejects.toBeInstanceOf(LLMStreamError);
    await expect(cut).rejects.toMatchObject({ baseURL: server.url, problem: "broken-off" });
    await expect(cut).rejects.toThrow(
      `The server at ${server.url} broke off its reply: the stream ended before its last line (done: true). Try again; if it happens again, check the server and the network between.`,
    );
  });

  it('says the server broke off its reply when the connection drops mid-stream, not fetch\'s bare "terminated"', async () => {
    server = await rawServer((res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write(line({ content: "The total" }), () => res.socket?.destroy());
    });
    const cut = reply(server.url);
    await expect(cut).rejects.toMatchObject({ problem: "broken-off", cause: expect.any(TypeError) });
    await expect(cut).rejects.toThrow(
      new RegExp(`^The server at ${server.url} broke off its reply: .+\\. Try again; if it happens again, check the server and the network between\\.$`),
    );
  });

  it("never shows the API key, even when the server repeats it in an error", async () => {
    const key = "ollama-secret-1234567890";
    server = await rawServer((res, req) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `unauthorized: ${String(req.headers.authorization)}` }));
    });
    const error = (await reply(server.url, key).catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ status_code: 401, message: "unauthorized: Bearer ***" });
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)} ${inspect(error, { depth: 10 })}`).not.toContain(key);
  });

  it("prints nothing to the console: not for an error page, an error body that is not JSON, blank lines, or a line that is not JSON", async () => {
    const printed = (["log", "info", "warn", "error", "debug"] as const).map((method) => vi.spyOn(console, method).mockImplementation(() => undefined));
    try {
      server = await rawServer((res) => {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("404 page not found");
      });
      await expect(reply(server.url)).rejects.toMatchObject({ status_code: 404, message: "404 page not found" });
      await server.close();
      server = await rawServer((res) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end("{not json");
      });
      await expect(reply(server.url)).rejects.toMatchObject({ status_code: 500, message: "Error 500: Internal Server Error" });
      await server.close();
      server = await rawServer(streaming(line({ content: "The total" }), "\n\n", line({ content: " is 3." }), "\n", last("stop")));
      expect(await reply(server.url)).toEqual({ content: "The total is 3.", calls: [] });
      await server.close();
      server = await rawServer(streaming(line({ content: "The total" }), "<html>proxy timeout</html>\n", last("stop")));
      const broken = reply(server.url);
      await expect(broken).rejects.toBeInstanceOf(LLMStreamError);
      await expect(broken).rejects.toMatchObject({ problem: "not-json", baseURL: server.url });
      await expect(broken).rejects.toThrow(
        `The server at ${server.url} sent a line that is not JSON: "<html>proxy timeout</html>". Is it Ollama's API? Check the host (OLLAMA_HOST).`,
      );
      expect(printed.flatMap((spy) => spy.mock.calls)).toEqual([]);
    } finally {
      for (const spy of printed) spy.mockRestore();
    }
  });

  it("fails with the status and the body of a proxy's HTML error page", async () => {
    server = await rawServer((res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html><body><h1>502 Bad Gateway</h1></body></html>");
    });
    await expect(reply(server.url)).rejects.toMatchObject({ status_code: 502, message: "<html><body><h1>502 Bad Gateway</h1></body></html>" });
  });
});
