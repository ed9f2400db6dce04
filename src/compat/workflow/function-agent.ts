/**
 * `FunctionAgent` of `@llamaindex/workflow`: one agent's configuration (name, LLM, tools, system
 * prompt, the agents it may hand off to) and upstream's step methods. An `AgentWorkflow` runs
 * it with stepflow's `FunctionCallingAgent`.
 */
import { Settings, type JSONObject } from "@llamaindex/core/global";
import type { BaseToolWithCall, ChatMessage, ChatResponseChunk, ToolCallLLM } from "@llamaindex/core/llms";
import * as z from "zod";
import * as z3 from "zod/v3";
import { ConfigurationError } from "../../index.ts";
import { tool } from "../../tools/tool.ts";
import type { WorkflowContext } from "../workflow-core/context.ts";
import type { WorkflowEvent } from "../workflow-core/event.ts";
import type { ZodSchema } from "../workflow-core/util/zod.ts";
import { agentStreamEvent, type AgentOutput, type AgentToolCall, type AgentToolCallResult, type AgentWorkflowState } from "./events.ts";
import { structuredOutput } from "./structured-output.ts";

/** Upstream's default, so that a model prompted for upstream's agents behaves the same. */
const DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant. Use the provided tools to answer questions.";

const STEP_HANDLER_SYSTEM_PROMPT_TPL = `
You are a part of a workflow program that is composed of multiple steps. 
Your task is to handle the step using the provided tools and finally send an output event back to the workflow and summarize the result.

## Instructions
### Follow these default instructions:
1. Provide a plan to handle the actions based on context and the user request.
2. Use the provided tools to proceed with your actions. You can call multiple tools to handle the step and send events.
3. Always return at least one result event at the end to the workflow by using the provided result tools. Identify the event to send based on the user's instructions.

### Here is the user's instructions:
{instructions}
`;

/**
 * An agent an `AgentWorkflow` can run: upstream's `BaseWorkflowAgent`. `AgentWorkflow` runs it
 * from its `name`, `llm`, `tools`, `systemPrompt` and `canHandoffTo` with stepflow's
 * `FunctionCallingAgent`; the step methods are upstream's, for code that calls them itself.
 * @example
 * import type { BaseWorkflowAgent } from "stepflow/compat/workflow";
 * const toolNames = (agent: BaseWorkflowAgent) => agent.tools.map((t) => t.metadata.name);
 */
export interface BaseWorkflowAgent {
  readonly name: string;
  readonly systemPrompt: string;
  readonly description: string;
  readonly tools: BaseToolWithCall[];
  readonly llm: ToolCallLLM;
  readonly canHandoffTo: string[];
  /** stepflow: the longest a tool call may take, in seconds (`FunctionCallingAgent`'s `toolTimeout`). */
  readonly toolTimeout?: number | undefined;
  /** stepflow: the most model calls in one agent's run (`FunctionCallingAgent`'s `maxIterations`). */
  readonly maxIterations?: number | undefined;
  /** Turns the final response into an object of `responseFormat`. */
  getStructuredOutput(responseFormat: ZodSchema<unknown>, response: ChatMessage): Promise<JSONObject>;
  /** One model call over `llmInput` and the scratchpad; streams `agentStreamEvent`s into `ctx`. */
  takeStep(ctx: WorkflowContext, state: AgentWorkflowState, llmInput: ChatMessage[], tools: BaseToolWithCall[]): Promise<AgentOutput>;
  /** Adds the tool calls' results to the scratchpad, as the model will read them. */
  handleToolCallResults(state: AgentWorkflowState, results: AgentToolCallResult[]): Promise<void>;
  /** Moves the scratchpad into the memory. */
  finalize(state: AgentWorkflowState, output: AgentOutput): Promise<AgentOutput>;
}

