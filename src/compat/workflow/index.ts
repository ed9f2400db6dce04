/**
 * `stepflow/compat/workflow`: `@llamaindex/workflow` (deprecated upstream) on stepflow —
 * workflow-core's API plus its agents (`agent()`, `multiAgent()`, `AgentWorkflow`,
 * `FunctionAgent`, `agentHandler`), run by stepflow's `FunctionCallingAgent`.
 * @example
 * import { agent } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * const assistant = agent({ llm: new OfflineDemoLLM() });
 * console.log((await assistant.run("Hello!")).data.result);
 */
export * from "../workflow-core/index.ts";
export * from "../workflow-core/middleware/state.ts";
export * from "../workflow-core/stream/run.ts";
export { zodEvent } from "../workflow-core/util/zod.ts";
export {
  agentInputEvent,
  agentOutputEvent,
  agentSetupEvent,
  agentStepEvent,
  agentStreamEvent,
  agentToolCallEvent,
  agentToolCallResultEvent,
  startAgentEvent,
  stopAgentEvent,
  toolCallsEvent,
  toolResultsEvent,
} from "./events.ts";
export type {
  AgentInput,
  AgentInputData,
  AgentOutput,
  AgentResultData,
  AgentStep,
  AgentToolCall,
  AgentToolCallResult,
  AgentWorkflowState,
  ToolCalls,
  ToolResults,
} from "./events.ts";
export { agent, AgentWorkflow, multiAgent } from "./agent.ts";
export type { AgentRunParams, AgentWorkflowParams, MultiAgentParams, SingleAgentParams, WorkflowAgent } from "./agent.ts";
export { FunctionAgent } from "./function-agent.ts";
export type { BaseWorkflowAgent, FunctionAgentParams, StepHandlerParams, ZodEvent } from "./function-agent.ts";
export { structuredOutput, StructuredOutputError } from "./structured-output.ts";
export { agentHandler } from "./agent-handler.ts";
