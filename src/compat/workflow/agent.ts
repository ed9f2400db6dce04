/**
 * `agent()` and `multiAgent()` of `@llamaindex/workflow` on stepflow's `FunctionCallingAgent`:
 * the same calls and the same events to stream (agent input, setup, stream deltas, tool call,
 * tool call result, output, stop), with the agent's timeout, parallel tool calls, argument
 * validation and the model told about an unknown tool instead of the process crashing. Several
 * agents hand the conversation to one another with upstream's `handOff` tool.
 */
import { createMemory, type Memory } from "@llamaindex/core/memory";
import type {
  BaseTool,
  ChatMessage,
  ChatResponse,
  ChatResponseChunk,
  LLMChatParamsStreaming,
  MessageContent,
  ToolCallLLM,
  ToolResult,
} from "@llamaindex/core/llms";
import { z } from "zod";
import type { JSONValue } from "@llamaindex/core/global";
import { FunctionOutputEvent, StreamEvent, ToolCallEvent } from "../../../events/index.ts";
import { FunctionCallingAgent } from "../../../workflows/function-calling-agent.ts";
import { ConfigurationError, Context, WorkflowTimeoutError } from "../../index.ts";
import { tool } from "../../tools/tool.ts";
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
export type AgentResultData = { result: MessageContent; message: ChatMessage; state?: AgentWorkflowState };

/**
 * Where a turn ended: the conversation's memory and the agent that answered.
 * @example
 * import type { AgentWorkflowState } from "stepflow/compat/workflow";
 * const whoAnswered = (state: AgentWorkflowState) => state.currentAgentName;
 */
export type AgentWorkflowState = { memory: Memory; scratchpad: ChatMessage[]; currentAgentName: string; agents: string[]; nextAgentName: string | null };

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

/**
 * Options of {@link agent}: upstream's, with `timeout` in seconds (default 60, as upstream; here
 * it fires) and `toolTimeout`, `maxIterations` passed on to `FunctionCallingAgent`.
 * `canHandoffTo` (agents or their names) matters in {@link multiAgent}: the agents this one may
 * hand the conversation to with the `handOff` tool.
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
  readonly canHandoffTo?: readonly (string | AgentWorkflow)[];
  readonly timeout?: number | null;
  readonly toolTimeout?: number;
  readonly maxIterations?: number;
  readonly verbose?: boolean;
}

/**
 * Options of {@link multiAgent}: the agents (made by {@link agent}), the one that takes the
 * user's message first, and the turn's `timeout` in seconds (default 60; `null`: none).
 * @example
 * import { agent, type MultiAgentParams } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * const helper = agent({ name: "Helper", llm: new OfflineDemoLLM() });
 * const params: MultiAgentParams = { agents: [helper], rootAgent: helper, timeout: 120 };
 */
export interface MultiAgentParams {
  readonly agents: readonly AgentWorkflow[];
  readonly rootAgent: AgentWorkflow;
  readonly timeout?: number | null;
  readonly verbose?: boolean;
}

/**
 * One agent of an {@link AgentWorkflow}, as `getAgents()` lists it.
 * @example
 * import type { WorkflowAgent } from "stepflow/compat/workflow";
 * const describe = (a: WorkflowAgent) => `${a.name}: ${a.description} (hands off to ${a.canHandoffTo.join(", ") || "nobody"})`;
 */
export interface WorkflowAgent {
  readonly name: string;
  readonly description: string;
  readonly llm: ToolCallLLM;
  readonly tools: readonly BaseTool[];
  readonly systemPrompt: string | undefined;
  readonly canHandoffTo: readonly string[];
}

/**
 * An agent, or several, as `@llamaindex/workflow` exposes them: `run` for the final event,
 * `runStream` for every event, or a context of its own (send `startAgentEvent`, read the stream).
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
  /** The agents, in the order given. */
  getAgents(): WorkflowAgent[];
  /**
   * The root agent's `FunctionCallingAgent`, as `agent()` configured it (its LLM, tools, system
   * prompt, limits). Each turn runs on a copy of it made for the turn, whose LLM also streams
   * the input events and, in `multiAgent()`, with the `handOff` tool and what is left of the
   * turn's timeout.
   */
  readonly agent: FunctionCallingAgent;
}

