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
import { FunctionOutputEvent, InputEvent, StreamEvent, ToolApprovalEvent, ToolCallEvent } from "../events/index.ts";
import { StartEvent, StopEvent, Workflow, step } from "../src/index.ts";
import type { Codec, Context, FromOutside } from "../src/index.ts";
import { toolCallsOf } from "../src/llm/chat-history.ts";
import { streamReply } from "../src/llm/stream-reply.ts";
import { runUsage } from "../src/llm/token-usage.ts";
import type { RunUsage, TokenUsage } from "../src/llm/token-usage.ts";
import { bm25ToolSelector, toolsForCall } from "../src/tools/tool-selection.ts";
import type { ToolSelector } from "../src/tools/tool-selection.ts";
import { runToolCall } from "../src/tools/tool-calls.ts";
import type { ToolSource } from "../src/tools/tool-calls.ts";
import { maxIterationsReached } from "./agent-errors.ts";
import { MEMORY_KEY, appendAt, isNewest, memoryCodec } from "./agent-memory.ts";
import { agentSettings, userMessage } from "./agent-options.ts";
import type { AgentSettings, FunctionCallingAgentOptions } from "./agent-options.ts";
import { RECORDS, RERUN_UNFINISHED } from "./agent-records.ts";
import type { Reply } from "./agent-records.ts";
import { agentRun, runOf } from "./agent-run.ts";
import type { AgentRun } from "./agent-run.ts";
import { toolTurn } from "./agent-saved-by-0.1.ts";
import { memorySessions } from "./agent-sessions.ts";
import { StructuredOutput, StructuredOutputError, mayRetry, plainTurn } from "./agent-structured-output.ts";
import type { FormatTurn } from "./agent-structured-output.ts";
import { allOf, idempotencyKeys, recordable, recordedElsewhere, resultMessage, unknownOutcome } from "./agent-tool-calls.ts";
import { callCost, countUsage } from "./agent-usage.ts";
import { approvalOnce, describeArguments, notApproved } from "./tool-approval.ts";
import { repeatsWhenInDoubt } from "./tool-repeat-policy.ts";

export { AgentMaxIterationsError } from "./agent-errors.ts";
export type { FunctionCallingAgentOptions } from "./agent-options.ts";
export { memorySessions } from "./agent-sessions.ts";
export type { MemorySessionsOptions } from "./agent-sessions.ts";
export { RESPOND_TOOL, StructuredOutputError } from "./agent-structured-output.ts";
export type { LLMCallUsage, RunUsage, TokenUsage } from "../src/llm/token-usage.ts";
export type { ToolSelector } from "../src/tools/tool-selection.ts";

/** The agent's run input: `agent.run({ input: "Hello!" })`. */
export interface AgentInput {
  /** The user's message: text, or a LlamaIndex `ChatMessage` (e.g. with images). */
  readonly input: string | ChatMessage;
}

/** What a run returns: the final assistant message, the tool outputs of this run, and the tokens its LLM calls took. */
export interface AgentResult<T = undefined> {
  readonly response: ChatMessage;
  readonly sources: ToolSource[];
  readonly usage: RunUsage;
  /** With `responseFormat`: the final answer, checked and parsed by the schema (`response.content` is its JSON text). Absent without. */
  readonly object: T;
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
 *
 * const typed = new FunctionCallingAgent({ llm, tools: [add, multiply], responseFormat: z.object({ result: z.number() }) });
 * const { object } = await typed.run({ input: "What is (2123 + 2321) * 312?" });
 * object.result; // 1386528
 */
export class FunctionCallingAgent<T = undefined> extends Workflow<AgentInput, AgentResult<T>> {
  /** A human's answers to approval questions are all it takes from outside a run: never its tool calls or history. */
  static override readonly fromOutside: FromOutside = { approvalAnswer: ToolApprovalEvent };

