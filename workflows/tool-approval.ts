/**
 * Tool calls a human must approve before they run: which calls (`needsApproval`), and asking
 * for each on the run's stream with a `ToolApprovalRequestEvent`, answered by a
 * `ToolApprovalEvent` with the same `approvalId`.
 */
import { randomUUID } from "node:crypto";
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../events/index.ts";
import { StepflowError } from "../src/index.ts";
import type { Context } from "../src/index.ts";
import { argumentsAsRun, toolCallProblem, withToolCallInput } from "../src/tools/tool-calls.ts";
import type { ToolSource } from "../src/tools/tool-calls.ts";
import { describeValue } from "../src/core/internal.ts";
import { RECORDS } from "./agent-records.ts";

/**
 * Which tool calls need a human's yes: tool names, or a test of each call (synchronous, from
 * the call's name and arguments; arguments that came as JSON text are given as the object the
 * tool runs with).
 * @example
 * const needsApproval: NeedsApproval = (call) => (call.input as { method?: string }).method !== "GET";
 */
export type NeedsApproval = readonly string[] | ((call: ToolCall) => boolean);

/**
 * `needsApproval` was not usable: not tool names or a function, a name no tool has, or a test
 * that threw or returned a promise for `toolName`'s call.
 * @example
 * if (err instanceof ToolApprovalError) console.error(err.toolName, err.message);
 */