const text = (content: MessageContent): string =>
  typeof content === "string" ? content : content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");

interface AgentSpec extends WorkflowAgent {
  readonly toolTimeout: number | undefined;
  readonly maxIterations: number | undefined;
  /** agent()'s timeout in seconds, or null. */
  readonly timeout: number | null;
  /** Its names to hand off to, as given: resolved by multiAgent, when every agent exists. */
  readonly handoffTargets: readonly (string | AgentWorkflow)[];
  readonly runner: FunctionCallingAgent;
}

const SPECS = Symbol("stepflow.compat.agents");
type WithSpecs = AgentWorkflow & { readonly [SPECS]: readonly AgentSpec[] };

/** Upstream's words, so that a model prompted for upstream's agents behaves the same. */
const handoffDescription = (targets: readonly AgentSpec[]) =>
  `Useful for handing off to another agent.\nIf you are currently not equipped to handle the user's request, or another agent is better suited to handle the request, please hand off to the appropriate agent.\n\nCurrently available agents: \n${JSON.stringify(Object.fromEntries(targets.map((t) => [t.name, t.description])))}\n`;
const handoffNote = (toAgent: string, reason: string) =>
  `Agent ${toAgent} is now handling the request due to the following reason: ${reason}.\nPlease continue with the current request.`;
const MAX_HANDOFFS = 20;

/** A turn's handoff: set by the `handOff` tool, read by the LLM wrapper and the turn's loop. */
interface Handoff {
  to: string | null;
  note: string;
}

/**
 * The agent's LLM for one run: each call is first announced with upstream's `agentInputEvent`
 * and `agentSetupEvent` (the conversation, then all the model reads); once `handOff` succeeded,
 * the next call answers the handoff note without calling the model, so that the agent's run
 * ends there, as upstream's `returnDirect` does.
 */
function turnLLM(llm: ToolCallLLM, handoff: Handoff, announce: (messages: ChatMessage[]) => void): ToolCallLLM {
  const chat = (params: LLMChatParamsStreaming | { stream?: false; messages: ChatMessage[] }) => {
    if (handoff.to === null) {
      announce(params.messages);
      return (llm.chat as (p: unknown) => Promise<unknown>)(params);
    }
    const message: ChatMessage = { role: "assistant", content: handoff.note };
    if (params.stream === true) {
      const chunks: ChatResponseChunk[] = [{ delta: handoff.note, raw: null }];
      return Promise.resolve(
        (async function* () {
          yield* chunks;
        })(),
      );
    }
    return Promise.resolve({ message, raw: null } satisfies ChatResponse);
  };
  return {
    get metadata() {
      return llm.metadata;
    },
    supportToolCall: true,
    chat,
    complete: llm.complete.bind(llm),
    exec: llm.exec?.bind(llm),
    streamExec: llm.streamExec?.bind(llm),
  } as unknown as ToolCallLLM;
}

function handoffTool(spec: AgentSpec, targets: readonly AgentSpec[], handoff: Handoff): BaseTool {
  return tool({
    name: "handOff",
    description: handoffDescription(targets),
    parameters: z.object({
      toAgent: z.string().describe("The name of the agent to hand off to"),
      reason: z.string().describe("The reason for handing off to the agent"),
    }),
    execute: ({ toAgent, reason }) => {
      if (!spec.canHandoffTo.includes(toAgent))
        return `Agent ${toAgent} not found. Select a valid agent to hand off to. Valid agents: ${spec.canHandoffTo.join(", ")}`;
      handoff.to = toAgent;
      handoff.note = handoffNote(toAgent, reason);
      return handoff.note;
    },
  }) as BaseTool;
}

function runnerOf(spec: Omit<AgentSpec, "runner">, llm: ToolCallLLM, tools: readonly BaseTool[], timeout: number | null): FunctionCallingAgent {
  return new FunctionCallingAgent({
    llm,
    tools,
    timeout,
    ...(spec.systemPrompt !== undefined ? { systemPrompt: spec.systemPrompt } : {}),
    ...(spec.toolTimeout !== undefined ? { toolTimeout: spec.toolTimeout } : {}),
    ...(spec.maxIterations !== undefined ? { maxIterations: spec.maxIterations } : {}),
  });
}