/**
 * An event type made by `zodEvent` (it has a `schema`), as `fromWorkflowStep` takes them.
 * @example
 * import { z } from "zod";
 * import { zodEvent, type ZodEvent } from "stepflow/compat/workflow";
 * const done: ZodEvent = zodEvent(z.object({ summary: z.string() }), { debugLabel: "done" });
 */
export type ZodEvent = WorkflowEvent<unknown> & { readonly schema: ZodSchema<unknown> };

/**
 * What {@link FunctionAgent.fromWorkflowStep} takes.
 * @example
 * import type { StepHandlerParams } from "stepflow/compat/workflow";
 * const instructionsOf = (params: StepHandlerParams) => params.instructions;
 */
export type StepHandlerParams = {
  /** The context the agent's event tools send into. */
  workflowContext: WorkflowContext;
  /** What the agent is to do. */
  instructions: string;
  /** The events that end its task: one `send_<debugLabel>` tool each. */
  results: ZodEvent[];
  /** Other events it may send. */
  events?: ZodEvent[] | undefined;
  /** Default: LlamaIndex's `Settings.llm`. */
  llm?: ToolCallLLM | undefined;
  tools?: BaseToolWithCall[] | undefined;
};

/**
 * What `new FunctionAgent(...)` takes: upstream's options, and stepflow's `toolTimeout` and
 * `maxIterations`.
 * @example
 * import type { FunctionAgentParams } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * const params: FunctionAgentParams = { name: "Math", llm: new OfflineDemoLLM(), maxIterations: 5 };
 */
export type FunctionAgentParams = {
  name?: string | undefined;
  /** Default: LlamaIndex's `Settings.llm`. */
  llm?: ToolCallLLM | undefined;
  /** What the agent does: other agents read it when they choose whom to hand off to. */
  description?: string | undefined;
  tools?: BaseToolWithCall[] | undefined;
  /** The agents it may hand the conversation to: names, agents, or agent workflows (all their agents). */
  canHandoffTo?: readonly (string | BaseWorkflowAgent | { getAgents(): BaseWorkflowAgent[] })[] | undefined;
  systemPrompt?: string | undefined;
  toolTimeout?: number | undefined;
  maxIterations?: number | undefined;
};

function defaultLLM(what: string): ToolCallLLM {
  try {
    return Settings.llm as ToolCallLLM;
  } catch (cause) {
    throw new ConfigurationError(`${what} needs an llm: pass { llm }, or set LlamaIndex's Settings.llm first.`, "llm", undefined, { cause });
  }
}

function checkToolCalling(llm: ToolCallLLM, what: string): ToolCallLLM {
  if (llm === null || typeof llm !== "object" || typeof llm.chat !== "function")
    throw new ConfigurationError(`${what} takes { llm }: an LLM object with chat(); got ${String(llm)}.`, "llm", llm);
  if (!llm.supportToolCall)
    throw new ConfigurationError(`${what} requires an LLM that supports tool calls; this one's supportToolCall is not true.`, "llm", llm);
  return llm;
}

const handoffNamesOf = (targets: FunctionAgentParams["canHandoffTo"]): string[] => {
  const names = (targets ?? []).flatMap((target) =>
    typeof target === "string"
      ? [target]
      : "getAgents" in target && typeof target.getAgents === "function"
        ? target.getAgents().map((a) => a.name)
        : [(target as BaseWorkflowAgent).name],
  );
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined) throw new ConfigurationError(`Duplicate handoff agents: "${duplicate}" is named twice in canHandoffTo.`, "canHandoffTo", names);
  return names;
};

/**
 * An agent that calls tools (upstream's `FunctionAgent`). Give it to `new AgentWorkflow(...)` or
 * `multiAgent(...)`; `agent(...)` makes one and its workflow in one call.
 * @example
 * import { AgentWorkflow, FunctionAgent } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * import { calculatorTools } from "stepflow/tools/calculator";
 * const math = new FunctionAgent({ name: "Math", llm: new OfflineDemoLLM(), tools: [...calculatorTools] });
 * const workflow = new AgentWorkflow({ agents: [math], rootAgent: math });
 * console.log((await workflow.run("What is 2 + 3?")).data.result);
 */
