import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HumanResponseEvent, StartEvent, StopEvent, Workflow, WorkflowIdleEvent, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import { instrumentStepflow } from "../../src/otel/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { OpenAI } from "../../src/llm/openai.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { add, calculatorTools } from "../../workflows/tools/calculator.ts";

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;
let stop: () => void;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  stop = instrumentStepflow({ tracerProvider: provider });
});
afterEach(async () => {
  stop();
  await provider.shutdown();
});

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => spans().find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);

describe("stepflow/otel: spans of an agent run", () => {
  it("nests the LLM and tool calls under their steps, under one run span, with GenAI attributes", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "add", input: { x: 2123, y: 2321 } }] }, { text: ["The answer ", "is 4444."] }]);
    const agent = new FunctionCallingAgent({ llm, tools: [add] });
    await agent.run({ input: "2123 + 2321?" });

    const [run] = named("invoke_workflow FunctionCallingAgent");
    expect(run?.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_workflow",
      "gen_ai.workflow.name": "FunctionCallingAgent",
      "stepflow.run.status": "succeeded",
    });
    expect(run?.parentSpanContext).toBeUndefined();
    expect(spans().every((s) => s.spanContext().traceId === run?.spanContext().traceId)).toBe(true);

    const steps = spans().filter((s) => s.name.startsWith("step "));
    expect(steps.map((s) => s.name)).toEqual(["step prepareChatHistory", "step handleLlmInput", "step handleToolCalls", "step handleLlmInput"]);
    expect(steps.every((s) => parentOf(s) === run)).toBe(true);
    expect(steps[1]?.attributes).toMatchObject({
      "stepflow.step.attempt": 1,
      "stepflow.step.input_event": "agent.InputEvent",
      "stepflow.step.output_event": "agent.ToolCallEvent",
    });

    const chats = named(`chat ${llm.metadata.model}`);
    expect(chats).toHaveLength(2);
    expect(chats.map((s) => parentOf(s)?.name)).toEqual(["step handleLlmInput", "step handleLlmInput"]);
    expect(chats[0]?.kind).toBe(SpanKind.CLIENT);
    expect(chats[0]?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": llm.metadata.model,
      "gen_ai.response.finish_reasons": ["tool_calls"],
    });
    expect(chats[1]?.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);

    const [tool] = named("execute_tool add");
    expect(parentOf(tool as ReadableSpan)?.name).toBe("step handleToolCalls");
    expect(tool?.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add", "gen_ai.tool.type": "function" });
    expect(tool?.attributes["gen_ai.tool.call.id"]).toEqual(expect.any(String));
    expect(tool?.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it("records token usage and the response model an OpenAI-compatible server reports", async () => {
    // A server that streams one reply and then its usage, as OpenAI does with stream_options.include_usage.
    const chunk = (fields: object) =>
      `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: "gpt-4o-mini-2024-07-18", ...fields })}\n\n`;
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "Hi there." }, finish_reason: null }] }));
      res.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
      res.write(chunk({ choices: [], usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49, prompt_tokens_details: { cached_tokens: 32 } } }));
      res.end("data: [DONE]\n\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const llm = new OpenAI({ model: "gpt-4o-mini", apiKey: "sk-test", baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
      await new FunctionCallingAgent({ llm, tools: calculatorTools }).run({ input: "Hello" });
      const [chat] = named("chat gpt-4o-mini");
      expect(chat?.attributes).toMatchObject({
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.id": "chatcmpl-1",
        "gen_ai.usage.input_tokens": 42,
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.usage.cache_read.input_tokens": 32,
      });
    } finally {
      server.close();
    }
  });

  it("marks a failed tool call, and a failed run, as errors", async () => {
    const llm = new ScriptedLLM([{ toolCalls: [{ name: "divide", input: { x: 1, y: 0 } }] }, { text: ["Cannot."] }]);
    await new FunctionCallingAgent({ llm, tools: calculatorTools }).run({ input: "1 / 0" });
    const [tool] = named("execute_tool divide");
    expect(tool?.status.code).toBe(SpanStatusCode.ERROR);
    expect(tool?.status.message).toMatch(/divide|zero/i);

    class Broken extends Workflow<{ what: string }, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async explode(_ctx: Context, ev: StartEvent<{ what: string }>): Promise<StopEvent<string>> {
        throw new RangeError(`no such ${ev.what}`);
      }
    }
    await expect(new Broken().run({ what: "thing" })).rejects.toThrow("no such thing");
    const [run] = named("invoke_workflow Broken");
    expect(run?.status).toMatchObject({ code: SpanStatusCode.ERROR, message: "no such thing" });
    expect(run?.attributes).toMatchObject({ "stepflow.run.status": "failed", "error.type": "RangeError" });
    const [explode] = named("step explode");
    expect(explode?.status.code).toBe(SpanStatusCode.ERROR);
    expect(explode?.events.map((e) => e.name)).toEqual(["exception"]);
  });

  it("marks on the run's span when the run began to wait for input: one event per wait", async () => {
    class Approve extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async approve(ctx: Context) {
        const first = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>);
        const second = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>);
        return new StopEvent({ result: `${first.response}, ${second.response}` });
      }
    }
    const handler = new Approve({ timeout: 10 }).run({}, { lifecycleEvents: true });
    for await (const ev of handler.streamEvents()) if (ev instanceof WorkflowIdleEvent) handler.ctx.sendEvent(new HumanResponseEvent({ response: "yes" }));
    expect(await handler).toBe("yes, yes");
    const [run] = named("invoke_workflow Approve");
    expect(run?.events.map((e) => e.name)).toEqual(["stepflow.run.idle", "stepflow.run.idle"]);
  });

  it("is a no-op until the application registers a provider, and uses the global one once it does", async () => {
    stop();
    const stopGlobal = instrumentStepflow();
    try {
      const agent = new FunctionCallingAgent({ llm: new ScriptedLLM([{ text: ["ok"] }, { text: ["again"] }]), tools: [] });
      expect((await agent.run({ input: "hi" })).response.content).toBe("ok");
      expect(spans()).toEqual([]);
      trace.setGlobalTracerProvider(provider);
      await agent.run({ input: "hi" });
      expect(spans().map((s) => s.name)).toContain("invoke_workflow FunctionCallingAgent");
    } finally {
      stopGlobal();
      trace.disable();
    }
  });

  it("records nothing once stopped", async () => {
    stop();
    await new FunctionCallingAgent({ llm: new ScriptedLLM([{ text: ["ok"] }]), tools: [] }).run({ input: "hi" });
    expect(spans()).toEqual([]);
  });
});
