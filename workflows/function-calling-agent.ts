/**
 * The function-calling agent of the LlamaIndex notebook, on stepflow: prepare the chat
 * history → stream the LLM with tools → run the tool calls → loop until the LLM answers
 * without tools. Memory and sources live in `ctx.store`, so passing the same context to the
 * next run continues the conversation.
 */
import { randomUUID } from "node:crypto";
import type { BaseTool, ChatMessage, ToolCall, ToolCallLLM } from "@llamaindex/core/llms";
import { Memory, createMemory } from "@llamaindex/core/memory";
import type { MemoryMessage } from "@llamaindex/core/memory";
import { FunctionOutputEvent, InputEvent, StreamEvent, ToolApprovalEvent, ToolApprovalRequestEvent, ToolCallEvent } from "../events/index.ts";
import type { Context } from "../src/context.ts";
import { StepflowError } from "../src/errors.ts";
import { StartEvent, StopEvent } from "../src/event.ts";
import { recentHistory, toolCallsOf, toolResultIdOf, wellFormedHistory } from "../src/llm/chat-history.ts";
import { badTimeout } from "../src/timers.ts";
import { describeValue } from "../src/user-text.ts";
import { runToolCalls, toolCallProblem } from "../src/llm/tool-calls.ts";
import { registerCodec } from "../src/serialize.ts";
import { journalOf } from "../src/journal/context-journal.ts";
import type { Journal, JournalClaim, JournalEntry } from "../src/journal/types.ts";
import type { RunToolCallsOptions, ToolSource } from "../src/llm/tool-calls.ts";
import { step } from "../src/step.ts";
import { Workflow } from "../src/workflow.ts";
import type { WorkflowOptions } from "../src/workflow.ts";
import { memorySessions } from "./agent-sessions.ts";

/** The agent's run input: `agent.run({ input: "Hello!" })`. */
export interface AgentInput {
  /** The user's message: text, or a LlamaIndex `ChatMessage` (e.g. with images). */
  readonly input: string | ChatMessage;
}

/** What a run returns: the final assistant message and the tool outputs of this run. */
export interface AgentResult {
  readonly response: ChatMessage;
  readonly sources: ToolSource[];
}

/** Options of {@link FunctionCallingAgent}. */
export interface FunctionCallingAgentOptions extends WorkflowOptions {
  /** Any LlamaIndex `ToolCallLLM`: `@llamaindex/openai`, `ScriptedLLM`, `OfflineDemoLLM`, … */
  readonly llm: ToolCallLLM;
  readonly tools?: readonly BaseTool[];
  /** Sent first on every LLM call; not stored in memory, so trimming never drops it. */
  readonly systemPrompt?: string;
  /** LLM calls allowed per run before `AgentMaxIterationsError`. Default 20. A run restored from a saved context counts afresh. */
  readonly maxIterations?: number;
  /** Seconds one tool call may take before the model is told it failed. Default 60. */
  readonly toolTimeout?: number;
  /**
   * Tool calls a human must approve before they run: tool names, or a test of each call. The
   * agent writes a `ToolApprovalRequestEvent` to the stream and waits for a `ToolApprovalEvent`
   * with the call's id; a call not approved is not run, and the model is told so. The run's
   * `timeout` covers the wait: raise it (`null` for none), or save the context and continue the
   * run when the answer comes, in this process or another.
   */
  readonly needsApproval?: readonly string[] | ((call: ToolCall) => boolean);
  /**
   * Where each tool call's start and result are recorded, under a key kept in the saved run,
   * so that resuming one saved run twice (in this process or another) never runs a call twice.
   * Default: the context's journal (`Sessions` gives its store's), else this process's memory.
   */
  readonly journal?: Journal;
}

/** The model kept calling tools past `maxIterations`. @example `err instanceof AgentMaxIterationsError && err.iterations` */
export class AgentMaxIterationsError extends StepflowError {
  override name = "AgentMaxIterationsError";
  constructor(readonly iterations: number) {
    super(`FunctionCallingAgent stopped after ${iterations} LLM calls without a final answer (maxIterations: ${iterations}). The model kept calling tools: check the tool results it got, or raise maxIterations.`);
  }
}

