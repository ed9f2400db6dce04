import { Settings } from "@llamaindex/core/global";
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
import { tool } from "@llamaindex/core/tools";
import { OpenAI as UpstreamOpenAI } from "@llamaindex/openai";
import { AsyncLocalStorage } from "node:async_hooks";
import { createServer } from "node:http";
import type { ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigurationError, StepflowError, WorkflowCancelledByUser } from "../../src/index.ts";
import { LLMReplyCutOffError, LLMReplyStoppedError, LLMStreamError, OpenAI, ToolCallAccumulator, describeOpenAIError } from "../../src/llm/openai.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { add, multiply } from "../../workflows/tools/calculator.ts";
import { calculatorTurns, startOpenAIServer } from "../support/openai-sse-server.ts";
import type { OpenAIServer, ServerTurn, StreamVariant } from "../support/openai-sse-server.ts";
import { gate } from "../support/gate.ts";
import { rawServer as rawServerAt } from "../support/raw-server.ts";

const variants: StreamVariant[] = ["openai", "repeat-id", "whole-call", "two-calls-one-delta"];
let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const openai = (baseURL: string, model = "gpt-4o-mini") => new OpenAI({ model, baseURL, apiKey: "sk-test-key", maxRetries: 0 });

/** Every tool call an LLM streams for one request, as the agent collects them. */
async function streamedCalls(llm: OpenAI | UpstreamOpenAI, tools: BaseTool[]): Promise<ToolCall[]> {
  const calls = new Map<string, ToolCall>();
  for await (const chunk of await llm.chat({ messages: [{ role: "user", content: "go" }], tools, stream: true })) {
    for (const call of (chunk.options as { toolCall?: ToolCall[] } | undefined)?.toolCall ?? []) calls.set(call.id, call);
  }
  return [...calls.values()];
}

const clock = tool({ name: "now", description: "The current time.", parameters: z.object({}), execute: () => "12:00" });
const parallelTurn: ServerTurn = {
  toolCalls: [
    { id: "call_a", name: "add", arguments: { x: 1, y: 2 } },
    { id: "call_m", name: "multiply", arguments: { x: 3, y: 4 } },
  ],
};

