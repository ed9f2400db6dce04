/**
 * `agent()` of `@llamaindex/workflow` on stepflow's `FunctionCallingAgent`: the same call and
 * the same events to stream (agent input, setup, stream deltas, tool call, tool call result,
 * output, stop), with the agent's timeout, parallel tool calls, argument validation and the
 * model told about an unknown tool instead of the process crashing.
 */
import { createMemory } from "@llamaindex/core/memory";
import type { BaseTool, ChatMessage, MessageContent, ToolCallLLM, ToolResult } from "@llamaindex/core/llms";
import type { JSONValue } from "@llamaindex/core/global";
import { FunctionOutputEvent, StreamEvent, ToolCallEvent } from "../../../events/index.ts";
import { FunctionCallingAgent } from "../../../workflows/function-calling-agent.ts";
import { Context } from "../../index.ts";
import { workflowEvent, type WorkflowEventData } from "../workflow-core/event.ts";
import { createWorkflow, type Workflow } from "../workflow-core/workflow.ts";
import type { WorkflowContext } from "../workflow-core/context.ts";
import type { WorkflowStream } from "../workflow-core/stream.ts";

/**
 * A tool call the model made.
 * @example
 * import type { AgentToolCall } from "stepflow/compat/workflow";
 * const call: AgentToolCall = { agentName: "Agent", toolName: "add", toolKwargs: { x: 1 }, toolId: "call_1" };
 */
export type AgentToolCall = { agentName: string; toolName: string; toolKwargs: Record<string, JSONValue>; toolId: string };
/**
 * The result of one tool call.
 * @example
 * import type { AgentToolCallResult } from "stepflow/compat/workflow";
 * const read = (r: AgentToolCallResult) => r.toolOutput.output;
 */
export type AgentToolCallResult = {
  toolName: string;
  toolKwargs: Record<string, JSONValue>;
  toolId: string;
  toolOutput: ToolResult;
  returnDirect: boolean;
  raw: JSONValue;
};
/**
 * The messages an agent step starts from.
 * @example
 * import type { AgentInput } from "stepflow/compat/workflow";
 * const input: AgentInput = { input: [{ role: "user", content: "hi" }], currentAgentName: "Agent" };
 */
export type AgentInput = { input: ChatMessage[]; currentAgentName: string };
/**
 * What one LLM call of the agent answered.
 * @example
 * import type { AgentOutput } from "stepflow/compat/workflow";
 * const text = (o: AgentOutput) => o.response.content;
 */
export type AgentOutput = { response: ChatMessage; toolCalls: AgentToolCall[]; raw: unknown; currentAgentName: string };
/**
 * What starts an agent run.
 * @example
 * import type { AgentInputData } from "stepflow/compat/workflow";
 * const start: AgentInputData = { userInput: "What is 2 + 2?" };
 */
export type AgentInputData = { userInput?: MessageContent | undefined; chatHistory?: ChatMessage[] | undefined };
/**
 * What ends an agent run.
 * @example
 * import type { AgentResultData } from "stepflow/compat/workflow";
 * const answer = (r: AgentResultData) => r.result;
 */
export type AgentResultData = { result: MessageContent; message: ChatMessage };

/** @example import { agentToolCallEvent } from "stepflow/compat/workflow"; */
export const agentToolCallEvent = workflowEvent<AgentToolCall>({ debugLabel: "agentToolCall" });
/** @example import { agentToolCallResultEvent } from "stepflow/compat/workflow"; */
export const agentToolCallResultEvent = workflowEvent<AgentToolCallResult>({ debugLabel: "agentToolCallResult" });
/** @example import { agentInputEvent } from "stepflow/compat/workflow"; */
export const agentInputEvent = workflowEvent<AgentInput>({ debugLabel: "agentInput" });
/** @example import { agentSetupEvent } from "stepflow/compat/workflow"; */
export const agentSetupEvent = workflowEvent<AgentInput>({ debugLabel: "agentSetup" });
/**
 * One piece of the reply as it streams: `delta` is the new text, `response` all of it so far.
 * @example
 * import { agentStreamEvent } from "stepflow/compat/workflow";
 * const print = (ev: unknown) => agentStreamEvent.include(ev) && process.stdout.write(ev.data.delta);
 */
export const agentStreamEvent = workflowEvent<{ delta: string; response: string; currentAgentName: string; raw: unknown }>({ debugLabel: "agentStream" });
/** @example import { agentOutputEvent } from "stepflow/compat/workflow"; */
export const agentOutputEvent = workflowEvent<AgentOutput>({ debugLabel: "agentOutput" });
/** @example import { startAgentEvent } from "stepflow/compat/workflow"; */
export const startAgentEvent = workflowEvent<AgentInputData, "llamaindex-start">({ debugLabel: "llamaindex-start" });
/** @example import { stopAgentEvent } from "stepflow/compat/workflow"; */
export const stopAgentEvent = workflowEvent<AgentResultData, "llamaindex-stop">({ debugLabel: "llamaindex-stop" });

/**
 * Options of {@link agent}: upstream's, with `timeout` in seconds (default 60, as upstream; here
 * it fires) and `toolTimeout`, `maxIterations`, `needsApproval` passed on to `FunctionCallingAgent`.
 * @example
 * import type { SingleAgentParams } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * const params: SingleAgentParams = { llm: new OfflineDemoLLM(), timeout: 30 };
 */
