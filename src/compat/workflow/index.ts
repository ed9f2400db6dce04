/**
 * `stepflow/compat/workflow`: `@llamaindex/workflow` (deprecated upstream) on stepflow —
 * workflow-core's API plus `agent()` and `multiAgent()`, run by stepflow's `FunctionCallingAgent`.
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
  agent,
  agentInputEvent,
  agentOutputEvent,
  agentSetupEvent,
  agentStepEvent,
  agentStreamEvent,
  agentToolCallEvent,
  agentToolCallResultEvent,
  multiAgent,
  startAgentEvent,
  stopAgentEvent,
  toolCallsEvent,
  toolResultsEvent,
} from "./agent.ts";
export type {
  AgentInput,
  AgentInputData,
  AgentOutput,
  AgentResultData,
  AgentStep,
  AgentToolCall,
  AgentToolCallResult,
  AgentWorkflow,
  AgentWorkflowState,
  MultiAgentParams,
  SingleAgentParams,
  ToolCalls,
  ToolResults,
  WorkflowAgent,
} from "./agent.ts";