function specOf(params: SingleAgentParams): AgentSpec {
  if (params === null || typeof params !== "object" || params.llm === undefined)
    throw new ConfigurationError("agent() takes { llm, tools?, systemPrompt?, name?, ... }: the llm is missing.", "llm", params?.llm);
  const base = {
    name: params.name ?? "Agent",
    description: params.description ?? "A single agent that uses the provided tools or functions.",
    llm: params.llm,
    tools: params.tools ?? [],
    systemPrompt: params.systemPrompt,
    canHandoffTo: [] as string[],
    handoffTargets: params.canHandoffTo ?? [],
    toolTimeout: params.toolTimeout,
    maxIterations: params.maxIterations,
    timeout: params.timeout === undefined ? 60 : params.timeout,
  };
  return { ...base, runner: runnerOf(base, base.llm, base.tools, base.timeout) };
}

/** One agent's run inside a turn, its events translated to upstream's. */
async function runAgent(
  context: WorkflowContext,
  spec: AgentSpec,
  runner: FunctionCallingAgent,
  history: ChatMessage[],
  input: ChatMessage,
  handoff: Handoff,
): Promise<{ response: ChatMessage; ctx: Context }> {
  const name = spec.name;
  const ctx = new Context(runner);
  if (history.length > 0) await ctx.store.set("memory", createMemory(history, { llm: spec.llm }));
  const handler = runner.run({ input }, { ctx, signal: context.signal });
  let response = "";
  const calls = new Map<string, AgentToolCall>();
  const results: AgentToolCallResult[] = [];
  let expected = 0;
  for await (const ev of handler.streamEvents()) {
    if (ev instanceof StreamEvent) {
      if (handoff.to !== null) continue; // the handoff note, not the model's words
      response += ev.delta;
      context.sendEvent(agentStreamEvent.with({ delta: ev.delta, response, currentAgentName: name, raw: null }));
    } else if (ev instanceof ToolCallEvent) {
      const toolCalls = ev.toolCalls.map((call) => ({
        agentName: name,
        toolName: call.name,
        toolKwargs: (call.input ?? {}) as Record<string, JSONValue>,
        toolId: call.id,
      }));
      const message: ChatMessage = { role: "assistant", content: response, options: { toolCall: ev.toolCalls } };
      context.sendEvent(
        agentStepEvent.with({ agentName: name, response: message, toolCalls }),
        agentOutputEvent.with({ response: message, toolCalls, raw: null, currentAgentName: name }),
        toolCallsEvent.with({ agentName: name, toolCalls }),
      );
      response = "";
      expected = toolCalls.length;
      for (const call of toolCalls) {
        calls.set(call.toolId, call);
        context.sendEvent(agentToolCallEvent.with(call));
      }
    } else if (ev instanceof FunctionOutputEvent) {
      const source = ev.output;
      const result: AgentToolCallResult = {
        toolName: source.toolName,
        toolKwargs: calls.get(source.toolCallId)?.toolKwargs ?? {},
        toolId: source.toolCallId,
        toolOutput: { id: source.toolCallId, result: source.content, isError: source.isError },
        returnDirect: source.toolName === "handOff" && handoff.to !== null,
        raw: source.output as JSONValue,
      };
      results.push(result);
      context.sendEvent(agentToolCallResultEvent.with(result));
      // All the calls of the model's turn have their result: upstream's toolResultsEvent.
      if (results.length === expected) context.sendEvent(toolResultsEvent.with({ agentName: name, results: results.splice(0) }));
    }
  }
  const result = await handler;
  return { response: result.response, ctx };
}