export interface SingleAgentParams {
  readonly llm: ToolCallLLM;
  readonly tools?: readonly BaseTool[];
  readonly systemPrompt?: string;
  readonly name?: string;
  readonly description?: string;
  readonly timeout?: number | null;
  readonly toolTimeout?: number;
  readonly maxIterations?: number;
  readonly verbose?: boolean;
}

/**
 * An agent as `@llamaindex/workflow` exposes it: `run` for the final event, `runStream` for
 * every event, or a context of its own (send `startAgentEvent`, read the stream).
 * @example
 * import { agent, agentStreamEvent } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * const assistant = agent({ llm: new OfflineDemoLLM() });
 * for await (const ev of assistant.runStream("Hello!")) if (agentStreamEvent.include(ev)) process.stdout.write(ev.data.delta);
 */
export interface AgentWorkflow extends Workflow {
  /** Runs one turn; resolves to the `stopAgentEvent` (its `data.result` is the reply). */
  run(userInput: MessageContent, params?: { chatHistory?: ChatMessage[] }): Promise<WorkflowEventData<AgentResultData>>;
  /** Runs one turn; the stream ends with the `stopAgentEvent`. */
  runStream(userInput: MessageContent, params?: { chatHistory?: ChatMessage[] }): WorkflowStream<WorkflowEventData<unknown>>;
  /** The `FunctionCallingAgent` that runs the turns. */
  readonly agent: FunctionCallingAgent;
}

const text = (content: MessageContent): string =>
  typeof content === "string" ? content : content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");

/**
 * Creates an agent (upstream's `agent()`), run by stepflow's `FunctionCallingAgent`.
 * @example
 * import { agent } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * import { calculatorTools } from "stepflow/tools/calculator";
 * const math = agent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: 30 });
 * const result = await math.run("What is (2123 + 2321) * 312?");
 * console.log(result.data.result);
 */
export function agent(params: SingleAgentParams): AgentWorkflow {
  const name = params.name ?? "Agent";
  const runner = new FunctionCallingAgent({
    llm: params.llm,
    tools: params.tools ?? [],
    timeout: params.timeout === undefined ? 60 : params.timeout,
    ...(params.systemPrompt !== undefined ? { systemPrompt: params.systemPrompt } : {}),
    ...(params.toolTimeout !== undefined ? { toolTimeout: params.toolTimeout } : {}),
    ...(params.maxIterations !== undefined ? { maxIterations: params.maxIterations } : {}),
  });
  const workflow = createWorkflow();
  workflow.handle([startAgentEvent], async (context: WorkflowContext, start) => {
    const { userInput, chatHistory } = start.data;
    const ctx = new Context(runner);
    if (chatHistory !== undefined && chatHistory.length > 0) await ctx.store.set("memory", createMemory(chatHistory));
    const userMessage: ChatMessage = { role: "user", content: userInput ?? "" };
    const input = [...(chatHistory ?? []), userMessage];
    context.sendEvent(agentInputEvent.with({ input, currentAgentName: name }), agentSetupEvent.with({ input, currentAgentName: name }));
    const handler = runner.run({ input: userMessage }, { ctx, signal: context.signal });
    let response = "";
    const calls = new Map<string, AgentToolCall>();
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof StreamEvent) {
        response += ev.delta;
        context.sendEvent(agentStreamEvent.with({ delta: ev.delta, response, currentAgentName: name, raw: null }));
      } else if (ev instanceof ToolCallEvent) {
        const toolCalls = ev.toolCalls.map((call) => ({
          agentName: name,
          toolName: call.name,
          toolKwargs: (call.input ?? {}) as Record<string, JSONValue>,
          toolId: call.id,
        }));
        context.sendEvent(agentOutputEvent.with({ response: { role: "assistant", content: response }, toolCalls, raw: null, currentAgentName: name }));
        response = "";
        for (const call of toolCalls) {
          calls.set(call.toolId, call);
          context.sendEvent(agentToolCallEvent.with(call));
        }
      } else if (ev instanceof FunctionOutputEvent) {
        const source = ev.output;
        const call = calls.get(source.toolCallId);
        const toolKwargs = call?.toolKwargs ?? {};
        context.sendEvent(
          agentToolCallResultEvent.with({
            toolName: source.toolName,
            toolKwargs,
            toolId: source.toolCallId,
            toolOutput: { id: source.toolCallId, result: source.content, isError: source.isError },
            returnDirect: false,
            raw: source.output as JSONValue,
          }),
        );
      }
    }
    const result = await handler;
    context.sendEvent(agentOutputEvent.with({ response: result.response, toolCalls: [], raw: null, currentAgentName: name }));
    return stopAgentEvent.with({ result: text(result.response.content), message: result.response });
  });

  const runStream = (userInput: MessageContent, options?: { chatHistory?: ChatMessage[] }) => {
    const { stream, sendEvent } = workflow.createContext();
    sendEvent(startAgentEvent.with({ userInput, chatHistory: options?.chatHistory }));
    return stream.until(stopAgentEvent);
  };

  return {
    handle: workflow.handle,
    createContext: workflow.createContext,
    agent: runner,
    runStream,
    async run(userInput, options) {
      const final = (await runStream(userInput, options).toArray()).at(-1);
      if (!stopAgentEvent.include(final)) throw new Error(`Agent stopped with unexpected ${String(final)} event.`);
      return final;
    },
  };
}
