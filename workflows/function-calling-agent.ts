/**
 * The function-calling agent of the LlamaIndex notebook, on stepflow: prepare the chat
 * history → stream the LLM with tools → run the tool calls → loop until the LLM answers
 * without tools. Memory and sources live in `ctx.store`, so passing the same context to the
 * next run continues the conversation.
 *
 * Resuming a saved run is the engine's job: each side effect of a step (the model's reply, a
 * human's answer, a tool call) goes through `ctx.once`, so a step run again from a context
 * saved at any moment gets what its earlier attempt recorded instead of doing it again.
 */
import type { BaseTool, ChatMessage, ToolCall, ToolCallLLM } from "@llamaindex/core/llms";
import { FunctionOutputEvent, InputEvent, StreamEvent, TokenUsageEvent, ToolApprovalEvent, ToolCallEvent } from "../events/index.ts";
import { ConfigurationError, RunLocal, StartEvent, StepflowError, StopEvent, Workflow, step } from "../src/index.ts";
import type { Codec, Context, FromOutside, WorkflowOptions } from "../src/index.ts";
import { useJournal } from "../src/journal/index.ts";
import type { Journal, OnceResult } from "../src/journal/index.ts";
import { toolCallsOf } from "../src/llm/chat-history.ts";
import { streamReply } from "../src/llm/stream-reply.ts";
import { describeCallUsage, runUsage, toolSpecTokens, usageSums } from "../src/llm/token-usage.ts";
import type { LLMCallUsage, RunUsage, TokenUsage } from "../src/llm/token-usage.ts";
import { bm25ToolSelector, checkMaxToolsPerCall, toolsForCall } from "../src/tools/tool-selection.ts";
import type { ToolSelector } from "../src/tools/tool-selection.ts";
import { checkToolTimeout, runToolCall } from "../src/tools/tool-calls.ts";
import type { ToolSource } from "../src/tools/tool-calls.ts";
import { describeValue } from "../src/core/user-text.ts";
import { MEMORY_KEY, agentMemory, appendAt, memoryCodec } from "./agent-memory.ts";
import { runHistory } from "./agent-history.ts";
import type { RunHistory } from "./agent-history.ts";
import type { Conversation } from "./agent-memory.ts";
import { legacyTurn } from "./agent-saved-by-0.1.ts";
import { flatUUID } from "./flat-uuid.ts";
import { toolCallRecord } from "./tool-call-record.ts";
import { ToolApprovalPolicy, approvalOnce, describeArguments, notApproved } from "./tool-approval.ts";
import type { ApprovalMarks, NeedsApproval } from "./tool-approval.ts";
import { memorySessions } from "./agent-sessions.ts";

export { memorySessions } from "./agent-sessions.ts";
export type { MemorySessionsOptions } from "./agent-sessions.ts";
export type { LLMCallUsage, RunUsage, TokenUsage } from "../src/llm/token-usage.ts";
export type { ToolSelector } from "../src/tools/tool-selection.ts";

/** The agent's run input: `agent.run({ input: "Hello!" })`. */
export interface AgentInput {
  /** The user's message: text, or a LlamaIndex `ChatMessage` (e.g. with images). */
  readonly input: string | ChatMessage;
}

/** What a run returns: the final assistant message, the tool outputs of this run, and the tokens its LLM calls took. */
export interface AgentResult {
  readonly response: ChatMessage;
  readonly sources: ToolSource[];
  readonly usage: RunUsage;
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
  readonly needsApproval?: NeedsApproval;
  /**
   * Where the run's tool calls are claimed (its `ctx.once` work), so that resuming one saved
   * run twice, in this process or another, never runs a call twice. Default: the context's
   * journal (`Sessions` gives its store's), else this process's memory.
   */
  readonly journal?: Journal;
  /**
   * Tools sent to the model on each LLM call, for agents with many: the ones most relevant to
   * the user's latest message (found by `toolSelector`), plus every tool the model has called
   * since that message. Default: every tool on every call. Any tool may still be run.
   */
  readonly maxToolsPerCall?: number;
  /** How `maxToolsPerCall` picks tools. Default: `bm25ToolSelector(tools)`, a local BM25 index of their names, descriptions and parameters. */
  readonly toolSelector?: ToolSelector;
}