/** Builds the workflow of `agents`: a `startAgentEvent` runs one turn, from `root`, through handoffs. */
function agentWorkflow(specs: readonly AgentSpec[], root: AgentSpec, timeout: number | null, multi: boolean): WithSpecs {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const workflow = createWorkflow();
  workflow.handle([startAgentEvent], async (context: WorkflowContext, start) => {
    // multiAgent's timeout covers the whole turn; agent()'s is the agent's own.
    const deadline = multi && timeout !== null ? Date.now() + timeout * 1000 : null;
    const { userInput, chatHistory } = start.data;
    let history = [...(chatHistory ?? [])];
    let input: ChatMessage;
    if (userInput !== undefined && userInput !== null) input = { role: "user", content: userInput };
    else if (history.at(-1)?.role === "user") input = history.pop() as ChatMessage;
    else throw new ConfigurationError("Either provide a user message or a chat history with a user message as the last message.", "userInput", userInput);
    let spec = root;
    for (let handoffs = 0; ; handoffs++) {
      const handoff: Handoff = { to: null, note: "" };
      const name = spec.name;
      const announce = (messages: ChatMessage[]) => {
        const conversation = messages[0]?.role === "system" ? messages.slice(1) : messages;
        context.sendEvent(
          agentInputEvent.with({ input: conversation, currentAgentName: name }),
          agentSetupEvent.with({ input: messages, currentAgentName: name }),
        );
      };
      const left = deadline === null ? spec.timeout : (deadline - Date.now()) / 1000;
      if (left !== null && left <= 0)
        throw new WorkflowTimeoutError(`The agents' turn ran longer than its timeout of ${timeout} s. Raise multiAgent({ timeout }), or null for none.`);
      const targets = multi ? spec.canHandoffTo.map((target) => byName.get(target) as AgentSpec) : [];
      const tools = targets.length > 0 ? [...spec.tools, handoffTool(spec, targets, handoff)] : spec.tools;
      // A runner per agent run: its LLM announces each call in this context, and its handOff tool
      // and timeout are this turn's.
      const runner = runnerOf(spec, turnLLM(spec.llm, handoff, announce), tools, left);
      const { response, ctx } = await runAgent(context, spec, runner, history, input, handoff);
      const memory = (await ctx.store.get("memory")) as Memory;
      if (handoff.to === null) {
        context.sendEvent(
          agentStepEvent.with({ agentName: spec.name, response, toolCalls: [] }),
          agentOutputEvent.with({ response, toolCalls: [], raw: null, currentAgentName: spec.name }),
        );
        const state: AgentWorkflowState = { memory, scratchpad: [], currentAgentName: spec.name, agents: [...byName.keys()], nextAgentName: null };
        return stopAgentEvent.with({ result: text(response.content), message: response, state });
      }
      if (handoffs >= MAX_HANDOFFS)
        throw new Error(
          `The agents handed the conversation to one another ${MAX_HANDOFFS} times in one turn without an answer. Check their descriptions and canHandoffTo.`,
        );
      // The next agent reads the whole conversation up to the handoff's tool result, as upstream's
      // does: not the note that ended the last agent's run, so that the model's input ends with
      // a user-side message (a trailing assistant message reads as a prefill to some providers).
      const conversation = await memory.get();
      if (conversation.at(-1)?.role === "assistant" && conversation.at(-1)?.content === handoff.note) conversation.pop();
      input = conversation.pop() as ChatMessage;
      history = conversation;
      spec = byName.get(handoff.to) as AgentSpec;
    }
  });

  const runStream = (userInput: MessageContent, options?: { chatHistory?: ChatMessage[] }) => {
    const { stream, sendEvent } = workflow.createContext();
    sendEvent(startAgentEvent.with({ userInput, chatHistory: options?.chatHistory }));
    return stream.until(stopAgentEvent);
  };

  return {
    [SPECS]: specs,
    handle: workflow.handle,
    createContext: workflow.createContext,
    agent: root.runner,
    getAgents: () =>
      specs.map(({ name, description, llm, tools, systemPrompt, canHandoffTo }) => ({ name, description, llm, tools, systemPrompt, canHandoffTo })),
    runStream,
    async run(userInput, options) {
      const final = (await runStream(userInput, options).toArray()).at(-1);
      if (!stopAgentEvent.include(final)) throw new Error(`Agent stopped with unexpected ${String(final)} event.`);
      return final;
    },
  };
}

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
  const spec = specOf(params);
  return agentWorkflow([spec], spec, null, false);
}

