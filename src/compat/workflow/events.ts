/**
 * The events and data types of `@llamaindex/workflow`'s agents: what an agent run streams, in
 * upstream's names and shapes.
 */
import type { JSONObject, JSONValue } from "@llamaindex/core/global";
import type { Memory } from "@llamaindex/core/memory";
import type { ChatMessage, MessageContent, ToolResult } from "@llamaindex/core/llms";
import { workflowEvent } from "../workflow-core/event.ts";
import type { ZodSchema } from "../workflow-core/util/zod.ts";

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
export type AgentResultData<O = JSONObject> = {
  result: MessageContent;
  message: ChatMessage;
  state?: AgentWorkflowState | undefined;
  /** With `run(input, { responseFormat })`: the final answer as an object the schema validated. */
  object?: O | undefined;
};

/**
 * Where a turn ended: the conversation's memory and the agent that answered.
 * @example
 * import type { AgentWorkflowState } from "stepflow/compat/workflow";
 * const whoAnswered = (state: AgentWorkflowState) => state.currentAgentName;
 */
export type AgentWorkflowState = {
  memory: Memory;
  scratchpad: ChatMessage[];
  currentAgentName: string;
  agents: string[];
  nextAgentName?: string | null;
  /** The schema of the run's structured output, if it asked for one. */
  responseFormat?: ZodSchema<unknown> | undefined;
};

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
/**
 * One model call of an agent: what it answered and the tool calls it made (upstream's internal step, streamed as upstream does).
 * @example
 * import type { AgentStep } from "stepflow/compat/workflow";
 * const calls = (step: AgentStep) => step.toolCalls.length;
 */
export type AgentStep = { agentName: string; response: ChatMessage; toolCalls: AgentToolCall[] };
/**
 * The tool calls of one model call.
 * @example
 * import type { ToolCalls } from "stepflow/compat/workflow";
 * const names = (calls: ToolCalls) => calls.toolCalls.map((call) => call.toolName);
 */
export type ToolCalls = { agentName: string; toolCalls: AgentToolCall[] };
/**
 * The results of all the tool calls of one model call.
 * @example
 * import type { ToolResults } from "stepflow/compat/workflow";
 * const failed = (r: ToolResults) => r.results.filter((result) => result.toolOutput.isError);
 */
export type ToolResults = { agentName: string; results: AgentToolCallResult[] };
/** @example import { agentStepEvent } from "stepflow/compat/workflow"; */
export const agentStepEvent = workflowEvent<AgentStep>({ debugLabel: "agentStep" });
/** @example import { toolCallsEvent } from "stepflow/compat/workflow"; */
export const toolCallsEvent = workflowEvent<ToolCalls>({ debugLabel: "toolCalls" });
/** @example import { toolResultsEvent } from "stepflow/compat/workflow"; */
export const toolResultsEvent = workflowEvent<ToolResults>({ debugLabel: "toolResults" });
/** @example import { startAgentEvent } from "stepflow/compat/workflow"; */
export const startAgentEvent = workflowEvent<AgentInputData, "llamaindex-start">({ debugLabel: "llamaindex-start" });
/** @example import { stopAgentEvent } from "stepflow/compat/workflow"; */
export const stopAgentEvent = workflowEvent<AgentResultData, "llamaindex-stop">({ debugLabel: "llamaindex-stop" });