  @step({ accepts: [StartEvent], emits: [InputEvent] })
  async prepareChatHistory(ctx: Context, ev: StartEvent<AgentInput>): Promise<InputEvent> {
    const message = userMessage(ev.input);
    const run = await agentRun(ctx, this.#settings, true);
    const at = await ctx.once(RECORDS.memorySize, () => run.size, RERUN_UNFINISHED);
    // A question asked again after a run that failed before the model answered is kept once.
    if (!isNewest(message, run.history.last)) await appendAt(run, at.value, [message]);
    run.history.trim();
    return new InputEvent({ input: run.history.wellFormed() });
  }

  @step({ accepts: [InputEvent], emits: [ToolCallEvent, StopEvent, InputEvent] })
  async handleLlmInput(ctx: Context, ev: InputEvent): Promise<ToolCallEvent | StopEvent<AgentResult<T>> | InputEvent> {
    const run = runOf(ctx) ?? (await agentRun(ctx, this.#settings));
    if (++run.llmCalls > this.maxIterations) throw maxIterationsReached(ctx, this.maxIterations);
    // Recorded before it reaches memory, with the calls a human must approve: a step resumed
    // from a later save reuses this reply, and asks what was marked whatever needsApproval says.
    const { value: reply } = await ctx.once(RECORDS.reply, () => this.chat(ctx, ev.input, run), RERUN_UNFINISHED);
    const turn: FormatTurn<T> = this.#format?.read(reply.message) ?? plainTurn(reply.message);
    // An answer the schema refused goes back to the model once, with what was wrong (agent-structured-output.ts).
    const retry = "issues" in turn && (await mayRetry(ctx, reply.at));
    await appendAt(run, reply.at, retry ? [...turn.memory, turn.feedback] : turn.memory);
    const log = this.verbose ? (line: string) => this.trace(line) : undefined;
    if (!("calls" in turn)) {
      countUsage(ctx, run.usage, reply.at, reply.cost, log);
      if ("issues" in turn && !retry) throw new StructuredOutputError(turn.issues, turn.said);
      if ("issues" in turn) return new InputEvent({ input: run.history.wellFormed() });
      const result = { response: turn.answer.message, sources: run.sources, usage: runUsage(run.usage.calls) };
      return new StopEvent({ result: (this.#format ? { ...result, object: turn.answer.object } : result) as AgentResult<T> });
    }
    const toolCalls = turn.calls;
    const event = new ToolCallEvent(reply.approvals ? { toolCalls, approvals: reply.approvals } : { toolCalls });
    ctx.writeEventToStream(event);
    countUsage(ctx, run.usage, reply.at, reply.cost, log); // after the calls: an app waiting for them sees them first
    return event;
  }

  @step({ accepts: [ToolCallEvent], emits: [InputEvent] })
  async handleToolCalls(ctx: Context, ev: ToolCallEvent): Promise<InputEvent | undefined> {
    const run = runOf(ctx) ?? (await agentRun(ctx, this.#settings));
    // Each call's idempotency key, made before any call starts or waits: every resume of this
    // turn gives the tool the same key. With it, the size of memory the results go after.
    const { value: recorded } = await ctx.once(RECORDS.turn, () => ({ at: run.size, keys: idempotencyKeys(ev.toolCalls) }), RERUN_UNFINISHED);
    const turn = toolTurn(ctx, ev.approvals, recorded.keys);
    const results = await allOf(ev.toolCalls, (call) => turn.finished(call) ?? this.callTool(ctx, call, turn.approvalOf(call), turn.keyOf(call)));
    // A run that timed out or was cancelled mid-call must not write late results into memory.
    if (ctx.signal.aborted) return undefined;
    if (run.size === recorded.at) run.sources.push(...results); // in the tick memory gets them: a save has both or neither
    await appendAt(run, recorded.at, results.map(resultMessage));
    await turn.done();
    run.history.trim();
    return new InputEvent({ input: run.history.wellFormed() });
  }

  /**
   * The model's reply to `history`, streamed; the run's end stops it, so that no cut-off reply is
   * recorded. Not `async`: every session in flight waits here for its model, and an async frame
   * would be kept alive for all of the wait (measured with bench/waiting-live-bytes.ts).
   */
  private chat(ctx: Context, history: ChatMessage[], run: AgentRun): Promise<Reply> {
    const messages: ChatMessage[] = this.systemPrompt ? [{ role: "system", content: this.systemPrompt }, ...history] : history;
    const tools = this.toolsToSend(history);
    const onDelta = (delta: string) => ctx.writeEventToStream(new StreamEvent({ delta }));
    let usage: TokenUsage | undefined;
    const replied = streamReply(this.llm, messages, tools, ctx.signal, onDelta, (reported) => (usage = reported), this.observers, this.#format?.request);
    return replied.then((message) => ({
      message,
      at: run.size,
      approvals: this.#settings.approval.mark(toolCallsOf(message)),
      cost: callCost(usage, tools, this.tools.length),
    }));
  }

  /** Runs `call` once in all (after a human approved it, if one must): its result, or what the model reads instead. */
  private async callTool(ctx: Context, call: ToolCall, marked: string | undefined, idempotencyKey: string | undefined): Promise<ToolSource> {
    // Asked again of the agent's own policy: the marks come from a saved context, which its sender may have edited.
    const approvalId = await this.#settings.approval.approvalIdFor(ctx, call, marked);
    if (approvalId !== undefined) {
      const answer = await approvalOnce(ctx, call, approvalId, this.tools, () =>
        this.trace(`Waiting for approval: \`${call.name}\` with \`${describeArguments(call, this.tools)}\``),
      );
      if (!answer.approved) return this.output(ctx, notApproved(call, answer));
    }
    const { signal } = ctx;
    const observers = this.observers;
    const work = () => {
      if (this.verbose) this.trace(`Invoking: \`${call.name}\` with \`${describeArguments(call, this.tools)}\``);
      return recordable(runToolCall(call, this.tools, { timeout: this.toolTimeout, signal, idempotencyKey, observers }), signal);
    };
    // Started by an earlier attempt that recorded no outcome: made again only if that cannot apply it twice (tool-repeat-policy.ts).
    const options = { rerunUnfinished: approvalId === undefined && repeatsWhenInDoubt(call, this.tools) };
    let done = await ctx.once(RECORDS.call(call.id), work, options);
    // Another process that resumed this run may be making the call right now: its result, not "unknown", is the answer.
    if (done.status === "unknown") done = await recordedElsewhere(ctx, RECORDS.call(call.id), work, options, this.toolTimeout);
    return this.output(ctx, done.status === "unknown" ? unknownOutcome(call) : done.value);
  }

  private output(ctx: Context, source: ToolSource): ToolSource {
    if (ctx.signal.aborted) return source;
    this.trace(`Got output: ${source.content}`);
    ctx.writeEventToStream(new FunctionOutputEvent({ output: source }));
    return source;
  }

  /** The tools to send with `history`: all, or with `maxToolsPerCall` those the selector finds and those called in this turn (and `respond`, for some models' structured output). */
  private toolsToSend(history: readonly ChatMessage[]): readonly BaseTool[] {
    const k = this.maxToolsPerCall;
    let tools = this.tools;
    if (k !== undefined && this.tools.length > k) {
      // Made on first use: indexing hundreds of tools is work an agent that never runs should not do.
      this.#toolSelector ??= this.#settings.toolSelector ?? bm25ToolSelector(this.tools);
      tools = toolsForCall(history, this.tools, this.#toolSelector, k);
    }
    return this.#format ? this.#format.tools(tools) : tools;
  }

  // The agent's settings, checked by agentSettings (agent-options.ts).
  readonly #settings: AgentSettings;
  readonly #format: StructuredOutput<T> | undefined;
  #toolSelector: ToolSelector | undefined;
  readonly llm: ToolCallLLM;
  readonly tools: readonly BaseTool[];
  readonly systemPrompt: string | undefined;
  readonly maxIterations: number;
  readonly toolTimeout: number;
  readonly maxToolsPerCall: number | undefined;
  /** How `Sessions` stores this agent's conversation: the memory's messages one row each, and a turn loads those that fit the LLM's window. */
  readonly sessionMemory = memorySessions({ storeKey: MEMORY_KEY, tokenLimit: () => this.#settings.tokenLimit });

  constructor(options: FunctionCallingAgentOptions<T>) {
    super({ ...options, codecs: { "llamaindex.Memory": memoryCodec(options.llm) as Codec, ...options.codecs } });
    this.#settings = agentSettings(options);
    this.llm = this.#settings.llm;
    this.tools = this.#settings.tools;
    this.systemPrompt = this.#settings.systemPrompt;
    this.maxIterations = this.#settings.maxIterations;
    this.toolTimeout = this.#settings.toolTimeout;
    this.maxToolsPerCall = this.#settings.maxToolsPerCall;
    this.#format = options.responseFormat ? new StructuredOutput(options.responseFormat, this.llm, this.tools) : undefined;
  }
}
