/**
 * `AgentWorkflow`, `agent()` and `multiAgent()` of `@llamaindex/workflow`, run by stepflow's
 * `FunctionCallingAgent`: the same classes and calls, the same events to stream (agent input,
 * setup, stream deltas, tool call, tool call result, output, stop), with the workflow's timeout,
 * parallel tool calls, argument validation and the model told about an unknown tool instead of
 * the run failing. Several agents hand the conversation to one another with upstream's
 * `handOff` tool; `responseFormat` turns the final answer into a validated object.
 */
import { createMemory, type Memory } from "@llamaindex/core/memory";
import type {
  BaseTool,
  BaseToolWithCall,
  ChatMessage,
  ChatResponse,
  ChatResponseChunk,
  LLMChatParamsStreaming,
  MessageContent,
  ToolCallLLM,
} from "@llamaindex/core/llms";
import type { JSONObject, JSONValue } from "@llamaindex/core/global";
import { consoleLogger, emptyLogger, type Logger } from "@llamaindex/env";
import { z } from "zod";
import { FunctionOutputEvent, StreamEvent, ToolCallEvent } from "../../../events/index.ts";
import { FunctionCallingAgent } from "../../../workflows/function-calling-agent.ts";
import { ConfigurationError, Context, WorkflowTimeoutError } from "../../index.ts";
import { tool } from "../../tools/tool.ts";
import type { WorkflowEvent, WorkflowEventData } from "../workflow-core/event.ts";
import { createWorkflow, type Workflow } from "../workflow-core/workflow.ts";
import type { Handler, WorkflowContext } from "../workflow-core/context.ts";
import type { WorkflowStream } from "../workflow-core/stream.ts";
import type { ZodSchema } from "../workflow-core/util/zod.ts";
import {
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
  type AgentInputData,
  type AgentResultData,
  type AgentToolCall,
  type AgentToolCallResult,
  type AgentWorkflowState,
} from "./events.ts";
import { FunctionAgent, type BaseWorkflowAgent, type FunctionAgentParams } from "./function-agent.ts";

/**
 * Options of {@link agent} and {@link AgentWorkflow.fromTools}: the agent's (see
 * `FunctionAgentParams`), and the workflow's: `timeout` in seconds for a turn (default 60 as
 * upstream; here it fires; `null`: none), a `memory` the turns add to, `verbose` / `logger`.
 * @example
 * import type { SingleAgentParams } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * const params: SingleAgentParams = { llm: new OfflineDemoLLM(), timeout: 30 };
 */
export type SingleAgentParams = FunctionAgentParams & {
  memory?: Memory | undefined;
  verbose?: boolean | undefined;
  timeout?: number | null | undefined;
  logger?: Logger | undefined;
};

/**
 * Options of `new AgentWorkflow(...)` and {@link multiAgent}: the agents (`FunctionAgent`s, or
 * workflows made by {@link agent}), the one that takes the user's message first, and the
 * workflow's `timeout` in seconds for a whole turn, across agents (default 60; `null`: none).
 * @example
 * import { agent, type AgentWorkflowParams } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * const helper = agent({ name: "Helper", llm: new OfflineDemoLLM() });
 * const params: AgentWorkflowParams = { agents: [helper], rootAgent: helper, timeout: 120 };
 */
export type AgentWorkflowParams = {
  agents: readonly (BaseWorkflowAgent | AgentWorkflow)[];
  rootAgent: BaseWorkflowAgent | AgentWorkflow;
  /** The conversation so far; each turn adds its messages to it. Default: a new, empty one per turn. */
  memory?: Memory | undefined;
  verbose?: boolean | undefined;
  timeout?: number | null | undefined;
  logger?: Logger | undefined;
};

/**
 * The options of {@link multiAgent} (upstream's name for {@link AgentWorkflowParams}).
 * @example
 * import type { MultiAgentParams } from "stepflow/compat/workflow";
 * const timeoutOf = (params: MultiAgentParams) => params.timeout ?? 60;
 */