describe.each(variants)("the agent over HTTP, %s-style tool-call streaming", (variant) => {
  it("computes (2123 + 2321) * 312 and sends the OpenAI wire format", async () => {
    server = await startOpenAIServer({ turns: calculatorTurns(), variant });
    const agent = new FunctionCallingAgent({ llm: openai(server.baseURL), tools: [add, multiply] });
    const { response } = await agent.run({ input: "What is (2123 + 2321) * 312?" });
    expect(response.content).toBe("(2123 + 2321) * 312 = 1386528.");

    const [first, , third] = server.requests.map((r) => r.body);
    expect(first?.stream).toBe(true);
    expect(first?.tools?.map((t) => t.function.name)).toEqual(["add", "multiply"]);
    expect(first?.tools?.[0]?.function.parameters).toMatchObject({
      type: "object",
      properties: { x: { type: "number", description: "The first number." }, y: { type: "number", description: "The second number." } },
      required: ["x", "y"],
    });
    expect(third?.messages).toEqual([
      { role: "user", content: "What is (2123 + 2321) * 312?" },
      { role: "assistant", content: "", tool_calls: [{ id: "call_add", type: "function", function: { name: "add", arguments: '{"x":2123,"y":2321}' } }] },
      { role: "tool", tool_call_id: "call_add", content: "4444" },
      { role: "assistant", content: "", tool_calls: [{ id: "call_mul", type: "function", function: { name: "multiply", arguments: '{"x":4444,"y":312}' } }] },
      { role: "tool", tool_call_id: "call_mul", content: "1386528" },
    ]);
  });

  it("keeps both of two calls made in one turn, in order", async () => {
    server = await startOpenAIServer({ turns: [parallelTurn], variant });
    expect(await streamedCalls(openai(server.baseURL), [add, multiply])).toEqual([
      { id: "call_a", name: "add", input: { x: 1, y: 2 } },
      { id: "call_m", name: "multiply", input: { x: 3, y: 4 } },
    ]);
  });

  it('reads "" arguments of a tool without parameters as {}', async () => {
    server = await startOpenAIServer({ turns: [{ toolCalls: [{ id: "call_t", name: "now", arguments: "" }] }, { text: "It is 12:00." }], variant });
    const { response, sources } = await new FunctionCallingAgent({ llm: openai(server.baseURL), tools: [clock] }).run({ input: "Time?" });
    expect(sources[0]).toMatchObject({ toolName: "now", input: {}, output: "12:00", isError: false });
    expect(response.content).toBe("It is 12:00.");
  });

  it("runs both of two parallel calls a server gives one id (DeepSeek, GLM), each answered under an id of its own", async () => {
    const sameId: ServerTurn = {
      toolCalls: [
        { id: "call_0", name: "add", arguments: { x: 1, y: 2 } },
        { id: "call_0", name: "multiply", arguments: { x: 3, y: 4 } },
      ],
    };
    server = await startOpenAIServer({ turns: [sameId, { text: "3 and 12." }], variant });
    const { sources } = await new FunctionCallingAgent({ llm: openai(server.baseURL), tools: [add, multiply] }).run({ input: "1+2, 3*4?" });
    expect(sources.map((s) => [s.toolCallId, s.toolName, s.content])).toEqual([
      ["call_0", "add", "3"],
      ["call_0_2", "multiply", "12"],
    ]);
    const sent = server.requests[1]?.body.messages ?? [];
    expect(sent.flatMap((m) => m.tool_calls?.map((c) => [c.id, c.function.arguments]) ?? [])).toEqual([
      ["call_0", '{"x":1,"y":2}'],
      ["call_0_2", '{"x":3,"y":4}'],
    ]);
    expect(sent.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["call_0", "call_0_2"]);
  });
});

describe("@llamaindex/openai as published (why src/llm/openai.ts overrides streamChat)", () => {
  const upstream = (baseURL: string) => new UpstreamOpenAI({ model: "gpt-4o-mini", baseURL, apiKey: "sk-test-key", maxRetries: 0 });

  it("throws a SyntaxError when the server repeats the id on every chunk", async () => {
    server = await startOpenAIServer({ turns: [{ toolCalls: [{ id: "call_add", name: "add", arguments: { x: 2123, y: 2321 } }] }], variant: "repeat-id" });
    await expect(streamedCalls(upstream(server.baseURL), [add])).rejects.toThrow(SyntaxError);
  });

  it('throws on "" arguments', async () => {
    server = await startOpenAIServer({ turns: [{ toolCalls: [{ id: "call_t", name: "now", arguments: "" }] }] });
    await expect(streamedCalls(upstream(server.baseURL), [clock])).rejects.toThrow(SyntaxError);
  });

  it("drops the second of two calls sent in one delta", async () => {
    server = await startOpenAIServer({ turns: [parallelTurn], variant: "two-calls-one-delta" });
    expect((await streamedCalls(upstream(server.baseURL), [add, multiply])).map((c) => c.name)).toEqual(["add"]);
  });
});

