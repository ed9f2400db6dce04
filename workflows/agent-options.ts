/**
 * The options of the function-calling agent, checked once when the agent is made: each bad
 * option is a `ConfigurationError` naming the option, what it takes and what it got.
 */
import type { BaseTool, ChatMessage, ToolCallLLM } from "@llamaindex/core/llms";
import { z } from "zod";
import { ConfigurationError } from "../src/index.ts";
import type { WorkflowOptions } from "../src/index.ts";
import type { Journal } from "../src/journal/index.ts";
import { describeValue } from "../src/core/internal.ts";
import { checkToolTimeout } from "../src/tools/tool-calls.ts";
import type { ToolSelector } from "../src/tools/tool-selection.ts";
import { ToolApprovalPolicy } from "./tool-approval.ts";
import type { NeedsApproval } from "./tool-approval.ts";

/** Options of {@link FunctionCallingAgent}; `T` is the type of `responseFormat`'s answers. */
export interface FunctionCallingAgentOptions<T = undefined> extends WorkflowOptions {
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
   * since that message. When the selector finds none for the latest message nor the one or
   * two before it ("Hi", a question in a language the tools are not described in), the tools
   * the model called last in the conversation are sent instead, then the first of `tools`, up
   * to `maxToolsPerCall`: the model is never left without tools. Default: every tool on every
   * call. Any tool may still be run.
   * @example new FunctionCallingAgent({ llm, tools: openApiTools({ openApi, baseURL }), maxToolsPerCall: 10 });
   */
  readonly maxToolsPerCall?: number;
  /** How `maxToolsPerCall` picks tools. Default: `bm25ToolSelector(tools)`, a local BM25 index of their names, descriptions and parameters. */
  readonly toolSelector?: ToolSelector;
  /**
   * A zod object schema for the final answer: the run's result then has `object`, the answer
   * checked and parsed by it. OpenAI, Gemini and Ollama get the schema with each request;
   * other models answer by calling a `respond` tool that takes it. An answer the schema
   * refuses is sent back to the model once; a second one is a `StructuredOutputError`.
   */
  readonly responseFormat?: z.ZodType<T>;
}

/**
 * The agent's options, checked, with their defaults.
 * @example const { maxIterations } = agentSettings({ llm }); // 20
 */
export interface AgentSettings {
  readonly llm: ToolCallLLM;
  readonly tools: readonly BaseTool[];
  readonly systemPrompt: string | undefined;
  readonly maxIterations: number;
  readonly toolTimeout: number;
  readonly approval: ToolApprovalPolicy;
  readonly journal: Journal | undefined;
  readonly maxToolsPerCall: number | undefined;
  readonly toolSelector: ToolSelector | undefined;
  /** Tokens of history sent to the LLM: what Memory.getLLM keeps, 70% of ¾ of the context window. */
  readonly tokenLimit: number;
}

const wholeAtLeastOne = (message: (got: string) => string) =>
  z.int({ error: (issue) => message(String(issue.input)) }).min(1, { error: (issue) => message(String(issue.input)) });

const OptionsSchema = z
  .object({
    llm: z.custom<ToolCallLLM>((llm) => Boolean((llm as Partial<ToolCallLLM> | undefined)?.supportToolCall), {
      error: "FunctionCallingAgent needs an LLM that supports tool calls (a LlamaIndex ToolCallLLM with supportToolCall: true).",
    }),
    maxIterations: wholeAtLeastOne((got) => `maxIterations must be a whole number ≥ 1, got ${got}.`).optional(),
    maxToolsPerCall: wholeAtLeastOne(
      (got) => `maxToolsPerCall must be a whole number ≥ 1 (the tools sent on each LLM call), or left out to send every tool; got ${got}.`,
    ).optional(),
    toolSelector: z
      .custom<ToolSelector>((selector) => typeof (selector as Partial<ToolSelector> | null)?.select === "function", {
        error: "toolSelector must be an object with a select(query, k) method, e.g. bm25ToolSelector(tools).",
      })
      .optional(),
  })
  .refine((options) => options.toolSelector === undefined || options.maxToolsPerCall !== undefined, {
    path: ["maxToolsPerCall"],
    error: "toolSelector picks maxToolsPerCall tools per LLM call: give maxToolsPerCall too, e.g. 10.",
  });

/**
 * Checks the agent's options and fills in their defaults; `ConfigurationError` for the first bad one.
 * @example const settings = agentSettings({ llm: new ScriptedLLM([{ text: "Hi." }]), maxIterations: 5 });
 */
export function agentSettings<T>(options: FunctionCallingAgentOptions<T>): AgentSettings {
  const checked = OptionsSchema.safeParse(options ?? {});
  if (!checked.success) {
    const issue = checked.error.issues[0] as z.core.$ZodIssue;
    const option = String(issue.path[0] ?? "options");
    throw new ConfigurationError(issue.message, option, (options as unknown as Record<string, unknown> | undefined)?.[option]);
  }
  const tools = options.tools ?? [];
  checkToolNames(tools);
  return {
    llm: options.llm,
    tools,
    systemPrompt: options.systemPrompt,
    maxIterations: options.maxIterations ?? 20,
    toolTimeout: checkToolTimeout("toolTimeout", options.toolTimeout ?? 60),
    approval: new ToolApprovalPolicy(options.needsApproval, tools),
    journal: options.journal,
    maxToolsPerCall: options.maxToolsPerCall,
    toolSelector: options.toolSelector,
    tokenLimit: Math.ceil(Math.ceil(options.llm.metadata.contextWindow * 0.75) * 0.7),
  };
}

/**
 * The user's message of a run's input: text, or a LlamaIndex `ChatMessage`; else a `ConfigurationError`.
 * @example userMessage("Hello!"); // { role: "user", content: "Hello!" }
 */
export function userMessage(input: unknown): ChatMessage {
  if (typeof input === "string") return { role: "user", content: input };
  if (isChatMessage(input)) return input;
  throw new ConfigurationError(
    `FunctionCallingAgent.run takes { input: "your message" } or { input: { role: "user", content } } (a LlamaIndex ChatMessage); got input ${Array.isArray(input) ? "an array" : describeValue(input)}.`,
    "input",
    input,
  );
}

function isChatMessage(value: unknown): value is ChatMessage {
  if (typeof value !== "object" || value === null) return false;
  const { role, content } = value as { role?: unknown; content?: unknown };
  return typeof role === "string" && (typeof content === "string" || Array.isArray(content));
}

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