/** The model kept calling tools past `maxIterations`. @example `err instanceof AgentMaxIterationsError && err.iterations` */
export class AgentMaxIterationsError extends StepflowError {
  override name = "AgentMaxIterationsError";
  constructor(readonly iterations: number) {
    super(
      `FunctionCallingAgent stopped after ${iterations} LLM calls without a final answer (maxIterations: ${iterations}). The model kept calling tools: check the tool results it got, or raise maxIterations.`,
    );
  }
}

/** The model's reply as `ctx.once` records it, with the size of memory before it and the questions it raises. */
interface Reply {
  readonly message: ChatMessage;
  readonly at: number;
  readonly approvals?: ApprovalMarks | undefined;
  /** What the call took (absent from replies saved by stepflow 0.1). */
  readonly cost?: Omit<LLMCallUsage, "call"> | undefined;
}

/** The run's LLM calls, at ctx.store "usage", and the memory size of the last reply counted, so a step resumed after counting its reply does not count it again. */
interface UsageRecord {
  calls: readonly LLMCallUsage[];
  lastAt: number;
}

/** What the steps of one run share; not saved: a run restored mid-way makes it again from ctx.store. */
interface AgentRun extends Conversation<RunHistory> {
  llmCalls: number;
  /** The tool outputs of this run: the array at ctx.store "sources". */
  readonly sources: ToolSource[];
  readonly usage: UsageRecord;
}

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
  /** A human's answers to approval questions are all it takes from outside a run: never its tool calls or history. */
  static override readonly fromOutside: FromOutside = { approvalAnswer: ToolApprovalEvent };
  readonly llm: ToolCallLLM;
  readonly tools: readonly BaseTool[];
  readonly systemPrompt: string | undefined;
  readonly maxIterations: number;
  readonly toolTimeout: number;
  private readonly approval: ToolApprovalPolicy;
  private readonly journal: Journal | undefined;
  readonly maxToolsPerCall: number | undefined;
  /** Made on first use: indexing hundreds of tools is work an agent that never runs should not do. */
  #toolSelector: ToolSelector | undefined;
  /** Tokens of history sent to the LLM: what Memory.getLLM keeps, 70% of ¾ of the context window. */
  private readonly tokenLimit: number;
  /** How `Sessions` stores this agent's conversation: the memory's messages one row each, and a turn loads those that fit the LLM's window. */
  readonly sessionMemory = memorySessions({ storeKey: MEMORY_KEY, tokenLimit: () => this.tokenLimit });

  constructor(options: FunctionCallingAgentOptions) {
    super({ ...options, codecs: { "llamaindex.Memory": memoryCodec(options.llm) as Codec, ...options.codecs } });
    if (!options.llm?.supportToolCall) {
      throw new ConfigurationError(
        "FunctionCallingAgent needs an LLM that supports tool calls (a LlamaIndex ToolCallLLM with supportToolCall: true).",
        "llm",
        options.llm,
      );
    }
    const maxIterations = options.maxIterations ?? 20;
    if (!Number.isInteger(maxIterations) || maxIterations < 1) {
      throw new ConfigurationError(`maxIterations must be a whole number ≥ 1, got ${String(maxIterations)}.`, "maxIterations", maxIterations);
    }
    this.llm = options.llm;
    this.tools = options.tools ?? [];
    checkToolNames(this.tools);
    this.systemPrompt = options.systemPrompt;
    this.maxIterations = maxIterations;
    this.toolTimeout = checkToolTimeout("toolTimeout", options.toolTimeout ?? 60);
    this.approval = new ToolApprovalPolicy(options.needsApproval, this.tools);
    this.journal = options.journal;
    this.maxToolsPerCall = checkMaxToolsPerCall(options.maxToolsPerCall);
    if (options.toolSelector !== undefined && typeof (options.toolSelector as Partial<ToolSelector> | null)?.select !== "function")
      throw new ConfigurationError(
        "toolSelector must be an object with a select(query, k) method, e.g. bm25ToolSelector(tools).",
        "toolSelector",
        options.toolSelector,
      );
    if (options.toolSelector !== undefined && this.maxToolsPerCall === undefined)
      throw new ConfigurationError("toolSelector picks maxToolsPerCall tools per LLM call: give maxToolsPerCall too, e.g. 10.", "maxToolsPerCall", undefined);
    this.#toolSelector = options.toolSelector;
    this.tokenLimit = Math.ceil(Math.ceil(this.llm.metadata.contextWindow * 0.75) * 0.7);
  }

  @step({ accepts: [StartEvent], emits: [InputEvent] })
  async prepareChatHistory(ctx: Context, ev: StartEvent<AgentInput>): Promise<InputEvent> {
    if (typeof ev.input !== "string" && !isChatMessage(ev.input)) {
      throw new ConfigurationError(
        `FunctionCallingAgent.run takes { input: "your message" } or { input: { role: "user", content } } (a LlamaIndex ChatMessage); got input ${describeInput(ev.input)}.`,
        "input",
        ev.input,
      );
    }
    const run = await this.agentRun(ctx, true);
    const message: ChatMessage = typeof ev.input === "string" ? { role: "user", content: ev.input } : ev.input;
    const at = await ctx.once("memory size", () => run.size, RERUN_UNFINISHED);
    // A question asked again after a run that failed before the model answered is kept once.
    const written = isNewest(message, run.history.last) || appendAt(run, at.value, [message]);
    if (written instanceof Promise) await written;
    run.history.trim();
    return new InputEvent({ input: run.history.wellFormed() });
  }

  @step({ accepts: [InputEvent], emits: [ToolCallEvent, StopEvent] })
  handleLlmInput(ctx: Context, ev: InputEvent): Promise<ToolCallEvent | StopEvent<AgentResult>> {
    // Not an async function: the session waits for the model in ctx.once's promise, and this
    // step's frame would otherwise be kept alive for all of the wait.
    const run = this.currentRun(ctx);
    return run ? this.ask(ctx, ev, run) : this.agentRun(ctx).then((made) => this.ask(ctx, ev, made));
  }

  private ask(ctx: Context, ev: InputEvent, run: AgentRun): Promise<ToolCallEvent | StopEvent<AgentResult>> {
    if (++run.llmCalls > this.maxIterations) return Promise.reject(new AgentMaxIterationsError(this.maxIterations));
    // Recorded before it reaches memory, with the calls a human must approve: a step resumed
    // from a later save reuses this reply, and asks what was marked whatever needsApproval says.
    return ctx
      .once("reply", () => this.chat(ctx, ev.input, run), RERUN_UNFINISHED)
      .then((reply) => {
        const written = appendAt(run, reply.value.at, [reply.value.message]);
        // The agent's own memories take it at once: no promise, no microtask.
        return written instanceof Promise ? written.then(() => this.replied(ctx, run, reply.value)) : this.replied(ctx, run, reply.value);
      });
  }

  /** The step's event for the model's reply, now in memory: its tool calls, or the run's result. */
  private replied(ctx: Context, run: AgentRun, reply: Reply): ToolCallEvent | StopEvent<AgentResult> {
    const { message, at, approvals, cost } = reply;
    const toolCalls = toolCallsOf(message);
    if (toolCalls.length === 0) {
      if (cost) this.countUsage(ctx, run, at, cost);
      return new StopEvent({ result: { response: message, sources: run.sources, usage: runUsage(run.usage.calls) } });
    }
    const event = new ToolCallEvent(approvals ? { toolCalls, approvals } : { toolCalls });
    ctx.writeEventToStream(event);
    if (cost) this.countUsage(ctx, run, at, cost); // after the calls: an app waiting for them sees them as soon as before
    return event;
  }

  /**
   * The model's reply to `history`, streamed; the run's end stops it, so that no cut-off reply is
   * recorded. Not an async function: the session waits for the model in streamReply's promise,
   * and an async frame here would be kept alive for all of the wait.
   */
  private chat(ctx: Context, history: ChatMessage[], run: AgentRun): Promise<Reply> {
    let usage: TokenUsage | undefined;
    let tools: readonly BaseTool[];
    let replied: Promise<ChatMessage>;
    try {
      const messages: ChatMessage[] = this.systemPrompt ? [{ role: "system", content: this.systemPrompt }, ...history] : history;
      tools = this.toolsToSend(history);
      const onDelta = (delta: string) => ctx.writeEventToStream(new StreamEvent({ delta }));
      replied = streamReply(this.llm, messages, tools, ctx.signal, onDelta, (reported) => (usage = reported));
    } catch (error) {
      return Promise.reject(error as Error); // as the async function it replaces would
    }
    return replied.then((message) => {
      const cost = { usage, toolSpecTokens: toolSpecTokens(tools), toolsSent: tools.length, toolsAvailable: this.tools.length };
      return { message, at: run.size, approvals: this.approval.mark(toolCallsOf(message)), cost };
    });
  }

  /** The tools to send with `history`: all, or with `maxToolsPerCall` those the selector finds and those called in this turn. */
  private toolsToSend(history: readonly ChatMessage[]): readonly BaseTool[] {
    const k = this.maxToolsPerCall;
    if (k === undefined || this.tools.length <= k) return this.tools;
    this.#toolSelector ??= bm25ToolSelector(this.tools);
    return toolsForCall(history, this.tools, this.#toolSelector, k);
  }

  /** Adds a reply's cost to the run's usage (once, however often the step is resumed) and tells the stream and the verbose log. */
  private countUsage(ctx: Context, run: AgentRun, at: number, cost: Omit<LLMCallUsage, "call">): void {
    const record = run.usage;
    if (at <= record.lastAt || ctx.signal.aborted) return;
    const call: LLMCallUsage = {
      call: record.calls.length + 1,
      usage: cost.usage,
      toolSpecTokens: cost.toolSpecTokens,
      toolsSent: cost.toolsSent,
      toolsAvailable: cost.toolsAvailable,
    };
    // A list one longer, not a push: a run makes a few calls, and push's first growth would
    // keep 16 spare slots alive with each session in flight.
    record.calls = [...record.calls, call];
    record.lastAt = at;
    ctx.writeEventToStream(new TokenUsageEvent({ call, run: usageSums(record.calls) }));
    if (this.verbose) this.trace(`Tokens of LLM call ${call.call}: ${describeCallUsage(call)}`); // toLocaleString is slow: only when shown
  }

  @step({ accepts: [ToolCallEvent], emits: [InputEvent] })
  async handleToolCalls(ctx: Context, ev: ToolCallEvent): Promise<InputEvent | undefined> {
    const run = this.currentRun(ctx) ?? (await this.agentRun(ctx));
    const legacy = ev.approvals ? undefined : legacyTurn(ctx);
    const approvals = ev.approvals ?? legacy?.approvals;
    // Each call's idempotency key, made before any call starts or waits: every resume of this
    // turn gives the tool the same key. With it, the size of memory the results go after.
    const turn = await ctx.once("turn", () => ({ at: run.size, keys: idempotencyKeys(ev.toolCalls) }), RERUN_UNFINISHED);
    const { at, keys } = turn.value;
    const call = (call: ToolCall) => legacy?.results[call.id] ?? this.callTool(ctx, call, approvals?.[call.id], legacy?.keys[call.id] ?? keys[call.id]);
    // Most turns call one tool: awaited alone, without Promise.all's aggregate and its closures.
    const only = ev.toolCalls.length === 1 ? (ev.toolCalls[0] as ToolCall) : undefined;
    const results = only ? [await call(only)] : await Promise.all(ev.toolCalls.map(call));
    // A run that timed out or was cancelled mid-call must not write late results into memory.
    if (ctx.signal.aborted) return undefined;
    const messages = results.map((source): ChatMessage => ({
      role: "user",
      content: source.content,
      options: { toolResult: { id: source.toolCallId, result: source.content, isError: source.isError } },
    }));
    const written = appendAt(run, at, messages);
    if (written) run.sources.push(...results); // in the tick memory gets them: a save has both or neither
    if (written instanceof Promise) await written;
    if (legacy) await legacy.done();
    run.history.trim();
    return new InputEvent({ input: run.history.wellFormed() });
  }

  /** Runs `call` once in all (after a human approved it, if one must): its result, or what the model reads instead. */
  private async callTool(ctx: Context, call: ToolCall, marked: string | undefined, idempotencyKey: string | undefined): Promise<ToolSource> {
    // Asked again of the agent's own policy: the marks come from a saved context, which its sender may have edited.
    const asked = this.approval.approvalIdFor(ctx, call, marked);
    const approvalId = asked instanceof Promise ? await asked : asked;
    if (approvalId !== undefined) {
      const answer = await approvalOnce(ctx, call, approvalId, () => this.trace(`Waiting for approval: \`${call.name}\` with \`${describeArguments(call)}\``));
      if (!answer.approved) return this.output(ctx, notApproved(call, answer));
    }
    const signal = ctx.signal;
    const work = () => {
      if (this.verbose) this.trace(`Invoking: \`${call.name}\` with \`${describeArguments(call)}\``);
      return recordable(runToolCall(call, this.tools, { timeout: this.toolTimeout, signal, idempotencyKey }), signal);
    };
    // An approved call is not run again once started: the human approved one execution.
    const options = { rerunUnfinished: approvalId === undefined };
    let done = await ctx.once(toolCallRecord("call", call.id), work, options);
    if (done.status === "unknown") done = await this.recordedElsewhere(ctx, call, work, options);
    return this.output(ctx, done.status === "unknown" ? unknownOutcome(call) : done.value);
  }

  /**
   * The call's result once another attempt at this run records it: a process that resumed the
   * same saved run may be running the call right now, and its result, not "unknown", is what
   * the model must read. That attempt's call ends within the tool timeout (a call that times out
   * records its timeout), so the journal is asked again until then; only if no result comes
   * (that attempt stopped mid-call) is the outcome unknown.
   */
  private async recordedElsewhere(
    ctx: Context,
    call: ToolCall,
    work: () => ToolSource | Promise<ToolSource>,
    options: { rerunUnfinished: boolean },
  ): Promise<OnceResult<ToolSource>> {
    const deadline = Date.now() + this.toolTimeout * 1000 + OUTCOME_GRACE_MS;
    for (let pause = 20; Date.now() < deadline && !ctx.signal.aborted; pause = Math.min(pause * 2, 1000)) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(pause, Math.max(0, deadline - Date.now())));
        function done() {
          clearTimeout(timer);
          ctx.signal.removeEventListener("abort", done);
          resolve();
        }
        ctx.signal.addEventListener("abort", done, { once: true });
      });
      if (ctx.signal.aborted) break;
      const again = await ctx.once(toolCallRecord("call", call.id), work, options);
      if (again.status !== "unknown") return again;
    }
    return { status: "unknown" };
  }

  private output(ctx: Context, source: ToolSource): ToolSource {
    if (ctx.signal.aborted) return source;
    this.trace(`Got output: ${source.content}`);
    ctx.writeEventToStream(new FunctionOutputEvent({ output: source }));
    return source;
  }

  /**
   * This run's shared state once a step made it: later steps take it without an await (an
   * async call per step is a promise and a frame more for each session in flight).
   */
  private currentRun(ctx: Context): AgentRun | undefined {
    if (this.journal) useJournal(ctx, this.journal);
    return runs.get(ctx);
  }

  /** This run's shared state, made by its first step (`starting`: a new run, whose sources start empty). */
  private async agentRun(ctx: Context, starting = false): Promise<AgentRun> {
    const existing = this.currentRun(ctx);
    if (existing && !starting) return existing;
    const memory = await agentMemory(ctx, this.llm);
    let sources = starting ? undefined : await ctx.store.get<ToolSource[] | undefined>("sources", undefined);
    if (!Array.isArray(sources)) await ctx.store.set("sources", (sources = []));
    let usage = starting ? undefined : await ctx.store.get<UsageRecord | undefined>("usage", undefined);
    if (!Array.isArray(usage?.calls)) await ctx.store.set("usage", (usage = { calls: [], lastAt: -1 }));
    const history = await runHistory(memory, this.tokenLimit);
    return runs.set(ctx, { llmCalls: 0, memory, size: history.size, sources, usage, history });
  }
}