describe("OpenAI streaming requests", () => {
  it("sends the same request body as @llamaindex/openai, asking for the token usage", async () => {
    server = await startOpenAIServer({ turns: () => ({ text: "ok" }) });
    const messages = [
      { role: "system" as const, content: "Be brief." },
      { role: "user" as const, content: "1 + 2?" },
      { role: "assistant" as const, content: "", options: { toolCall: [{ id: "c1", name: "add", input: { x: 1, y: 2 } }] } },
      { role: "user" as const, content: "3", options: { toolResult: { id: "c1", result: "3", isError: false } } },
    ];
    for (const llm of [
      new UpstreamOpenAI({ model: "gpt-4o-mini", baseURL: server.baseURL, apiKey: "k", maxRetries: 0, maxTokens: 100, additionalChatOptions: { seed: 7 } }),
      new OpenAI({ model: "gpt-4o-mini", baseURL: server.baseURL, apiKey: "k", maxRetries: 0, maxTokens: 100, additionalChatOptions: { seed: 7 } }),
    ]) {
      for await (const _chunk of await llm.chat({ messages, tools: [add, multiply], stream: true, additionalChatOptions: { user: "u1" } }));
      for await (const _chunk of await llm.chat({ messages, stream: true }));
    }
    const [upstreamWithTools, upstreamBare, oursWithTools, oursBare] = server.requests.map((r) => r.body);
    expect(oursWithTools).toEqual({ ...upstreamWithTools, stream_options: { include_usage: true } });
    expect(oursBare).toEqual({ ...upstreamBare, stream_options: { include_usage: true } });
    expect(oursBare).not.toHaveProperty("tools");
  });

  it("dispatches LlamaIndex's llm-start, llm-stream and llm-end events", async () => {
    server = await startOpenAIServer({ turns: [{ text: ["Hel", "lo"] }] });
    const seen: string[] = [];
    const onStart = (e: { detail: { messages: unknown[] } }) => seen.push(`start ${e.detail.messages.length}`);
    const onStream = (e: { detail: { chunk: { delta: string } } }) => seen.push(`stream ${e.detail.chunk.delta}`);
    const onEnd = (e: { detail: { response: { message: { content: unknown } } } }) => seen.push(`end ${String(e.detail.response.message.content)}`);
    Settings.callbackManager.on("llm-start", onStart).on("llm-stream", onStream).on("llm-end", onEnd);
    try {
      for await (const _chunk of await openai(server.baseURL).chat({ messages: [{ role: "user", content: "Hi" }], stream: true }));
      await Promise.resolve(); // callbacks are dispatched in microtasks
      // The last chunk, without text, carries the usage (stream_options.include_usage).
      expect(seen).toEqual(["start 1", "stream Hel", "stream lo", "stream ", "end Hello"]);
    } finally {
      Settings.callbackManager.off("llm-start", onStart).off("llm-stream", onStream).off("llm-end", onEnd);
    }
  });

  it("runs an agent turn without AsyncLocalStorage.run, which would switch on promise hooks for the whole process", async () => {
    server = await startOpenAIServer({ turns: calculatorTurns() });
    const agent = new FunctionCallingAgent({ llm: openai(server.baseURL), tools: [add, multiply] });
    const run = AsyncLocalStorage.prototype.run;
    const entered: string[] = [];
    AsyncLocalStorage.prototype.run = function (this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof run>) {
      entered.push(new Error().stack ?? "");
      return run.apply(this, args);
    } as typeof run;
    try {
      expect(String((await agent.run({ input: "What is (2123 + 2321) * 312?" })).response.content)).toContain("1386528");
    } finally {
      AsyncLocalStorage.prototype.run = run;
    }
    expect(entered).toEqual([]);
  });
});

describe("ToolCallAccumulator", () => {
  it("keeps arguments that are not a JSON object as text, for the tool runner to report", () => {
    const calls = new ToolCallAccumulator();
    calls.add([{ index: 0, id: "c1", function: { name: "add", arguments: '{"x": 1, "y":' } }]);
    expect(calls.finish()).toEqual([{ id: "c1", name: "add", input: '{"x": 1, "y":' }]);
  });

  it("starts a new call when a server reuses index 0 with a new id", () => {
    const calls = new ToolCallAccumulator();
    calls.add([{ index: 0, id: "c1", function: { name: "add", arguments: '{"x":1,"y":2}' } }]);
    calls.add([{ index: 0, id: "c2", function: { name: "multiply", arguments: '{"x":3,' } }]);
    calls.add([{ index: 0, function: { arguments: '"y":4}' } }]);
    expect(calls.finish()).toEqual([
      { id: "c1", name: "add", input: { x: 1, y: 2 } },
      { id: "c2", name: "multiply", input: { x: 3, y: 4 } },
    ]);
  });

  it("names calls that came without an id", () => {
    const calls = new ToolCallAccumulator();
    calls.add([{ index: 0, function: { name: "now", arguments: "" } }]);
    expect(calls.finish()).toEqual([{ id: "call_0", name: "now", input: {} }]);
  });
});