// LlamaIndex Memory saves itself as a snapshot; this lets ctx.toJSON() save the agent's memory.
registerCodec<Memory>("llamaindex.Memory", {
  test: (value) => value instanceof Memory,
  encode: (memory) => JSON.parse(memory.snapshot()),
  // What loadMemory does, without its JSON.stringify-then-parse round trip of every message.
  decode: (json) => {
    const { messages = [], memoryCursor = 0 } = json as { messages?: MemoryMessage[]; memoryCursor?: number };
    return new Memory(messages, { memoryCursor });
  },
});

const MEMORY = "memory";
const SOURCES = "sources";
const TOOL_RESULTS = "toolResults";
const APPROVALS = "approvals";
const CALL_KEYS = "toolCallKeys";

/** A tool call put to a human: the `approvalId` of the question, and `approved` once it was. */
interface PendingApproval {
  readonly id: string;
  approved?: true;
}

/**
 * What the agent's steps share within one run, kept beside the run rather than in ctx.store:
 * the LLM call count means nothing once the run is over, and the rest are the store's own
 * objects, looked up once instead of by every step (each lookup is an await).
 */
interface AgentRunState {
  /** LLM calls so far, for maxIterations. */
  llmCalls: number;
  readonly memory: Memory;
  /** The array at ctx.store "sources". */
  readonly sources: ToolSource[];
  /**
   * The object at ctx.store "toolResults": the results of the current tool turn's finished
   * calls, by call id, until they are in memory and sources. A context saved mid-turn (say,
   * while one call waits for a human) resumes without running the finished calls again.
   */
  readonly toolResults: Record<string, ToolSource>;
  /**
   * The object at ctx.store "approvals": for the current tool turn's calls put to a human, the
   * id of the question and whether it was approved, so a context saved meanwhile asks again
   * only what is unanswered.
   */
  readonly approvals: Record<string, PendingApproval>;
  /**
   * The object at ctx.store "toolCallKeys": the idempotency key of each call of the current tool
   * turn, made when the model's reply arrives and saved with the context, so that every resume
   * of a saved run records and looks up the same call under the same key in the journal.
   */
  readonly keys: Record<string, string>;
  /** The run was restored from a context saved mid-run: memory may already hold some of a turn's results. */
  readonly restored: boolean;
  /** Tokens of history sent to the LLM. */
  readonly tokenLimit: number;
  /**
   * The newest messages of memory that fit `tokenLimit`, as last sent. The run's messages are
   * added both to memory and here, so the next history is trimmed from this list instead of
   * from all of memory: the same messages, since trimming keeps the newest that fit.
   */
  history: ChatMessage[];
}

const runStates = new WeakMap<object, AgentRunState>();

/**
 * @example
 * const agent = new FunctionCallingAgent({ llm: new OpenAI({ model: "gpt-4o-mini" }), tools: [add, multiply], timeout: 120 });
 * const ctx = new Context(agent);
 * await agent.run({ input: "Hello! My name is Logan." }, { ctx });
 * const { response } = await agent.run({ input: "What is my name?" }, { ctx });
 * response.content; // "Your name is Logan."
 *
 * const handler = agent.run({ input: "What is (2123 + 2321) * 312?" });
 * for await (const ev of handler.streamEvents()) if (ev instanceof StreamEvent) process.stdout.write(ev.delta);
 */
export class FunctionCallingAgent extends Workflow<AgentInput, AgentResult> {
  readonly llm: ToolCallLLM;
  readonly tools: readonly BaseTool[];
  readonly systemPrompt: string | undefined;
  readonly maxIterations: number;
  readonly toolTimeout: number;
  /** The LLM can abort a request (stepflow's OpenAI): each call gets the run's signal. */
  // Not a #private member: a class with decorators has its #private members lowered to WeakMap
  // helpers (esbuild, tsc), which cost on every access.
  private readonly abortable: boolean;
  private readonly needsApproval: ((call: ToolCall) => boolean) | undefined;
  private readonly journal: Journal | undefined;
  /** How `Sessions` stores this agent's conversation: the memory's messages one row each, and a turn loads those that fit the LLM's window. */
  readonly sessionMemory = memorySessions({ storeKey: MEMORY, tokenLimit: () => historyTokenLimit(this.llm) });