export type MultiAgentParams = AgentWorkflowParams;

/**
 * An agent as `getAgents()` lists it (upstream's `BaseWorkflowAgent`).
 * @example
 * import type { WorkflowAgent } from "stepflow/compat/workflow";
 * const describe = (a: WorkflowAgent) => `${a.name}: ${a.description} (hands off to ${a.canHandoffTo.join(", ") || "nobody"})`;
 */
export type WorkflowAgent = BaseWorkflowAgent;

/**
 * What `run` and `runStream` take besides the user's message: earlier messages, a state to go on
 * from (its memory), and a zod schema for the final answer as an object (`result.data.object`).
 * @example
 * import { z } from "zod";
 * import type { AgentRunParams } from "stepflow/compat/workflow";
 * const params: AgentRunParams<{ city: string }> = { responseFormat: z.object({ city: z.string() }) };
 */
export type AgentRunParams<T = JSONObject> = {
  chatHistory?: ChatMessage[] | undefined;
  state?: AgentWorkflowState | undefined;
  responseFormat?: ZodSchema<T> | undefined;
};

const text = (content: MessageContent): string =>
  typeof content === "string" ? content : content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");

/** Upstream's words, so that a model prompted for upstream's agents behaves the same. */
const handoffDescription = (targets: readonly BaseWorkflowAgent[]) =>
  `Useful for handing off to another agent.\nIf you are currently not equipped to handle the user's request, or another agent is better suited to handle the request, please hand off to the appropriate agent.\n\nCurrently available agents: \n${JSON.stringify(Object.fromEntries(targets.map((t) => [t.name, t.description])))}\n`;
const handoffNote = (toAgent: string, reason: string) =>
  `Agent ${toAgent} is now handling the request due to the following reason: ${reason}.\nPlease continue with the current request.`;
const MAX_HANDOFFS = 20;
const handoffParameters = z.object({
  toAgent: z.string().describe("The name of the agent to hand off to"),
  reason: z.string().describe("The reason for handing off to the agent"),
});

/** The `handOff` tools agent workflows put in their agents' `tools`: each run uses one bound to its turn instead. */
const HANDOFF_TOOLS = new WeakSet<BaseTool>();

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

/** The `handOff` tool of one agent's run in a turn. */
function turnHandoffTool(agent: BaseWorkflowAgent, targets: readonly BaseWorkflowAgent[], handoff: Handoff): BaseTool {
  return tool({
    name: "handOff",
    description: handoffDescription(targets),
    parameters: handoffParameters,
    execute: ({ toAgent, reason }) => {
      if (!targets.some((target) => target.name === toAgent))
        return `Agent ${toAgent} not found. Select a valid agent to hand off to. Valid agents: ${targets.map((t) => t.name).join(", ")}`;
      handoff.to = toAgent;
      handoff.note = handoffNote(toAgent, reason);
      return handoff.note;
    },
  }) as BaseTool;
}

/** The `handOff` tool shown in an agent's `tools`: runs replace it with their own; called outside a run, it says so. */
function listedHandoffTool(targets: readonly BaseWorkflowAgent[]): BaseToolWithCall {
  const made = tool({
    name: "handOff",
    description: handoffDescription(targets),
    parameters: handoffParameters,
    execute: () => {
      throw new Error("handOff works while its agent workflow runs a turn (run or runStream); called outside one, it has no turn to hand off.");
    },
  }) as BaseToolWithCall;
  HANDOFF_TOOLS.add(made);
  return made;
}

function runnerOf(agent: BaseWorkflowAgent, llm: ToolCallLLM, tools: readonly BaseTool[], timeout: number | null): FunctionCallingAgent {
  return new FunctionCallingAgent({
    llm,
    tools,
    timeout,
    ...(agent.systemPrompt ? { systemPrompt: agent.systemPrompt } : {}),
    ...(agent.toolTimeout !== undefined ? { toolTimeout: agent.toolTimeout } : {}),
    ...(agent.maxIterations !== undefined ? { maxIterations: agent.maxIterations } : {}),
  });
}

