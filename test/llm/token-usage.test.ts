import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { afterEach, describe, expect, it } from "vitest";
import { TokenUsageEvent } from "../../events/index.ts";
import { Context } from "../../src/index.ts";
import { OpenAI } from "../../src/llm/openai.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { KNOWN_SPEC_TOKENS } from "../../src/llm/known-spec-tokens.ts";
import { runUsage, toolSpec, toolSpecTokens, usageOf, usageSums } from "../../src/llm/token-usage.ts";
import type { LLMCallUsage, TokenUsage } from "../../src/llm/token-usage.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { add, calculatorTools, multiply } from "../../workflows/tools/calculator.ts";
import { startOpenAIServer } from "../support/openai-sse-server.ts";
import type { OpenAIServer } from "../support/openai-sse-server.ts";

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("token accounting", () => {
  it("reads each call's usage from the stream's last chunk into the run result and the event stream, with the tool specs' tokens", async () => {
    server = await startOpenAIServer({
      turns: [
        { toolCalls: [{ id: "call_add", name: "add", arguments: { x: 2123, y: 2321 } }], usage: { prompt_tokens: 310, completion_tokens: 20 } },
        {
          toolCalls: [{ id: "call_mul", name: "multiply", arguments: { x: 4444, y: 312 } }],
          usage: { prompt_tokens: 350, completion_tokens: 21, cached_tokens: 256 },
        },
        { text: "1386528", usage: { prompt_tokens: 390, completion_tokens: 5, cached_tokens: 256 } },
      ],
    });
    const llm = new OpenAI({ model: "gpt-4o-mini", baseURL: server.baseURL, apiKey: "k", maxRetries: 0 });
    const logged: string[] = [];
    const agent = new FunctionCallingAgent({ llm, tools: [add, multiply], verbose: true, log: (line) => logged.push(line) });
    const handler = agent.run({ input: "What is (2123 + 2321) * 312?" });
    const events: TokenUsageEvent[] = [];
    for await (const ev of handler.streamEvents()) if (ev instanceof TokenUsageEvent) events.push(ev);
    const { usage } = await handler;

    // Every request asked for the usage, as OpenAI wants it asked.
    expect(server.requests.every((r) => JSON.stringify(r.body.stream_options) === '{"include_usage":true}')).toBe(true);
    // The tool specs' tokens are those of the tools the server received, counted with cl100k_base.
    const sentSpecs = server.requests[0]?.body.tools ?? [];
    const specTokens = sentSpecs.reduce((sum, spec) => sum + encode(JSON.stringify(spec)).length, 0);
    expect(specTokens).toBeGreaterThan(40);
    expect(toolSpecTokens([add, multiply])).toBe(specTokens);

    expect(usage.calls).toEqual([
      {
        call: 1,
        usage: { promptTokens: 310, completionTokens: 20, totalTokens: 330, cachedTokens: 0 },
        toolSpecTokens: specTokens,
        toolsSent: 2,
        toolsAvailable: 2,
      },
      {
        call: 2,
        usage: { promptTokens: 350, completionTokens: 21, totalTokens: 371, cachedTokens: 256 },
        toolSpecTokens: specTokens,
        toolsSent: 2,
        toolsAvailable: 2,
      },
      {
        call: 3,
        usage: { promptTokens: 390, completionTokens: 5, totalTokens: 395, cachedTokens: 256 },
        toolSpecTokens: specTokens,
        toolsSent: 2,
        toolsAvailable: 2,
      },
    ]);
    expect(usage).toMatchObject({
      llmCalls: 3,
      reportedCalls: 3,
      promptTokens: 1050,
      completionTokens: 46,
      totalTokens: 1096,
      cachedTokens: 512,
      toolSpecTokens: 3 * specTokens,
    });
    expect(events.map((ev) => [ev.call.call, ev.run.promptTokens, ev.run.llmCalls])).toEqual([
      [1, 310, 1],
      [2, 660, 2],
      [3, 1050, 3],
    ]);
    expect(logged).toContain(`Tokens of LLM call 2: prompt 350 (256 cached), completion 21; tool specs ${specTokens} (2 tools)`);
  });

  it("says when the model reported no usage, and still counts the tool specs; each run counts its own calls", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "add", input: { x: 1, y: 2 } }] }, { text: "3" }, { text: "Hi" }]);
    const logged: string[] = [];
    const agent = new FunctionCallingAgent({ llm, tools: [add, multiply], verbose: true, log: (line) => logged.push(line) });
    const handler = agent.run({ input: "1 + 2?" });
    const first = await handler;
    expect(first.usage).toMatchObject({
      llmCalls: 2,
      reportedCalls: 0,
      promptTokens: 0,
      completionTokens: 0,
      toolSpecTokens: 2 * toolSpecTokens([add, multiply]),
    });
    expect(first.usage.calls.map((call) => call.usage)).toEqual([undefined, undefined]);
    expect(first.usage).not.toHaveProperty("cachedTokens");
    expect(logged.filter((line) => line.startsWith("Tokens"))).toEqual([
      `Tokens of LLM call 1: usage not reported by the server; tool specs ${toolSpecTokens([add, multiply])} (2 tools)`,
      `Tokens of LLM call 2: usage not reported by the server; tool specs ${toolSpecTokens([add, multiply])} (2 tools)`,
    ]);
    const second = await agent.run({ input: "Hello" }, { ctx: handler.ctx });
    expect(second.usage.llmCalls).toBe(1);
  });

  it("a run saved at any microtask and resumed counts each LLM call once", async () => {
    // The model adds, then answers once it has the result.
    const model = () =>
      new ScriptedLLM((request) => (request.messages.at(-1)?.options ? { text: "3" } : { toolCalls: [{ id: "a1", name: "add", input: { x: 1, y: 2 } }] }));
    let resumed = 0;
    for (let wait = 0; wait <= 60; wait++) {
      const handler = new FunctionCallingAgent({ llm: model(), tools: [add] }).run({ input: "1 + 2?" });
      for (let i = 0; i < wait; i++) await Promise.resolve();
      const saved = JSON.stringify(handler.ctx.toJSON());
      handler.cancel();
      await handler.catch(() => undefined);
      if (!(JSON.parse(saved) as { running?: boolean }).running) continue; // before the run began, or after it ended
      const second = new FunctionCallingAgent({ llm: model(), tools: [add] });
      const { usage } = await second.run(undefined, { ctx: Context.fromJSON(second, saved) });
      expect({ wait, calls: usage.calls.map((call) => call.call), llmCalls: usage.llmCalls }).toEqual({ wait, calls: [1, 2], llmCalls: 2 });
      resumed++;
    }
    expect(resumed).toBeGreaterThan(20);
  });

  it("reads the usage shapes servers send, and nothing from a chunk without one", () => {
    expect(usageOf({ usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, prompt_tokens_details: { cached_tokens: 8 } } })).toEqual({
      promptTokens: 10,
      completionTokens: 2,
      totalTokens: 12,
      cachedTokens: 8,
    });
    // Anthropic counts cache reads and writes apart from input_tokens.
    expect(usageOf({ usage: { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 4, cache_creation_input_tokens: 1 } })).toEqual({
      promptTokens: 15,
      completionTokens: 2,
      totalTokens: 17,
      cachedTokens: 4,
    });
    expect(usageOf({ usage: { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } })).toEqual({
      promptTokens: 10,
      completionTokens: 2,
      totalTokens: 12,
    });
    // OpenAI's Responses API counts cached tokens among input_tokens.
    expect(usageOf({ usage: { input_tokens: 10, output_tokens: 2, input_tokens_details: { cached_tokens: 4 } } })).toEqual({
      promptTokens: 10,
      completionTokens: 2,
      totalTokens: 12,
      cachedTokens: 4,
    });
    expect(
      usageOf({ usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 5, thoughtsTokenCount: 3, totalTokenCount: 28, cachedContentTokenCount: 16 } }),
    ).toEqual({
      promptTokens: 20,
      completionTokens: 8,
      totalTokens: 28,
      cachedTokens: 16,
    });
    expect(usageOf({ usageMetadata: { promptTokenCount: 20 } })).toBeUndefined();
    expect(usageOf({ model: "llama3.1", done: true, prompt_eval_count: 26, eval_count: 290 })).toEqual({
      promptTokens: 26,
      completionTokens: 290,
      totalTokens: 316,
    });
    expect(usageOf({ model: "llama3.1", done: true, eval_count: 12 })).toEqual({ promptTokens: 0, completionTokens: 12, totalTokens: 12 });
    expect(usageOf({ model: "llama3.1", done: false, message: { content: "Hi" } })).toBeUndefined();
    expect(usageOf({ usage: null, choices: [] })).toBeUndefined();
    expect(usageOf({ usage: { prompt_tokens: "ten", completion_tokens: 2 } })).toBeUndefined();
    expect(usageOf(null)).toBeUndefined();
  });
});