  constructor(options: FunctionCallingAgentOptions) {
    super(options);
    if (!options.llm?.supportToolCall) {
      throw new StepflowError("FunctionCallingAgent needs an LLM that supports tool calls (a LlamaIndex ToolCallLLM with supportToolCall: true).");
    }
    const maxIterations = options.maxIterations ?? 20;
    if (!Number.isInteger(maxIterations) || maxIterations < 1) {
      throw new StepflowError(`maxIterations must be a whole number ≥ 1, got ${String(maxIterations)}.`);
    }
    this.llm = options.llm;
    this.tools = options.tools ?? [];
    this.systemPrompt = options.systemPrompt;
    this.maxIterations = maxIterations;
    this.toolTimeout = options.toolTimeout ?? 60;
    const problem = badTimeout("toolTimeout", this.toolTimeout, "the default is 60");
    if (problem) throw new StepflowError(problem);
    this.abortable = (options.llm as { supportsAbortSignal?: boolean }).supportsAbortSignal === true;
    this.needsApproval = approvalTest(options.needsApproval, this.tools);
    this.journal = options.journal;
  }

  @step({ accepts: [StartEvent], emits: [InputEvent] })
  async prepareChatHistory(ctx: Context, ev: StartEvent<AgentInput>): Promise<InputEvent> {
    if (typeof ev.input !== "string" && !isChatMessage(ev.input)) {
      throw new StepflowError(`FunctionCallingAgent.run takes { input: "your message" } or { input: { role: "user", content } } (a LlamaIndex ChatMessage); got input ${describeInput(ev.input)}.`);
    }
    const sources: ToolSource[] = [];
    const toolResults: Record<string, ToolSource> = {};
    const approvals: Record<string, PendingApproval> = {};
    const keys: Record<string, string> = {};
    await ctx.store.set(SOURCES, sources);
    await ctx.store.set(TOOL_RESULTS, toolResults);
    await ctx.store.set(APPROVALS, approvals);
    await ctx.store.set(CALL_KEYS, keys);
    const memory = await agentMemory(ctx, this.llm);
    const message: ChatMessage = typeof ev.input === "string" ? { role: "user", content: ev.input } : ev.input;
    const messages = await memory.get();
    // Already there when this step ran before a save and is resumed, or when a run failed before
    // the model replied and the user asks again: once is enough.
    if (!sameMessage(message, messages.at(-1))) {
      await memory.add(message);
      messages.push(message);
    }
    const { history } = this.startRunState(ctx, { memory, sources, toolResults, approvals, keys, restored: false }, messages);
    return new InputEvent({ input: wellFormedHistory(history) });
  }