/** One agent's run inside a turn, its events translated to upstream's. */
async function runAgent(
  context: WorkflowContext,
  agent: BaseWorkflowAgent,
  runner: FunctionCallingAgent,
  history: ChatMessage[],
  input: ChatMessage,
  handoff: Handoff,
): Promise<{ response: ChatMessage; ctx: Context }> {
  const name = agent.name;
  const ctx = new Context(runner);
  if (history.length > 0) await ctx.store.set("memory", createMemory(history, { llm: agent.llm }));
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

const isAgentWorkflow = (value: unknown): value is AgentWorkflow => value instanceof AgentWorkflow;

/**
 * An event-driven workflow that runs agents with tools (upstream's `AgentWorkflow`): `run` for
 * the final event, `runStream` for every event, or a context of its own (send
 * `startAgentEvent`, read the stream). Each agent's turn is run by stepflow's
 * `FunctionCallingAgent`: the workflow's `timeout` fires, a turn's tool calls run in parallel
 * with validated arguments, and a call of an unknown tool is reported to the model.
 * @example
 * import { AgentWorkflow, FunctionAgent, agentToolCallEvent } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * import { calculatorTools } from "stepflow/tools/calculator";
 * const math = new FunctionAgent({ name: "Math", llm: new OfflineDemoLLM(), tools: [...calculatorTools] });
 * const workflow = new AgentWorkflow({ agents: [math], rootAgent: math, timeout: 30 });
 * for await (const ev of workflow.runStream("What is 2 + 3?")) if (agentToolCallEvent.include(ev)) console.log(ev.data.toolName);
 */
export class AgentWorkflow implements Workflow {
  readonly #agents = new Map<string, BaseWorkflowAgent>();
  readonly #rootAgentName: string;
  readonly #workflow = createWorkflow();
  readonly #timeout: number | null;
  readonly #memory: Memory | undefined;
  readonly #logger: Logger;
  /** What `runStream` asked for, by the start event it sent. */
  readonly #runs = new WeakMap<object, AgentRunParams<unknown>>();

  constructor(params: AgentWorkflowParams) {
    if (params === null || typeof params !== "object" || !Array.isArray(params.agents) || params.agents.length === 0)
      throw new ConfigurationError("An agent workflow takes { agents: [agent, ...], rootAgent }: agents is missing or empty.", "agents", params?.agents);
    const agents = params.agents.flatMap((a, i): BaseWorkflowAgent[] => {
      if (isAgentWorkflow(a)) return a.getAgents();
      if (a === null || typeof a !== "object" || typeof a.name !== "string" || !Array.isArray(a.tools))
        throw new ConfigurationError(`agents[${i}] is not an agent: give FunctionAgents, or workflows made by agent().`, `agents[${i}]`, a);
      return [a];
    });
    let rootName: string;
    if (isAgentWorkflow(params.rootAgent)) {
      const roots = params.rootAgent.getAgents();
      if (roots.length !== 1)
        throw new ConfigurationError(`Root agent must be a single agent, but it is a workflow with ${roots.length} agents.`, "rootAgent", params.rootAgent);
      rootName = (roots[0] as BaseWorkflowAgent).name;
    } else if (params.rootAgent !== null && typeof params.rootAgent === "object" && typeof params.rootAgent.name === "string") {
      rootName = params.rootAgent.name;
    } else throw new ConfigurationError("rootAgent must be one of the agents (a FunctionAgent, or a workflow made by agent()).", "rootAgent", params.rootAgent);
    if (!agents.some((a) => a.name === rootName))
      throw new ConfigurationError(`Root agent ${rootName} not found in agents: add it to agents.`, "rootAgent", rootName);
    const names = agents.map((a) => a.name);
    const duplicate = names.find((name, i) => names.indexOf(name) !== i);
    if (duplicate !== undefined)
      throw new ConfigurationError(`The agent names must be unique: two agents are named "${duplicate}". Give each agent a name of its own.`, "agents", names);
    const timeout = params.timeout === undefined ? 60 : params.timeout;
    if (timeout !== null && (!Number.isFinite(timeout) || timeout <= 0))
      throw new ConfigurationError(`timeout is in seconds: a positive number, or null for none; got ${String(timeout)}.`, "timeout", timeout);
    this.#rootAgentName = rootName;
    this.#timeout = timeout;
    this.#memory = params.memory;
    this.#logger = params.logger ?? (params.verbose ? consoleLogger : emptyLogger);
    for (const a of agents) this.#agents.set(a.name, a);
    if (agents.length > 1)
      for (const a of agents) {
        this.#validateAgent(a);
        this.#addHandoffTool(a);
      }
    this.#workflow.handle([startAgentEvent], (context, start) => this.#turn(context, start));
  }

  /**
   * A workflow of one agent made from its options (upstream's `fromTools`; {@link agent} is the same).
   * @example
   * import { AgentWorkflow } from "stepflow/compat/workflow";
   * import { OfflineDemoLLM } from "stepflow/llm/offline";
   * import { calculatorTools } from "stepflow/tools/calculator";
   * const workflow = AgentWorkflow.fromTools({ llm: new OfflineDemoLLM(), tools: [...calculatorTools], timeout: 30 });
   * console.log((await workflow.run("What is 2 + 3?")).data.result);
   */
  static fromTools(params: SingleAgentParams): AgentWorkflow {
    if (params === null || typeof params !== "object")
      throw new ConfigurationError("agent() takes { llm, tools?, systemPrompt?, name?, ... }.", "params", params);
    const { memory, verbose, timeout, logger, ...agentParams } = params;
    const one = new FunctionAgent(agentParams);
    return new AgentWorkflow({ agents: [one], rootAgent: one, memory, verbose, timeout, logger });
  }

  /** Registers a handler on the workflow, as `createWorkflow().handle` does. */
  handle<const AcceptEvents extends WorkflowEvent<unknown>[], Result extends WorkflowEventData<unknown> | void>(
    accept: AcceptEvents,
    handler: Handler<AcceptEvents, Result>,
  ): void {
    this.#workflow.handle(accept, handler);
  }

  /** A new run: send `startAgentEvent.with({ userInput })` into it and read its stream. */
  createContext(): WorkflowContext {
    return this.#workflow.createContext();
  }

  /** Adds an agent (it may hand off to the agents already there). */
  addAgent(agent: BaseWorkflowAgent): this {
    if (this.#agents.has(agent.name))
      throw new ConfigurationError(`The agent names must be unique: "${agent.name}" is already in this workflow.`, "agent", agent.name);
    this.#agents.set(agent.name, agent);
    this.#validateAgent(agent);
    this.#addHandoffTool(agent);
    return this;
  }

  /** The agents, in the order given. */
  getAgents(): BaseWorkflowAgent[] {
    return [...this.#agents.values()];
  }

  /**
   * The root agent's `FunctionCallingAgent`, as configured (its LLM, tools, system prompt,
   * limits). Each turn runs on one made for the turn, whose LLM also streams the input events
   * and, with several agents, with the `handOff` tool and what is left of the turn's timeout.
   */
  get agent(): FunctionCallingAgent {
    const root = this.#agents.get(this.#rootAgentName) as BaseWorkflowAgent;
    return runnerOf(
      root,
      root.llm,
      root.tools.filter((t) => !HANDOFF_TOOLS.has(t)),
      this.#timeout,
    );
  }

  /**
   * The `handOff` tool for `agents` (upstream's; the workflow adds it to each agent with
   * `canHandoffTo`). Called within a turn, it hands the conversation over.
   */
  createHandoffTool(agents: Map<string, BaseWorkflowAgent>): BaseToolWithCall {
    return listedHandoffTool([...agents.values()]);
  }

  /** Runs one turn; the stream ends with the `stopAgentEvent`. */
  runStream<T = JSONObject>(userInput: MessageContent, params?: AgentRunParams<T>): WorkflowStream<WorkflowEventData<AgentResultData<T>>> {
    const { stream, sendEvent } = this.#workflow.createContext();
    const start = startAgentEvent.with({ userInput, chatHistory: params?.chatHistory });
    if (params !== undefined) this.#runs.set(start, params as AgentRunParams<unknown>);
    sendEvent(start);
    return stream.until(stopAgentEvent) as unknown as WorkflowStream<WorkflowEventData<AgentResultData<T>>>;
  }

  /** Runs one turn; resolves to the `stopAgentEvent` (`data.result` is the reply, `data.object` the structured output). */
  async run<T = JSONObject>(userInput: MessageContent, params?: AgentRunParams<T>): Promise<WorkflowEventData<AgentResultData<T>>> {
    const final = (await this.runStream(userInput, params).toArray()).at(-1);
    if (!stopAgentEvent.include(final)) throw new Error(`Agent stopped with unexpected ${String(final)} event.`);
    return final as unknown as WorkflowEventData<AgentResultData<T>>;
  }

  #validateAgent(agent: BaseWorkflowAgent): void {
    const missing = agent.canHandoffTo.filter((name) => !this.#agents.has(name));
    if (missing.length > 0)
      throw new ConfigurationError(
        `Agent "${agent.name}" references non-existent agents in canHandoffTo: ${missing.join(", ")}. Add them to agents.`,
        "canHandoffTo",
        missing,
      );
  }

  /** As upstream: an agent that can hand off gets `handOff` in its `tools`, once. */
  #addHandoffTool(agent: BaseWorkflowAgent): void {
    if (agent.canHandoffTo.length === 0 || agent.tools.some((t) => t.metadata.name === "handOff")) return;
    agent.tools.push(listedHandoffTool(agent.canHandoffTo.map((name) => this.#agents.get(name) as BaseWorkflowAgent)));
  }

  /** One turn: from the root agent, through handoffs, to the answer. */
  async #turn(context: WorkflowContext, start: WorkflowEventData<AgentInputData>) {
    const run = this.#runs.get(start) ?? {};
    const deadline = this.#timeout === null ? null : Date.now() + this.#timeout * 1000;
    const memory = run.state?.memory ?? this.#memory;
    const before = memory === undefined ? [] : await memory.get();
    const { userInput, chatHistory } = start.data;
    let history = [...before, ...(chatHistory ?? [])];
    let input: ChatMessage;
    if (userInput !== undefined && userInput !== null && userInput !== "") input = { role: "user", content: userInput };
    else if (history.at(-1)?.role === "user") input = history.pop() as ChatMessage;
    else throw new ConfigurationError("Either provide a user message or a chat history with a user message as the last message.", "userInput", userInput);
    let agent = this.#agents.get(this.#rootAgentName) as BaseWorkflowAgent;
    this.#logger.log(`[Agent ${agent.name}]: Starting agent`);
    for (let handoffs = 0; ; handoffs++) {
      const handoff: Handoff = { to: null, note: "" };
      const name = agent.name;
      const announce = (messages: ChatMessage[]) => {
        const conversation = messages[0]?.role === "system" ? messages.slice(1) : messages;
        context.sendEvent(
          agentInputEvent.with({ input: conversation, currentAgentName: name }),
          agentSetupEvent.with({ input: messages, currentAgentName: name }),
        );
      };
      const left = deadline === null ? null : (deadline - Date.now()) / 1000;
      if (left !== null && left <= 0)
        throw new WorkflowTimeoutError(`The agents' turn ran longer than its timeout of ${this.#timeout} s. Raise the workflow's timeout, or null for none.`);
      const targets = agent.canHandoffTo.flatMap((target) => this.#agents.get(target) ?? []);
      // The handOff tool listed in the agent's tools is replaced by one bound to this turn.
      const tools = agent.tools.flatMap((t): BaseTool[] => {
        if (!HANDOFF_TOOLS.has(t)) return [t];
        return targets.length > 0 && this.#agents.size > 1 ? [turnHandoffTool(agent, targets, handoff)] : [];
      });
      // A runner per agent run: its LLM announces each call in this context; its tools and timeout are this turn's.
      const runner = runnerOf(agent, turnLLM(agent.llm, handoff, announce), tools, left);
      const { response, ctx } = await runAgent(context, agent, runner, history, input, handoff);
      const turnMemory = (await ctx.store.get("memory")) as Memory;
      if (handoff.to === null) {
        context.sendEvent(
          agentStepEvent.with({ agentName: name, response, toolCalls: [] }),
          agentOutputEvent.with({ response, toolCalls: [], raw: null, currentAgentName: name }),
        );
        this.#logger.log(`[Agent ${name}]: No tool calls to process, returning final response`);
        let stateMemory = turnMemory;
        if (memory !== undefined) {
          // The caller's memory gets what this turn added to the conversation.
          for (const message of (await turnMemory.get()).slice(before.length)) await memory.add(message);
          stateMemory = memory;
        }
        const state: AgentWorkflowState = {
          memory: stateMemory,
          scratchpad: [],
          currentAgentName: name,
          agents: [...this.#agents.keys()],
          nextAgentName: null,
          responseFormat: run.responseFormat,
        };
        const object = run.responseFormat === undefined ? undefined : await agent.getStructuredOutput(run.responseFormat, response);
        return stopAgentEvent.with({ result: text(response.content), message: response, state, object });
      }
      this.#logger.log(`[Agent ${name}]: Handoff to ${handoff.to}: ${handoff.note}`);
      if (handoffs >= MAX_HANDOFFS)
        throw new Error(
          `The agents handed the conversation to one another ${MAX_HANDOFFS} times in one turn without an answer. Check their descriptions and canHandoffTo.`,
        );
      // The next agent reads the whole conversation up to the handoff's tool result, as upstream's
      // does: not the note that ended the last agent's run, so that the model's input ends with
      // a user-side message (a trailing assistant message reads as a prefill to some providers).
      const conversation = await turnMemory.get();
      if (conversation.at(-1)?.role === "assistant" && conversation.at(-1)?.content === handoff.note) conversation.pop();
      input = conversation.pop() as ChatMessage;
      history = conversation;
      agent = this.#agents.get(handoff.to) as BaseWorkflowAgent;
      this.#logger.log(`[Agent ${agent.name}]: Starting agent`);
    }
  }
}

/**
 * Creates an agent and its workflow (upstream's `agent()`: `AgentWorkflow.fromTools`), run by
 * stepflow's `FunctionCallingAgent`.
 * @example
 * import { agent } from "stepflow/compat/workflow";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * import { calculatorTools } from "stepflow/tools/calculator";
 * const math = agent({ llm: new OfflineDemoLLM(), tools: [...calculatorTools], timeout: 30 });
 * const result = await math.run("What is (2123 + 2321) * 312?");
 * console.log(result.data.result);
 */
export function agent(params: SingleAgentParams): AgentWorkflow {
  return AgentWorkflow.fromTools(params);
}

/**
 * Creates a workflow of several agents (upstream's `multiAgent()`: `new AgentWorkflow`): the
 * root agent takes the user's message; an agent with `canHandoffTo` has upstream's `handOff`
 * tool in its `tools` and, when it calls it, the named agent continues the turn with the whole
 * conversation. The events are those of {@link agent}, each naming its agent.
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
  return new AgentWorkflow(params);
}