export class FunctionAgent implements BaseWorkflowAgent {
  readonly name: string;
  readonly systemPrompt: string;
  readonly description: string;
  readonly llm: ToolCallLLM;
  /** The agent's tools; an agent workflow of several agents adds `handOff` here when this agent has `canHandoffTo`. */
  readonly tools: BaseToolWithCall[];
  readonly canHandoffTo: string[];
  readonly toolTimeout: number | undefined;
  readonly maxIterations: number | undefined;

  constructor(params: FunctionAgentParams) {
    if (params === null || typeof params !== "object")
      throw new ConfigurationError("new FunctionAgent() takes { llm, tools?, name?, description?, systemPrompt?, canHandoffTo? }.", "params", params);
    this.name = params.name ?? "Agent";
    this.llm = checkToolCalling(params.llm ?? defaultLLM("FunctionAgent"), "FunctionAgent");
    this.description = params.description ?? "A single agent that uses the provided tools or functions.";
    if (params.tools !== undefined && !Array.isArray(params.tools))
      throw new ConfigurationError("FunctionAgent's tools must be an array of tools.", "tools", params.tools);
    this.tools = [...(params.tools ?? [])];
    this.systemPrompt = params.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
    this.canHandoffTo = handoffNamesOf(params.canHandoffTo);
    this.toolTimeout = params.toolTimeout;
    this.maxIterations = params.maxIterations;
  }

  async getStructuredOutput(responseFormat: ZodSchema<unknown>, response: ChatMessage): Promise<JSONObject> {
    return (await structuredOutput(this.llm, responseFormat, response)) as JSONObject;
  }

  async takeStep(ctx: WorkflowContext, state: AgentWorkflowState, llmInput: ChatMessage[], tools: BaseToolWithCall[]): Promise<AgentOutput> {
    const stream = await this.llm.chat({ messages: [...llmInput, ...state.scratchpad], tools, stream: true });
    let response = "";
    let raw: unknown;
    const toolCalls = new Map<string, AgentToolCall>();
    for await (const chunk of stream) {
      response += chunk.delta;
      raw = chunk.raw;
      ctx.sendEvent(agentStreamEvent.with({ delta: chunk.delta, response, currentAgentName: this.name, raw: chunk.raw }));
      for (const call of this.toolCallsOf(chunk, tools)) toolCalls.set(call.toolId, call);
    }
    const message: ChatMessage = { role: "assistant", content: response };
    if (toolCalls.size > 0)
      message.options = { toolCall: [...toolCalls.values()].map((call) => ({ name: call.toolName, input: call.toolKwargs as JSONObject, id: call.toolId })) };
    state.scratchpad.push(message);
    return { response: message, toolCalls: [...toolCalls.values()], raw, currentAgentName: this.name };
  }

  async handleToolCallResults(state: AgentWorkflowState, results: AgentToolCallResult[]): Promise<void> {
    for (const result of results) {
      const content = result.toolOutput.result;
      state.scratchpad.push({ role: "user", content, options: { toolResult: { id: result.toolId, result: content, isError: result.toolOutput.isError } } });
    }
  }

  async finalize(state: AgentWorkflowState, output: AgentOutput): Promise<AgentOutput> {
    for (const message of state.scratchpad) await state.memory.add(message);
    state.scratchpad = [];
    return output;
  }