  @step({ accepts: [InputEvent], emits: [ToolCallEvent, StopEvent] })
  async handleLlmInput(ctx: Context, ev: InputEvent): Promise<ToolCallEvent | StopEvent<AgentResult> | undefined> {
    const state = await this.runState(ctx);
    if (++state.llmCalls > this.maxIterations) throw new AgentMaxIterationsError(this.maxIterations);
    if (state.restored) {
      // Saved after this step's reply reached memory (say, as its ToolCallEvent streamed): that
      // reply stands, and the model is not asked again.
      const last = (await state.memory.get()).at(-1);
      if (last?.role === "assistant" && !sameMessage(last, ev.input.at(-1))) return this.replied(ctx, state, last);
    }

    const messages: ChatMessage[] = this.systemPrompt ? [{ role: "system", content: this.systemPrompt }, ...ev.input] : ev.input;
    const signal = ctx.signal;
    // LLMs that can abort a request (stepflow's OpenAI) get the run's signal, so a cancelled or
    // timed-out run closes its request.
    const options = this.abortable ? { additionalChatOptions: { signal } } : {};
    let content = "";
    // Keyed by id, last seen wins: adapters that emit growing partial calls still end complete.
    const calls = new Map<string, ToolCall>();
    const stream = await this.llm.chat({ messages, tools: this.tools as BaseTool[], stream: true, ...options });
    for await (const chunk of stream) {
      if (signal.aborted) return undefined; // the run is over (timeout or cancel): stop reading
      if (chunk.delta) {
        content += chunk.delta;
        ctx.writeEventToStream(new StreamEvent({ delta: chunk.delta }));
      }
      const toolCalls = (chunk.options as { toolCall?: ToolCall[] } | undefined)?.toolCall;
      for (const call of toolCalls ?? []) calls.set(call.id, call);
    }
    // The SDK ends an aborted stream quietly: a cut-off reply must not reach memory.
    if (signal.aborted) return undefined;
    const toolCalls = [...calls.values()];
    const response: ChatMessage = toolCalls.length > 0 ? { role: "assistant", content, options: { toolCall: toolCalls } } : { role: "assistant", content };
    // Before the reply reaches memory: any context saved from now on holds the calls' keys and
    // those a human must approve, so restoring it into an agent with a weaker needsApproval
    // still asks, and every resume of it finds each call under the same key in the journal.
    this.recordTurn(state, toolCalls);
    await state.memory.add(response);
    state.history.push(response);
    return this.replied(ctx, state, response);
  }

  /** The event that follows the model's reply (already in memory): its tool calls, or the end of the run. */
  private replied(ctx: Context, state: AgentRunState, response: ChatMessage): ToolCallEvent | StopEvent<AgentResult> {
    const toolCalls = toolCallsOf(response);
    if (toolCalls.length === 0) return new StopEvent({ result: { response, sources: state.sources } });
    const event = new ToolCallEvent({ toolCalls });
    ctx.writeEventToStream(event);
    return event;
  }

  @step({ accepts: [ToolCallEvent], emits: [InputEvent] })
  async handleToolCalls(ctx: Context, ev: ToolCallEvent): Promise<InputEvent | undefined> {
    const state = await this.runState(ctx);
    const finished = state.toolResults;
    const inMemory = state.restored ? resultsInMemory(await state.memory.get(), ev.toolCalls) : undefined;
    // Saved after this step had finished (every result in memory and sources, toolResults
    // cleared) but before the engine took its InputEvent: the turn is done, and not run again.
    if (inMemory?.size === ev.toolCalls.length && ev.toolCalls.every((call) => finished[call.id] === undefined)) {
      return new InputEvent({ input: wellFormedHistory(state.history) });
    }
    const onResult = (source: ToolSource) => {
      finished[source.toolCallId] = source;
      if (ctx.signal.aborted) return;
      this.trace(`Got output: ${source.content}`);
      ctx.writeEventToStream(new FunctionOutputEvent({ output: source }));
    };
    const journal = this.journal ?? journalOf(ctx);
    const options = {
      timeout: this.toolTimeout,
      signal: ctx.signal,
      onStart: this.verbose ? (call: ToolCall) => this.trace(`Invoking: \`${call.name}\` with \`${describeArguments(call)}\``) : undefined,
      onResult,
      idempotencyKey: (call: ToolCall) => callKey(state, call),
    };
    // A call put to a human is not run again once started: the human approved one execution.
    const run = (calls: readonly ToolCall[]) => runJournaled(journal, calls, state, this.tools, options, ctx.signal);
    const unfinished = ev.toolCalls.filter((call) => finished[call.id] === undefined);
    // A restored run may hold calls put to a human, whatever this agent's needsApproval says.
    if (this.needsApproval || state.restored) await this.runApproved(ctx, state, unfinished, run, onResult);
    else await run(unfinished);
    // A run that timed out or was cancelled mid-call must not write late results into memory.
    if (ctx.signal.aborted) return undefined;
    const results = ev.toolCalls.map((call) => finished[call.id] as ToolSource);
    for (const source of results) {
      if (inMemory?.has(source.toolCallId)) continue; // added before the context was saved
      const message: ChatMessage = { role: "user", content: source.content, options: { toolResult: { id: source.toolCallId, result: source.content, isError: source.isError } } };
      await state.memory.add(message);
      state.history.push(message);
    }
    // No await from here on: a context saved now sees the results in sources or in toolResults, never in both.
    state.sources.push(...results);
    for (const call of ev.toolCalls) {
      delete finished[call.id];
      delete state.approvals[call.id];
      delete state.keys[call.id];
    }
    state.history = recentHistory(state.history, state.tokenLimit);
    return new InputEvent({ input: wellFormedHistory(state.history) });
  }