export class ToolApprovalError extends StepflowError {
  override name = "ToolApprovalError";
  constructor(
    message: string,
    /** The tool whose call the test failed on, when the test failed on a call. */
    readonly toolName?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The questions of one reply: for each call a human must approve, the `approvalId` of its
 * question. Made when the reply arrives and kept with the reply, so a run restored into an
 * agent with a weaker `needsApproval` still asks, under the same id.
 * @example const marks: ApprovalMarks = { call_fire: "5f0c…" };
 */
export type ApprovalMarks = Readonly<Record<string, string>>;

/** A human's answer, as the model reads it. @example `{ approved: false, reason: "Ask HR first." }` */
export interface ApprovalAnswer {
  readonly approved: boolean;
  readonly reason?: string | undefined;
}

/**
 * The approval policy of an agent, checked against its tools when the agent is made.
 * @example
 * const approval = new ToolApprovalPolicy(["fire_employee"], tools);
 * const marks = approval.mark(toolCalls); // { call_fire: "<approvalId>" }
 */
export class ToolApprovalPolicy {
  readonly #test: ((call: ToolCall) => boolean) | undefined;

  constructor(
    option: NeedsApproval | undefined,
    private readonly tools: readonly BaseTool[],
  ) {
    this.#test = approvalTest(option, tools);
  }

  /**
   * The calls of a new reply a human must approve, each with a new question id; `undefined`
   * when there are none. A call that cannot run (no such tool, bad arguments) is not put to
   * a human: the model is told why, as for any call.
   */
  mark(calls: readonly ToolCall[]): ApprovalMarks | undefined {
    if (!this.#test) return undefined;
    let marks: Record<string, string> | undefined;
    for (const call of calls) {
      if (this.#covers(call)) (marks ??= {})[call.id] = randomUUID();
    }
    return marks;
  }

  /**
   * The `approvalId` `call` waits for: the one `marked` when the reply came, else, when this
   * policy asks for the call, a new one recorded with the step (a resume asks under the same
   * id). The policy is the agent's, not the saved context's: a context whose marks were
   * removed still asks. `undefined`: the call runs without asking.
   * @example
   * const approvalId = await approval.approvalIdFor(ctx, call, ev.approvals?.[call.id]);
   */
  approvalIdFor(ctx: Context, call: ToolCall, marked: string | undefined): string | undefined | Promise<string | undefined> {
    // Not async: most calls ask no human, and each tool call of each session in flight would
    // pay an async call's promise and frame for it.
    if (marked !== undefined || !this.#covers(call)) return marked;
    return ctx.once(RECORDS.approvalId(call.id), () => randomUUID(), { rerunUnfinished: true }).then((id) => id.value);
  }

  /** Whether a human must approve `call`: the policy asks for it, and it is a call that can run. */
  #covers(call: ToolCall): boolean {
    return this.#test !== undefined && this.#asks(call) && toolCallProblem(call, this.tools) === undefined;
  }

  #asks(call: ToolCall): boolean {
    let answer: unknown;
    try {
      // Arguments sent as JSON text are tested as the object the tool runs with: the model's
      // replies are given so (stream-reply.ts), and a call in a saved context must be too, or
      // `call.input.method` would read nothing of '{"method":"DELETE"}'.
      answer = (this.#test as (call: ToolCall) => boolean)(withToolCallInput(call));
    } catch (error) {
      throw new ToolApprovalError(`needsApproval threw for the call to ${call.name}: ${error instanceof Error ? error.message : String(error)}`, call.name, {
        cause: error,
      });
    }
    if (typeof (answer as PromiseLike<unknown> | null)?.then === "function") {
      throw new ToolApprovalError(
        `needsApproval returned a promise for the call to ${call.name}; it must return true or false at once, from the call's name and arguments.`,
        call.name,
      );
    }
    return Boolean(answer);
  }
}

/**
 * Asks a human whether to run `call`: writes a `ToolApprovalRequestEvent` with `approvalId` to
 * the stream (unless the answer was sent already) and waits for the `ToolApprovalEvent`.
 * @example
 * const answer = await askApproval(ctx, call, approvalId);
 * if (!answer.approved) return notApproved(call, answer);
 */
export async function askApproval(ctx: Context, call: ToolCall, approvalId: string, tools: readonly BaseTool[]): Promise<ApprovalAnswer> {
  const { approved, reason } = await ctx.waitForEvent(ToolApprovalEvent, {
    requirements: { approvalId },
    // The question shows the arguments the tool will run with; `toolCall` stays the model's call
    // as it came, as saved runs and the tool-call records hold it.
    waiterEvent: new ToolApprovalRequestEvent({ prefix: `Run ${call.name} with ${describeArguments(call, tools)}? (yes/no)`, toolCall: call, approvalId }),
  });
  return reason === undefined ? { approved } : { approved, reason };
}

/**
 * A human's answer for `call`, asked once per step execution: a step resumed from a context
 * saved after the answer came gets that answer; one saved while the question waited asks it
 * again, under the same `approvalId` (an answer sent before the question is taken at once).
 * `onAsk` runs when the question is really asked.
 * @example
 * const answer = await approvalOnce(ctx, call, approvalId);
 * if (!answer.approved) return notApproved(call, answer);
 */
export async function approvalOnce(ctx: Context, call: ToolCall, approvalId: string, tools: readonly BaseTool[], onAsk?: () => void): Promise<ApprovalAnswer> {
  const answer = await ctx.once(RECORDS.approval(call.id), () => (onAsk?.(), askApproval(ctx, call, approvalId, tools)), { rerunUnfinished: true });
  // A question left unanswered is asked again.
  return answer.value;
}

/**
 * What the model reads for a call a human did not approve (it was not run).
 * @example notApproved(call, { approved: false, reason: "Ask HR first." }).content
 */
export function notApproved(call: ToolCall, answer: ApprovalAnswer): ToolSource {
  const reason = answer.reason?.trim() ? ` The reason given: ${answer.reason.trim()}` : "";
  const message = `The user did not approve this call to ${call.name}, so it was not run.${reason}`;
  return { toolCallId: call.id, toolName: call.name, input: call.input, output: message, content: message, isError: true };
}

/**
 * A call's arguments as the trace and the approval question show them: those its tool (one of
 * `tools`) runs with, without the `null`s the model sent for optional arguments.
 * @example describeArguments({ id: "c1", name: "fire_employee", input: { id: 7, reason: null } }, [fireEmployee]); // '{"id":7}'
 */
export function describeArguments(call: ToolCall, tools: readonly BaseTool[]): string {
  const input = argumentsAsRun(call, tools);
  return typeof input === "string" ? input : JSON.stringify(input);
}

/** `needsApproval` as a test of a call, checked against the agent's tools. */
function approvalTest(option: NeedsApproval | undefined, tools: readonly BaseTool[]): ((call: ToolCall) => boolean) | undefined {
  if (option === undefined || typeof option === "function") return option;
  if (!Array.isArray(option) || option.some((name) => typeof name !== "string")) {
    throw new ToolApprovalError(
      `needsApproval takes tool names, e.g. ["fire_employee"], or a function of a tool call that returns true when a human must approve it; got ${describeValue(option)}.`,
    );
  }
  const known = new Set(tools.map((tool) => tool.metadata.name));
  const unknown = option.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new ToolApprovalError(
      `needsApproval names ${unknown.map((name) => JSON.stringify(name)).join(", ")}, not among the agent's tools (${[...known].join(", ") || "none"}). Check the spelling, or add the tool.`,
    );
  }
  const names = new Set(option);
  return (call) => names.has(call.name);
}