const runs = new RunLocal<AgentRun>();

/** How long past the tool timeout another attempt's result may take to reach the journal. */
const OUTCOME_GRACE_MS = 5_000;

/** Two tools of one name: the model calls tools by name, so one of them could never run, and which one ran would depend on their order. */
function checkToolNames(tools: readonly BaseTool[]): void {
  const seen = new Map<string, number>();
  tools.forEach((tool, index) => {
    const name = tool.metadata.name;
    const first = seen.get(name);
    if (first !== undefined)
      throw new ConfigurationError(
        `FunctionCallingAgent: tools ${first + 1} and ${index + 1} are both named ${JSON.stringify(name)}, and the model calls tools by name. Rename one (openApiTools takes reservedNames, mcpTools a prefix).`,
        "tools",
        name,
      );
    seen.set(name, index);
  });
}

/** `ctx.once`'s options for work that is safe to do again when an attempt did not record it. */
const RERUN_UNFINISHED = { rerunUnfinished: true } as const;

/** A new idempotency key for each call, by call id. */
function idempotencyKeys(calls: readonly ToolCall[]): Record<string, string> {
  // A null-prototype object is a hash table from the start: an object literal would get a new
  // hidden class for each call id, and call ids never repeat.
  const keys = Object.create(null) as Record<string, string>;
  for (const call of calls) keys[call.id] = flatUUID();
  return keys;
}