  /**
   * Runs `calls`, those a human must approve once approved: the others at once, and each asked
   * call as soon as its answer comes, so that what is done is recorded (toolResults, approvals)
   * before the next answer, for a context saved meanwhile. A call that cannot run (no such tool,
   * bad arguments) is not put to a human: the model is told why, as for any call.
   */
  private async runApproved(ctx: Context, state: AgentRunState, calls: readonly ToolCall[], run: (calls: readonly ToolCall[]) => Promise<unknown>, onResult: (source: ToolSource) => void): Promise<void> {
    const approvals = state.approvals;
    const asking = calls.filter((call) => (approvals[call.id] !== undefined || this.asks(call)) && toolCallProblem(call, this.tools) === undefined);
    await Promise.all([
      run(calls.filter((call) => !asking.includes(call))),
      ...asking.map(async (call) => {
        const answer = await this.approval(ctx, call, (approvals[call.id] ??= { id: randomUUID() }));
        if (answer.approved) return run([call]);
        const reason = answer.reason?.trim() ? ` The reason given: ${answer.reason.trim()}` : "";
        const message = `The user did not approve this call to ${call.name}, so it was not run.${reason}`;
        return onResult({ toolCallId: call.id, toolName: call.name, input: call.input, output: message, content: message, isError: true });
      }),
    ]);
  }

  /** Gives the calls of a new reply their keys, and marks those a human must approve (in ctx.store, saved with the context). */
  private recordTurn(state: AgentRunState, calls: readonly ToolCall[]): void {
    for (const call of calls) {
      state.keys[call.id] = randomUUID();
      if (state.approvals[call.id] === undefined && this.asks(call) && toolCallProblem(call, this.tools) === undefined) state.approvals[call.id] = { id: randomUUID() };
    }
  }