const specsOf = (workflow: AgentWorkflow, what: string): readonly AgentSpec[] => {
  const specs = (workflow as Partial<WithSpecs>)?.[SPECS];
  if (specs === undefined) throw new ConfigurationError(`multiAgent() takes agents made by agent(); ${what} is not one.`, what, workflow);
  return specs;
};

/**
 * Creates a workflow of several agents (upstream's `multiAgent()`): the root agent takes the
 * user's message; an agent with `canHandoffTo` gets upstream's `handOff` tool and, when it
 * calls it, the named agent continues the turn with the whole conversation. The events are
 * those of {@link agent}, each naming its agent (`currentAgentName`, `agentName`).
 * @example
 * import { z } from "zod";
 * import { agent, agentInputEvent, multiAgent } from "stepflow/compat/workflow";
 * import { ScriptedLLM } from "stepflow/llm/scripted";
 * import { tool } from "stepflow/tools";
 * const weather = tool({ name: "weather", description: "The weather in a city", parameters: z.object({ city: z.string() }), execute: ({ city }) => `Sunny in ${city}` });
 * const llm = new ScriptedLLM([
 *   { toolCalls: [{ name: "handOff", input: { toAgent: "WeatherAgent", reason: "it is about the weather" } }] },
 *   { toolCalls: [{ name: "weather", input: { city: "Paris" } }] },
 *   { text: "It is sunny in Paris." },
 * ]);
 * const weatherAgent = agent({ name: "WeatherAgent", description: "Knows the weather", tools: [weather], llm });
 * const frontDesk = agent({ name: "FrontDesk", description: "Greets the user", llm, canHandoffTo: [weatherAgent] });
 * const agents = multiAgent({ agents: [frontDesk, weatherAgent], rootAgent: frontDesk });
 * for await (const ev of agents.runStream("What is the weather in Paris?")) {
 *   if (agentInputEvent.include(ev)) console.log(`${ev.data.currentAgentName} takes over`);
 * }
 */
export function multiAgent(params: MultiAgentParams): AgentWorkflow {
  if (params === null || typeof params !== "object" || !Array.isArray(params.agents) || params.agents.length === 0)
    throw new ConfigurationError("multiAgent() takes { agents: [agent(...), ...], rootAgent }: agents is missing or empty.", "agents", params?.agents);
  const given = params.agents.flatMap((workflow, i) => specsOf(workflow, `agents[${i}]`));
  const names = given.map((spec) => spec.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined)
    throw new ConfigurationError(`The agent names must be unique: two agents are named "${duplicate}". Give each agent({ name }).`, "agents", names);
  const rootSpecs = specsOf(params.rootAgent, "rootAgent");
  if (rootSpecs.length !== 1)
    throw new ConfigurationError(`The root agent must be a single agent; it is a workflow of ${rootSpecs.length} agents.`, "rootAgent", params.rootAgent);
  const rootName = (rootSpecs[0] as AgentSpec).name;
  if (!names.includes(rootName)) throw new ConfigurationError(`Root agent ${rootName} is not among the agents: add it to agents.`, "rootAgent", rootName);
  const specs = given.map((spec): AgentSpec => {
    const canHandoffTo = spec.handoffTargets.flatMap((target) =>
      typeof target === "string" ? [target] : specsOf(target, `${spec.name}'s canHandoffTo`).map((s) => s.name),
    );
    const missing = canHandoffTo.filter((name) => !names.includes(name));
    if (missing.length > 0)
      throw new ConfigurationError(
        `Agent "${spec.name}" references non-existent agents in canHandoffTo: ${missing.join(", ")}. Add them to agents.`,
        "canHandoffTo",
        missing,
      );
    return { ...spec, canHandoffTo };
  });
  const root = specs.find((spec) => spec.name === rootName) as AgentSpec;
  return agentWorkflow(specs, root, params.timeout === undefined ? 60 : params.timeout, true);
}