describe("toolSpecTokens", () => {
  it("knows the calculator tools' counts without a tokenizer, each as cl100k_base counts it", () => {
    for (const tool of calculatorTools) expect(KNOWN_SPEC_TOKENS.has(JSON.stringify(toolSpec(tool))), tool.metadata.name).toBe(true);
    for (const [json, tokens] of KNOWN_SPEC_TOKENS) expect(tokens, json).toBe(encode(json).length);
    expect(toolSpecTokens(calculatorTools)).toBe(calculatorTools.reduce((sum, tool) => sum + encode(JSON.stringify(toolSpec(tool))).length, 0));
  });
});

describe("runUsage and usageSums", () => {
  const call = (n: number, usage?: TokenUsage): LLMCallUsage => ({ call: n, usage, toolSpecTokens: 10, toolsSent: 2, toolsAvailable: 2 });

  it("sum the reported calls, and the cached tokens only when a server said", () => {
    const calls = [
      call(1, { promptTokens: 100, completionTokens: 5, totalTokens: 105 }),
      call(2),
      call(3, { promptTokens: 50, completionTokens: 1, totalTokens: 51 }),
    ];
    const sums = { llmCalls: 3, reportedCalls: 2, promptTokens: 150, completionTokens: 6, totalTokens: 156, toolSpecTokens: 30 };
    expect(runUsage(calls)).toStrictEqual({ ...sums, calls });
    expect(usageSums(calls)).toStrictEqual(sums);
    calls.push(call(4, { promptTokens: 10, completionTokens: 1, totalTokens: 11, cachedTokens: 8 }));
    const cached = { llmCalls: 4, reportedCalls: 3, promptTokens: 160, completionTokens: 7, totalTokens: 167, toolSpecTokens: 40, cachedTokens: 8 };
    expect(usageSums(calls)).toStrictEqual(cached);
    expect(Object.keys(runUsage(calls))).toEqual([
      "llmCalls",
      "reportedCalls",
      "promptTokens",
      "completionTokens",
      "totalTokens",
      "toolSpecTokens",
      "calls",
      "cachedTokens",
    ]);
  });
});