  /** Whether `needsApproval` selects `call`. */
  private asks(call: ToolCall): boolean {
    if (!this.needsApproval) return false;
    let answer: unknown;
    try {
      answer = this.needsApproval(call);
    } catch (error) {
      throw new StepflowError(`needsApproval threw for the call to ${call.name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (typeof (answer as PromiseLike<unknown> | null)?.then === "function") {
      throw new StepflowError(`needsApproval returned a promise for the call to ${call.name}; it must return true or false at once, from the call's name and arguments.`);
    }
    return Boolean(answer);
  }

  /** A human's answer for `call`: asked on the stream, unless it was approved before a save. */
  private async approval(ctx: Context, call: ToolCall, pending: PendingApproval): Promise<{ approved: boolean; reason?: string | undefined }> {
    if (pending.approved) return { approved: true };
    this.trace(`Waiting for approval: \`${call.name}\` with \`${describeArguments(call)}\``);
    const answer = await ctx.waitForEvent(ToolApprovalEvent, {
      requirements: { approvalId: pending.id },
      waiterEvent: new ToolApprovalRequestEvent({ prefix: `Run ${call.name} with ${describeArguments(call)}? (yes/no)`, toolCall: call, approvalId: pending.id }),
    });
    if (answer.approved) pending.approved = true;
    return answer;
  }

  /** This run's state: set by prepareChatHistory, or rebuilt for a run restored mid-way. */
  private runState(ctx: Context): AgentRunState | Promise<AgentRunState> {
    return runStates.get(ctx.currentRun as object) ?? this.restoreRunState(ctx);
  }

  /** The state of a run restored from a saved context mid-run, rebuilt from ctx.store. */
  private async restoreRunState(ctx: Context): Promise<AgentRunState> {
    const memory = await agentMemory(ctx, this.llm);
    let sources = await ctx.store.get<ToolSource[] | undefined>(SOURCES, undefined);
    if (!Array.isArray(sources)) await ctx.store.set(SOURCES, (sources = []));
    let toolResults = await ctx.store.get<Record<string, ToolSource> | undefined>(TOOL_RESULTS, undefined);
    if (!isRecord(toolResults)) await ctx.store.set(TOOL_RESULTS, (toolResults = {}));
    let approvals = await ctx.store.get<Record<string, PendingApproval> | undefined>(APPROVALS, undefined);
    if (!isRecord(approvals)) await ctx.store.set(APPROVALS, (approvals = {}));
    let keys = await ctx.store.get<Record<string, string> | undefined>(CALL_KEYS, undefined);
    if (!isRecord(keys)) await ctx.store.set(CALL_KEYS, (keys = {}));
    return this.startRunState(ctx, { memory, sources, toolResults, approvals, keys, restored: true }, await memory.get());
  }

  private startRunState(ctx: Context, shared: Pick<AgentRunState, "memory" | "sources" | "toolResults" | "approvals" | "keys" | "restored">, messages: readonly ChatMessage[]): AgentRunState {
    const tokenLimit = historyTokenLimit(this.llm);
    const state: AgentRunState = { ...shared, llmCalls: 0, tokenLimit, history: recentHistory(messages, tokenLimit) };
    runStates.set(ctx.currentRun as object, state);
    return state;
  }
}

/** The agent's memory in `ctx.store`, created on a context's first run. */
async function agentMemory(ctx: Context, llm: ToolCallLLM): Promise<Memory> {
  const existing = await ctx.store.get<unknown>(MEMORY, undefined);
  if (existing instanceof Memory) return existing;
  if (existing !== undefined) {
    throw new StepflowError(`ctx.store "${MEMORY}" holds a ${typeof existing}, not a LlamaIndex Memory. Use a fresh Context, or store the agent's memory under that key only.`);
  }
  // Given the LLM, Memory does not look up Settings.llm, which throws (and is caught) when unset.
  const memory = createMemory([], { llm });
  await ctx.store.set(MEMORY, memory);
  return memory;
}

/**
 * The key of `call` in the journal. A context saved by a version without keys has none: an
 * approved call then uses its question's id, which is in the saved run too; others get a new key.
 */
function callKey(state: AgentRunState, call: ToolCall): string {
  return (state.keys[call.id] ??= state.approvals[call.id]?.id ?? randomUUID());
}

/**
 * Runs `calls` but those the journal has: a recorded result is reused. A call started before
 * without a result (its run stopped mid-call, or another resume runs it now) is run again only
 * if no human was asked about it; otherwise it may have taken effect, and the model is told its
 * outcome is unknown. The calls are claimed first and the rest run as one batch, so a memory
 * journal (which answers at once) adds no promise to a turn whose tools answer at once.
 */
function runJournaled(journal: Journal, calls: readonly ToolCall[], state: AgentRunState, tools: readonly BaseTool[], options: RunToolCallsOptions & { onResult: (source: ToolSource) => void }, signal: AbortSignal): Promise<unknown> {
  const keys = new Map(calls.map((call) => [call.id, callKey(state, call)]));
  const claims = calls.map((call) => journal.begin(keys.get(call.id) as string));
  const claimed = (settled: readonly JournalClaim[]): Promise<unknown> => {
    const toRun: ToolCall[] = [];
    calls.forEach((call, i) => {
      const claim = settled[i] as JournalClaim;
      // A call put to a human is not run again once started: the human approved one execution.
      if (!claim.claimed && (claim.entry.state === "finished" || state.approvals[call.id] !== undefined)) options.onResult(recordedResult(call, claim.entry));
      else toRun.push(call);
    });
    // Cancelled while the claims were written: the calls did not start, so a later resume may run them.
    if (signal.aborted) return Promise.all(toRun.map((call) => journal.release(keys.get(call.id) as string)));
    const finishing: Promise<void>[] = [];
    const onResult = (source: ToolSource) => {
      options.onResult(source);
      // A call the run stopped waiting for may still take effect: its outcome stays unknown.
      if (signal.aborted) return;
      const finished = journal.finish(keys.get(source.toolCallId) as string, JSON.stringify(source));
      if (finished) finishing.push(finished);
    };
    return runToolCalls(toRun, tools, { ...options, onResult }).then(() => (finishing.length > 0 ? Promise.all(finishing) : undefined));
  };
  return claims.some((claim) => claim instanceof Promise) ? Promise.all(claims).then(claimed) : claimed(claims as JournalClaim[]);
}

/** What the model reads for a call the journal had: its result, or that its outcome is unknown. */
function recordedResult(call: ToolCall, entry: JournalEntry): ToolSource {
  if (entry.state === "finished") {
    try {
      const source = JSON.parse(entry.result) as ToolSource;
      if (typeof source.content === "string") return { ...source, toolCallId: call.id };
    } catch {
      // not a result this agent wrote: unknown, as below
    }
  }
  const message = `The call to ${call.name} was started before, by an earlier attempt at this run that did not record its outcome (the process may have stopped while it ran, or another process resumed the same run), so it was not run again: it may or may not have taken effect. Check before calling it again.`;
  return { toolCallId: call.id, toolName: call.name, input: call.input, output: message, content: message, isError: true };
}

/** Ids of `calls` whose results memory already holds: those after the turn's assistant message, the last with tool calls. */
function resultsInMemory(messages: readonly ChatMessage[], calls: readonly ToolCall[]): Set<string> {
  const ids = new Set(calls.map((call) => call.id));
  let turn = messages.length - 1;
  while (turn >= 0 && toolCallsOf(messages[turn] as ChatMessage).length === 0) turn--;
  const found = new Set<string>();
  for (const message of messages.slice(turn + 1)) {
    const id = toolResultIdOf(message);
    if (id !== undefined && ids.has(id)) found.add(id);
  }
  return found;
}

/** The same role, text and options: a message from memory and its copy in a saved event. */
function sameMessage(a: ChatMessage, b: ChatMessage | undefined): boolean {
  return b !== undefined && a.role === b.role && JSON.stringify([a.content, a.options ?? null]) === JSON.stringify([b.content, b.options ?? null]);
}

function isChatMessage(value: unknown): value is ChatMessage {
  if (typeof value !== "object" || value === null) return false;
  const { role, content } = value as { role?: unknown; content?: unknown };
  return typeof role === "string" && (typeof content === "string" || Array.isArray(content));
}

function describeInput(value: unknown): string {
  return Array.isArray(value) ? "an array" : describeValue(value);
}

/** What Memory.getLLM keeps of the history: 70% of ¾ of the context window. */
function historyTokenLimit(llm: ToolCallLLM): number {
  return Math.ceil(Math.ceil(llm.metadata.contextWindow * 0.75) * 0.7);
}

/** A call's arguments as the trace and the approval question show them. */
function describeArguments(call: ToolCall): string {
  return typeof call.input === "string" ? call.input : JSON.stringify(call.input);
}

/** `needsApproval` as a test of a call, checked against the agent's tools. */
function approvalTest(option: FunctionCallingAgentOptions["needsApproval"], tools: readonly BaseTool[]): ((call: ToolCall) => boolean) | undefined {
  if (option === undefined || typeof option === "function") return option;
  if (!Array.isArray(option) || option.some((name) => typeof name !== "string")) {
    throw new StepflowError(`needsApproval takes tool names, e.g. ["fire_employee"], or a function of a tool call that returns true when a human must approve it; got ${describeValue(option)}.`);
  }
  const known = new Set(tools.map((tool) => tool.metadata.name));
  const unknown = option.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new StepflowError(`needsApproval names ${unknown.map((name) => JSON.stringify(name)).join(", ")}, not among the agent's tools (${[...known].join(", ") || "none"}). Check the spelling, or add the tool.`);
  }
  const names = new Set(option);
  return (call) => names.has(call.name);
}

function isRecord(value: unknown): value is Record<string, never> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