describe("cancelling a run", () => {
  it("closes the LLM request that was waiting for the server", async () => {
    const requestArrived = gate();
    const requestClosed = gate();
    const silent = createServer((req) => {
      requestArrived.open();
      req.resume();
      req.socket.on("close", () => requestClosed.open()); // the client hung up
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const baseURL = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
      const handler = new FunctionCallingAgent({ llm: openai(baseURL), tools: [add] }).run({ input: "Hello?" });
      await requestArrived.promise;
      handler.cancel();
      await expect(handler).rejects.toThrow(WorkflowCancelledByUser);
      await requestClosed.promise; // hangs (test timeout) if the request stayed open
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

/** A server that answers every request with `respond`, for stream shapes the scripted server does not make. */
/** `rawServer`, at the OpenAI-style base URL (`…/v1`) the SDK takes. */
async function rawServer(respond: (res: ServerResponse) => void): Promise<{ baseURL: string; close: () => Promise<void> }> {
  const server = await rawServerAt(respond);
  return { baseURL: `${server.url}/v1`, close: server.close };
}

const SSE_HEADERS = { "content-type": "text/event-stream" };
const textChunk = (content: string) =>
  JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: null }] });
async function streamedText(llm: OpenAI | UpstreamOpenAI): Promise<string> {
  let text = "";
  for await (const chunk of await llm.chat({ messages: [{ role: "user", content: "go" }], stream: true })) text += chunk.delta;
  return text;
}

describe("reading the event stream", () => {
  it("reads CRLF line ends, keep-alive comments, multi-line data and an event split across writes", async () => {
    const second = Buffer.from(`data: ${textChunk("lo ✓")}\r\n\r\n`);
    const cut = second.indexOf("✓") + 1; // inside the three bytes of ✓
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write(": OPENROUTER PROCESSING\r\n\r\n");
      const first = textChunk("Hel");
      const split = first.indexOf('"choices"');
      // Two data lines (one with no space after the colon), mixed line ends.
      res.write(`event: message\r\ndata: ${first.slice(0, split)}\ndata:${first.slice(split)}\r\n\r\n`);
      res.write(second.subarray(0, cut));
      res.write(second.subarray(cut));
      res.end("data: [DONE]\r\n\r\n");
    });
    try {
      // Multi-line data is joined with "\n", which JSON reads as white space.
      expect(await streamedText(openai(raw.baseURL))).toBe("Hello ✓");
      expect(await streamedText(new UpstreamOpenAI({ model: "gpt-4o-mini", baseURL: raw.baseURL, apiKey: "k", maxRetries: 0 }))).toBe("Hello ✓");
    } finally {
      await raw.close();
    }
  });

  it("throws an error the server sends mid-stream as the SDK does, as its APIError", async () => {
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end(
        `data: ${textChunk("Hel")}\n\ndata: ${JSON.stringify({ error: { message: "The model is overloaded.", type: "server_error", code: "overloaded" } })}\n\n`,
      );
    });
    try {
      const ours = await streamedText(openai(raw.baseURL)).catch((e: unknown) => e);
      const upstream = await streamedText(new UpstreamOpenAI({ model: "gpt-4o-mini", baseURL: raw.baseURL, apiKey: "k", maxRetries: 0 })).catch(
        (e: unknown) => e,
      );
      expect(ours).toBeInstanceOf(Error);
      expect((ours as Error).constructor.name).toBe("APIError");
      expect((ours as Error).message).toBe("The model is overloaded.");
      expect({ message: (ours as Error).message, code: (ours as { code?: unknown }).code }).toEqual({
        message: (upstream as Error).message,
        code: (upstream as { code?: unknown }).code,
      });
    } finally {
      await raw.close();
    }
  });

  it("names the server when a stream event is not JSON", async () => {
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end("data: <html>Bad gateway</html>\n\n");
    });
    try {
      const failed = streamedText(openai(raw.baseURL));
      await expect(failed).rejects.toBeInstanceOf(LLMStreamError);
      await expect(failed).rejects.toMatchObject({ baseURL: raw.baseURL, problem: "not-json", cause: expect.any(SyntaxError) });
      await expect(failed).rejects.toThrow(
        `The server at ${raw.baseURL} sent a stream event that is not JSON: "<html>Bad gateway</html>". Is it an OpenAI-compatible chat completions API? Check the base URL (OPENAI_BASE_URL).`,
      );
    } finally {
      await raw.close();
    }
  });

  it("fails the run with LLMReplyCutOffError when the token limit cuts a tool call's arguments off", async () => {
    const call = (args: string, finish: string | null) =>
      JSON.stringify({
        id: "c",
        object: "chat.completion.chunk",
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "add", arguments: args } }] },
            finish_reason: finish,
          },
        ],
      });
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end(`data: ${call('{"x": 2123, "y"', null)}\n\ndata: ${call("", "length")}\n\ndata: [DONE]\n\n`);
    });
    // Cut off right after the name: no arguments at all, which would otherwise run the tool with {}.
    const nameOnly = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end(`data: ${call("", "length")}\n\ndata: [DONE]\n\n`);
    });
    try {
      await expect(new FunctionCallingAgent({ llm: openai(nameOnly.baseURL), tools: [add] }).run({ input: "add" })).rejects.toThrow(LLMReplyCutOffError);
      const llm = new OpenAI({ model: "gpt-4o-mini", baseURL: raw.baseURL, apiKey: "k", maxRetries: 0, maxTokens: 12 });
      const run = new FunctionCallingAgent({ llm, tools: [add] }).run({ input: "What is 2123 + 2321?" });
      await expect(run).rejects.toThrow(LLMReplyCutOffError);
      await expect(run).rejects.toMatchObject({ tool: "add", maxTokens: 12 });
      await expect(run).rejects.toThrow(
        `The model's reply was cut off by its token limit (finish_reason "length") in the middle of a call to tool add, so its arguments are incomplete. Raise maxTokens (now 12) or ask for less.`,
      );
    } finally {
      await raw.close();
      await nameOnly.close();
    }
  });

  it('says the server broke off its reply when the connection drops mid-stream, not fetch\'s bare "terminated"', async () => {
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write(`data: ${textChunk("Hel")}\n\n`, () => res.socket?.destroy());
    });
    try {
      const deltas: string[] = [];
      const reading = (async () => {
        for await (const chunk of await openai(raw.baseURL).chat({ messages: [{ role: "user", content: "go" }], stream: true })) deltas.push(chunk.delta);
      })();
      await expect(reading).rejects.toThrow(
        new RegExp(`^The server at ${raw.baseURL} broke off its reply: .+\\. Try again; if it happens again, check the server and the network between\\.$`),
      );
      expect(deltas).toEqual(["Hel"]);
    } finally {
      await raw.close();
    }
  });

  it("fails with LLMStreamError when the body ends before a finish_reason or [DONE], not with its text as the whole answer", async () => {
    const cut = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end(`: keep-alive\n\ndata: ${textChunk("The total is 13")}\n\n`);
    });
    // A server that sends no [DONE] after its finish_reason has still answered in whole.
    const noDone = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end(
        `data: ${textChunk("Done.")}\n\ndata: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`,
      );
    });
    try {
      const failed = streamedText(openai(cut.baseURL));
      await expect(failed).rejects.toBeInstanceOf(LLMStreamError);
      await expect(failed).rejects.toMatchObject({ baseURL: cut.baseURL, problem: "broken-off" });
      await expect(failed).rejects.toThrow(
        `The server at ${cut.baseURL} broke off its reply: the stream ended before a finish_reason or [DONE]. Try again; if it happens again, check the server and the network between.`,
      );
      expect(await streamedText(openai(noDone.baseURL))).toBe("Done.");
    } finally {
      await cut.close();
      await noDone.close();
    }
  });

  it("gathers calls whose index skips and interleaves, with the id only on each call's first chunk and arguments split inside a UTF-8 character", async () => {
    const delta = (toolCall: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { tool_calls: [toolCall] }, finish_reason: finish }] })}\n\n`;
    const body = Buffer.from(
      delta({ index: 0, id: "call_a", type: "function", function: { name: "add", arguments: '{"note":"caf' } }) +
        delta({ index: 2, id: "call_b", type: "function", function: { name: "multiply", arguments: '{"x":3,' } }) +
        delta({ index: 0, function: { arguments: 'é","x":1,"y":2}' } }) +
        delta({ index: 2, function: { arguments: '"y":4}' } }, "tool_calls") +
        "data: [DONE]\n\n",
    );
    const cut = body.indexOf(Buffer.from("é")) + 1; // between the two bytes of é
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write(body.subarray(0, cut));
      res.end(body.subarray(cut));
    });
    try {
      expect(await streamedCalls(openai(raw.baseURL), [add, multiply])).toEqual([
        { id: "call_a", name: "add", input: { note: "café", x: 1, y: 2 } },
        { id: "call_b", name: "multiply", input: { x: 3, y: 4 } },
      ]);
    } finally {
      await raw.close();
    }
  });

  it('fails with LLMReplyStoppedError when a content filter stops the reply (finish_reason "content_filter"), not with its start as the answer', async () => {
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end(
        `data: ${textChunk("Here is how")}\n\ndata: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "content_filter" }] })}\n\ndata: [DONE]\n\n`,
      );
    });
    try {
      const stopped = streamedText(openai(raw.baseURL));
      await expect(stopped).rejects.toBeInstanceOf(LLMReplyStoppedError);
      await expect(stopped).rejects.toMatchObject({ reason: 'finish_reason "content_filter"' });
      await expect(stopped).rejects.toThrow(
        `The server at ${raw.baseURL} stopped the reply (finish_reason "content_filter"): its content filter objected to it. Rephrase the request, or leave out what the filter objects to.`,
      );
    } finally {
      await raw.close();
    }
  });

  it("reads a custom fetch's Node-stream body (node-fetch) and a wrapped client's plain promise of the SDK's stream", async () => {
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end(`data: ${textChunk("Hi")}\n\ndata: [DONE]\n\n`);
    });
    try {
      // node-fetch, as people plug it in for proxies, answers with a Node Readable body.
      const nodeFetch = async (url: string | URL | Request, init?: RequestInit) => {
        const response = await fetch(url, init);
        const { ok, status, statusText, headers } = response;
        return {
          ok,
          status,
          statusText,
          headers,
          url: response.url,
          body: response.body && Readable.fromWeb(response.body as never),
          text: () => response.text(),
          json: () => response.json(),
        } as unknown as Response;
      };
      expect(
        await streamedText(new OpenAI({ model: "m", baseURL: raw.baseURL, apiKey: "k", maxRetries: 0, additionalSessionOptions: { fetch: nodeFetch } })),
      ).toBe("Hi");
      // A tracing wrapper around the SDK client's create(): a plain promise, no asResponse().
      const session = await openai(raw.baseURL).session;
      const create = session.chat.completions.create.bind(session.chat.completions);
      Object.assign(session.chat.completions, { create: (...args: Parameters<typeof create>) => Promise.resolve(create(...args)) });
      expect(await streamedText(new OpenAI({ model: "m", session }))).toBe("Hi");
    } finally {
      await raw.close();
    }
  });

  it("takes a stream of only [DONE] as an empty reply, not as a server that does not stream", async () => {
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end("data: [DONE]\n\n");
    });
    try {
      expect(await streamedText(openai(raw.baseURL))).toBe("");
    } finally {
      await raw.close();
    }
  });

  it("ends an aborted stream with llm-end, holding what came before the abort", async () => {
    const aborted = new AbortController();
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write(`data: ${textChunk("Hel")}\n\n`); // and the response stays open
    });
    const ends: unknown[] = [];
    const onEnd = (e: { detail: { response: { message: unknown } } }) => ends.push(e.detail.response.message);
    Settings.callbackManager.on("llm-end", onEnd);
    try {
      const deltas: string[] = [];
      const llm = openai(raw.baseURL);
      for await (const chunk of await llm.chat({
        messages: [{ role: "user", content: "go" }],
        stream: true,
        additionalChatOptions: { signal: aborted.signal } as never,
      })) {
        deltas.push(chunk.delta);
        aborted.abort();
      }
      await Promise.resolve(); // callbacks are dispatched in microtasks
      expect(deltas).toEqual(["Hel"]);
      expect(ends).toEqual([{ role: "assistant", content: "Hel", options: {} }]);
    } finally {
      Settings.callbackManager.off("llm-end", onEnd);
      await raw.close();
    }
  });

  it("closes the request when the caller stops reading before the stream ends", async () => {
    const requestClosed = gate();
    const raw = await rawServer((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write(`data: ${textChunk("first")}\n\n`); // and the response stays open
      res.socket?.on("close", () => requestClosed.open());
    });
    try {
      for await (const chunk of await openai(raw.baseURL).chat({ messages: [{ role: "user", content: "go" }], stream: true })) {
        expect(chunk.delta).toBe("first");
        break;
      }
      await requestClosed.promise; // hangs (test timeout) if the request stayed open
    } finally {
      await raw.close();
    }
  });
});

describe("a long run", () => {
  it("makes 12 LLM calls on one run signal without Node's MaxListenersExceededWarning", async () => {
    // The OpenAI SDK adds a listener to the signal of every request and never removes it.
    const loop: ServerTurn = { toolCalls: [{ id: "call_add", name: "add", arguments: { x: 1, y: 1 } }] };
    server = await startOpenAIServer({ turns: (_body, index) => (index < 11 ? loop : { text: "done" }) });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const { response, sources } = await new FunctionCallingAgent({ llm: openai(server.baseURL), tools: [add] }).run({ input: "add 1 and 1, eleven times" });
      expect(response.content).toBe("done");
      expect(sources).toHaveLength(11);
      await new Promise((resolve) => setImmediate(resolve)); // Node emits warnings on the next tick
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
  });
});

describe("OpenAI metadata and errors", () => {
  it("gives unknown models (Ollama, vLLM) a 128k context window instead of upstream's 1,024", () => {
    expect(new UpstreamOpenAI({ model: "llama3.1:8b", apiKey: "k" }).metadata.contextWindow).toBe(1024);
    expect(new OpenAI({ model: "llama3.1:8b", apiKey: "k" }).metadata.contextWindow).toBe(128_000);
    expect(new OpenAI({ model: "gpt-4", apiKey: "k" }).metadata.contextWindow).toBe(8192);
    expect(new OpenAI({ model: "llama3.1:8b", apiKey: "k", contextWindow: 8000 }).metadata.contextWindow).toBe(8000);
  });

  it("refuses a key fetch cannot send when made, saying which character, never the key (not fetch's ByteString error at the first call)", () => {
    const key = "sk-proj-secret✓key";
    let error: unknown;
    try {
      new OpenAI({ model: "gpt-4o-mini", apiKey: key });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toMatchObject({
      option: "apiKey",
      message:
        "OpenAI: apiKey (or OPENAI_API_KEY) has a character that cannot be sent in an HTTP header (character 15 of 18 is U+2713). Copy the value again; an editor may have put in a curly quote, a dash or a line break.",
    });
    expect(JSON.stringify(error) + String((error as Error).stack) + String((error as ConfigurationError).received)).not.toContain("secret");
    expect(() => new OpenAI({ model: "gpt-4o-mini", apiKey: "sk-latin1-ÿ-ok" })).not.toThrow();
  });

  it("describes a 401 without the key", async () => {
    server = await startOpenAIServer({ turns: [], status: 401 });
    const error = await streamedCalls(openai(server.baseURL), []).catch((e: unknown) => e);
    const line = describeOpenAIError(error, { baseURL: server.baseURL, model: "gpt-4o-mini" });
    expect(line).toBe(`The server at ${server.baseURL} rejected the API key (401). Check OPENAI_API_KEY.`);
  });

  it("describes a server that is not running", async () => {
    server = await startOpenAIServer({ turns: [] });
    const baseURL = server.baseURL;
    await server.close();
    server = undefined;
    const error = await streamedCalls(openai(baseURL), []).catch((e: unknown) => e);
    expect(describeOpenAIError(error, { baseURL, model: "gpt-4o-mini" })).toBe(
      `Cannot reach the OpenAI-compatible server at ${baseURL}: ECONNREFUSED. Is it running? Check OPENAI_BASE_URL.`,
    );
  });

  it("describes a 429 with the server's message, punctuated once", async () => {
    server = await startOpenAIServer({ turns: [], status: 429 });
    const error = await streamedCalls(openai(server.baseURL), []).catch((e: unknown) => e);
    expect(describeOpenAIError(error, { baseURL: server.baseURL, model: "gpt-4o-mini" })).toBe(
      `The server at ${server.baseURL} refused the request (429 rate limit or quota): Scripted status 429. Wait and retry, or check your plan.`,
    );
  });

  it("describes a proxy's HTML error page by its words, not its markup", async () => {
    const raw = await rawServer((res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end(
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
      );
    });
    try {
      const error = await streamedText(openai(raw.baseURL)).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 502 });
      expect(describeOpenAIError(error, { baseURL: raw.baseURL, model: "gpt-4o-mini" })).toBe(
        `The server at ${raw.baseURL} answered 502: 502 Bad Gateway nginx.`,
      );
    } finally {
      await raw.close();
    }
  });

  it("fails clearly when a server answers 200 without streaming (a JSON completion, a web page)", async () => {
    const notStreaming = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "4" }, finish_reason: "stop" }] }),
      );
    });
    await new Promise<void>((resolve) => notStreaming.listen(0, "127.0.0.1", resolve));
    const baseURL = `http://127.0.0.1:${(notStreaming.address() as AddressInfo).port}/v1`;
    try {
      await expect(streamedCalls(openai(baseURL), [])).rejects.toThrow(
        `The server at ${baseURL} answered without streaming: it is not an OpenAI-compatible chat completions API, or it ignores "stream": true. Check the base URL (OPENAI_BASE_URL). Its answer began: {"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"4"},"finish_reason":…`,
      );
      // The base URL from the environment, as the SDK takes it, is the one named.
      const fromEnv = process.env.OPENAI_BASE_URL;
      process.env.OPENAI_BASE_URL = baseURL;
      try {
        await expect(streamedCalls(new OpenAI({ model: "gpt-4o-mini", apiKey: "k", maxRetries: 0 }), [])).rejects.toThrow(
          `The server at ${baseURL} answered without streaming`,
        );
      } finally {
        if (fromEnv === undefined) delete process.env.OPENAI_BASE_URL;
        else process.env.OPENAI_BASE_URL = fromEnv;
      }
    } finally {
      await new Promise((resolve) => notStreaming.close(resolve));
    }
  });

  it("leaves errors that are not about the server alone", () => {
    expect(describeOpenAIError(new TypeError("x is undefined"), { baseURL: "u", model: "m" })).toBeUndefined();
    // A reply broken off by a reset: the ECONNRESET it wraps must not make it "Cannot reach the server".
    const reset = new TypeError("terminated", { cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }) });
    expect(describeOpenAIError(reset, { baseURL: "u", model: "m" })).toBe(
      "Cannot reach the OpenAI-compatible server at u: ECONNRESET. Is it running? Check OPENAI_BASE_URL.",
    );
    expect(
      describeOpenAIError(new StepflowError("The server at u broke off its reply: read ECONNRESET (ECONNRESET).", { cause: reset }), {
        baseURL: "u",
        model: "m",
      }),
    ).toBeUndefined();
  });
});