/** A tool's result as `ctx.once` may record it: not one cut short by the end of the run, as the call may still take effect. */
function recordable(result: ToolSource | Promise<ToolSource>, signal: AbortSignal): ToolSource | Promise<ToolSource> {
  const check = (source: ToolSource): ToolSource => {
    if (signal.aborted) throw signal.reason;
    return source;
  };
  return result instanceof Promise ? result.then(check) : check(result);
}

/** What the model reads for an approved call that an earlier attempt started without recording its outcome. */
function unknownOutcome(call: ToolCall): ToolSource {
  const message = `The call to ${call.name} was started before, by an earlier attempt at this run that did not record its outcome (the process may have stopped while it ran, or another process resumed the same run), so it was not run again: it may or may not have taken effect. Check before calling it again.`;
  return { toolCallId: call.id, toolName: call.name, input: call.input, output: message, content: message, isError: true };
}

/** Whether `message` is already `last`, the newest of the history, as a question without options. */
function isNewest(message: ChatMessage, last: ChatMessage | undefined): boolean {
  return (
    last !== undefined &&
    last.role === message.role &&
    last.options === undefined &&
    message.options === undefined &&
    JSON.stringify(last.content) === JSON.stringify(message.content)
  );
}

function isChatMessage(value: unknown): value is ChatMessage {
  if (typeof value !== "object" || value === null) return false;
  const { role, content } = value as { role?: unknown; content?: unknown };
  return typeof role === "string" && (typeof content === "string" || Array.isArray(content));
}

function describeInput(value: unknown): string {
  return Array.isArray(value) ? "an array" : describeValue(value);
}