  private toolCallsOf(chunk: ChatResponseChunk, tools: readonly BaseToolWithCall[]): AgentToolCall[] {
    const options = chunk.options ?? {};
    if (!("toolCall" in options) || !Array.isArray(options.toolCall)) return [];
    const calls = options.toolCall.map((call): AgentToolCall => {
      let toolKwargs: JSONObject;
      if (typeof call.input === "string") {
        try {
          toolKwargs = JSON.parse(call.input) as JSONObject;
        } catch {
          toolKwargs = { rawInput: call.input };
        }
      } else toolKwargs = call.input as JSONObject;
      return { agentName: this.name, toolName: call.name, toolKwargs, toolId: call.id };
    });
    const unknown = calls.filter((call) => !tools.some((t) => t.metadata.name === call.toolName)).map((call) => call.toolName);
    if (unknown.length > 0)
      throw new Error(`Tools not found: ${unknown.join(", ")}. The agent ${this.name} has: ${tools.map((t) => t.metadata.name).join(", ")}.`);
    return calls;
  }

  /**
   * An agent that handles one step of a workflow: it has a `send_<debugLabel>` tool for each
   * event of `results` and `events`, which sends that event into `workflowContext`.
   * @example
   * import { z } from "zod";
   * import { createWorkflow, FunctionAgent, zodEvent } from "stepflow/compat/workflow";
   * import { OfflineDemoLLM } from "stepflow/llm/offline";
   * const done = zodEvent(z.object({ summary: z.string() }), { debugLabel: "done" });
   * const context = createWorkflow().createContext();
   * const agent = FunctionAgent.fromWorkflowStep({ workflowContext: context, results: [done], instructions: "Summarize the input.", llm: new OfflineDemoLLM() });
   * console.log(agent.tools.map((t) => t.metadata.name)); // ["send_done"]
   */
  static fromWorkflowStep({ workflowContext, results, events, instructions, tools, llm }: StepHandlerParams): FunctionAgent {
    if (!workflowContext)
      throw new ConfigurationError("fromWorkflowStep() needs the workflowContext its event tools send into.", "workflowContext", workflowContext);
    if (!Array.isArray(results) || results.length === 0)
      throw new ConfigurationError("fromWorkflowStep() needs at least one result event (made by zodEvent) in results.", "results", results);
    if (!instructions) throw new ConfigurationError("fromWorkflowStep() needs instructions: what the agent is to do.", "instructions", instructions);
    const eventTool = (event: ZodEvent, description: string) => {
      if (!event.debugLabel)
        throw new ConfigurationError("Each event of fromWorkflowStep() needs a debugLabel: its tool is named send_<debugLabel>.", "debugLabel", event);
      return eventEmitterTool(`send_${event.debugLabel}`, event, workflowContext, description);
    };
    const allTools: BaseToolWithCall[] = [
      ...(tools ?? []),
      ...results.map((result) => eventTool(result, `Use this tool to send the ${result.debugLabel} event as the final result of your task.`)),
      ...(events ?? []).map((event) => eventTool(event, `Use this tool to send the ${event.debugLabel} event to the workflow program.`)),
    ];
    return new FunctionAgent({
      llm: checkToolCalling(llm ?? defaultLLM("fromWorkflowStep()"), "fromWorkflowStep()"),
      systemPrompt: STEP_HANDLER_SYSTEM_PROMPT_TPL.replace("{instructions}", instructions),
      tools: allTools,
    });
  }
}

/** A tool that sends `event` into `context`; its description carries the event's JSON Schema, as upstream's, to help the model with enums and literals. */
function eventEmitterTool(name: string, event: ZodEvent, context: WorkflowContext, description: string): BaseToolWithCall {
  const isZod4 = "_zod" in event.schema;
  const parameters = isZod4 ? z.object({ eventData: event.schema as z.ZodType }) : z3.object({ eventData: event.schema as unknown as z3.ZodTypeAny });
  const jsonSchema = isZod4 ? `\n\nPlease provide the event data in the following JSON schema: ${JSON.stringify(z.toJSONSchema(parameters as z.ZodType))}` : "";
  return tool({
    name,
    description: description + jsonSchema,
    parameters: parameters as z.ZodType<{ eventData: unknown }>,
    execute: ({ eventData }: { eventData: unknown }) => {
      context.sendEvent(event.with(eventData ?? {}));
      return `Successfully sent a ${name} event!`;
    },
  }) as BaseToolWithCall;
}
