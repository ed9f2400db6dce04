/**
 * The agent's structured output (`responseFormat`): the model's final answer as an object of
 * the user's zod schema. A model that takes a JSON schema with the request (OpenAI, Gemini,
 * Ollama) gets it on every LLM call and answers in JSON text; any other model gets a `respond`
 * tool whose parameters are the schema, and answers by calling it (Anthropic is made to call
 * a tool on every turn, so it cannot answer in plain text). An answer the schema refuses is
 * sent back to the model with what was wrong, once; a second one ends the run with a
 * `StructuredOutputError`.
 */
import type { BaseTool, ChatMessage, ToolCall, ToolCallLLM } from "@llamaindex/core/llms";
import { z } from "zod";
import { ConfigurationError, StepflowError } from "../src/index.ts";
import type { Context } from "../src/index.ts";
import { describeValue } from "../src/core/internal.ts";
import { toolCallsOf } from "../src/llm/chat-history.ts";
import type { ReplyRequest } from "../src/llm/provider-llm.ts";
import { contentText } from "../src/llm/provider-llm.ts";
import { replyFormat, replyFormatSupport } from "../src/llm/response-format.ts";

/** The tool a model without native structured output calls with its final answer. @example `{ toolCalls: [{ name: RESPOND_TOOL, input: { total: 3 } }] }` */
export const RESPOND_TOOL = "respond";

/** Where a run keeps how its answers were fed back (so a restored run knows it already did). */
const RETRIES_KEY = "structured output retries";

/** Answers the schema refused that are sent back to the model before the run fails. */
const RETRIES = 1;

/**
 * The model's final answer did not match `responseFormat`, again after being told what was
 * wrong. `issues` says what was wrong; `answer` is what the model answered last.
 * @example
 * try { await agent.run({ input }); } catch (e) { if (e instanceof StructuredOutputError) console.log(e.issues, e.answer); }
 */
export class StructuredOutputError extends StepflowError {
  override name = "StructuredOutputError";
  constructor(
    readonly issues: string,
    readonly answer: string,
  ) {
    super(
      `FunctionCallingAgent: the model's final answer does not match responseFormat, after it was told once what was wrong:\n${issues}\nIts answer: ${answer.slice(0, 500)}\nDescribe the fields in the schema (.describe()) or in systemPrompt, or use a more capable model.`,
    );
  }
}

/**
 * What a reply means under `responseFormat`: the messages memory keeps of it, then the answer, the tool calls to run, or what was wrong.
 * @example if ("answer" in turn) return turn.answer.object;
 */
export type FormatTurn<T> =
  | { readonly memory: ChatMessage[]; readonly answer: { readonly object: T; readonly message: ChatMessage } }
  | { readonly memory: ChatMessage[]; readonly calls: ToolCall[] }
  | { readonly memory: ChatMessage[]; readonly issues: string; readonly feedback: ChatMessage; readonly said: string };

/**
 * What a reply means without `responseFormat`: its tool calls to run, else the answer.
 * @example plainTurn({ role: "assistant", content: "Hi." }); // { memory: [reply], answer: { object: undefined, message: reply } }
 */
export function plainTurn<T>(reply: ChatMessage): FormatTurn<T> {
  const calls = toolCallsOf(reply);
  return calls.length > 0 ? { memory: [reply], calls } : { memory: [reply], answer: { object: undefined as T, message: reply } };
}

/**
 * The agent's `responseFormat`, checked when the agent is made, and what it asks of each call.
 * @example
 * const format = new StructuredOutput(z.object({ total: z.number() }), llm, tools);
 * const turn = format.read(reply.message);
 */
export class StructuredOutput<T> {
  /** What each LLM call sends for the answer: the schema itself, or that a tool must be called. */
  readonly request: ReplyRequest;
  readonly #schema: z.ZodType<T>;
  readonly #tool: BaseTool | undefined;

  constructor(schema: z.ZodType<T>, llm: ToolCallLLM, tools: readonly BaseTool[]) {
    const json = jsonSchemaOf(schema);
    this.#schema = schema;
    const support = replyFormatSupport(llm);
    if (support === "json-schema") {
      this.request = { format: replyFormat("answer", json) };
      return;
    }
    if (tools.some((tool) => tool.metadata.name === RESPOND_TOOL))
      throw new ConfigurationError(
        `FunctionCallingAgent: this model answers responseFormat by calling a tool named "${RESPOND_TOOL}", and one of your tools has that name. Rename your tool.`,
        "tools",
        RESPOND_TOOL,
      );
    this.request = support === "tool-choice" ? { toolRequired: true } : {};
    this.#tool = {
      metadata: {
        name: RESPOND_TOOL,
        description: "Give the user your final answer: call this once you have it, with the answer as the arguments. Do not answer in plain text.",
        parameters: json,
      },
    } as BaseTool;
  }

  /** The tools one call sends: `tools`, and the `respond` tool when the answer comes by it. */
  tools(tools: readonly BaseTool[]): readonly BaseTool[] {
    return this.#tool ? [...tools, this.#tool] : tools;
  }

  /** What `reply` means: the answer, tool calls to run, or an answer the schema refused (with the message that tells the model). */
  read(reply: ChatMessage): FormatTurn<T> {
    const calls = toolCallsOf(reply);
    const respond = this.#tool ? calls.find((call) => call.name === RESPOND_TOOL) : undefined;
    if (respond && calls.length > 1) {
      // Answered with other calls still to make: those run, and the model answers after their results.
      const others = calls.filter((call) => call !== respond);
      // The reply's other options stay (Anthropic's thinking blocks, which must go back with the calls).
      return { memory: [{ ...reply, options: { ...reply.options, toolCall: others } as ChatMessage["options"] }], calls: others };
    }
    if (!respond && calls.length > 0) return { memory: [reply], calls };
    const text = respond ? JSON.stringify(respond.input) : contentText(reply.content);
    const checked = this.#check(respond ? respond.input : text);
    // In memory, an answer is the assistant's JSON text whichever way it came: the next run's history is the same for every model.
    if (checked.success)
      return {
        memory: [respond ? { role: "assistant", content: text } : reply],
        answer: { object: checked.data, message: { role: "assistant", content: text } },
      };
    const issues = checked.issues;
    const feedback: ChatMessage = respond
      ? {
          role: "user",
          content: `The answer does not match the parameters of ${RESPOND_TOOL}:\n${issues}\nCall ${RESPOND_TOOL} again with the answer corrected.`,
          options: { toolResult: { id: respond.id, result: issues, isError: true } },
        }
      : {
          role: "user",
          content: this.#tool
            ? `Give your final answer by calling the ${RESPOND_TOOL} tool, not in text.${text.trim() ? `\n${issues}` : ""}`
            : `Your answer is not JSON that matches the required schema:\n${issues}\nAnswer again with only the JSON.`,
        };
    return { memory: [reply], issues, feedback, said: text };
  }

  #check(answer: unknown): { success: true; data: T } | { success: false; issues: string } {
    let value = answer;
    if (typeof answer === "string") {
      try {
        value = JSON.parse(withoutFence(answer));
      } catch {
        return { success: false, issues: `✖ Not JSON: ${JSON.stringify(answer.slice(0, 200))}` };
      }
    }
    const parsed = this.#schema.safeParse(value);
    return parsed.success ? { success: true, data: parsed.data } : { success: false, issues: z.prettifyError(parsed.error) };
  }
}

/** Models often wrap JSON in a Markdown code fence: the JSON inside it. */
function withoutFence(text: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return fenced ? (fenced[1] as string) : text;
}

/** The JSON schema of an object schema, as providers take it; else a `ConfigurationError` saying why. */
function jsonSchemaOf(schema: unknown): Record<string, unknown> {
  const isZod = typeof schema === "object" && schema !== null && typeof (schema as { safeParse?: unknown }).safeParse === "function";
  let json: Record<string, unknown> | undefined;
  let why = "";
  try {
    json = isZod ? (z.toJSONSchema(schema as z.ZodType, { io: "output", unrepresentable: "throw" }) as Record<string, unknown>) : undefined;
  } catch (error) {
    why = ` (${(error as Error).message})`;
  }
  if (json?.type !== "object")
    throw new ConfigurationError(
      `FunctionCallingAgent: responseFormat must be a zod object schema that JSON Schema can express, e.g. z.object({ city: z.string(), temperature: z.number() }); got ${json ? `a schema of type ${String(json.type)}` : describeValue(schema)}${why}. Wrap other types in an object: z.object({ items: z.array(…) }).`,
      "responseFormat",
      schema,
    );
  const { $schema: _dialect, ...rest } = json;
  return rest;
}

/**
 * Whether the run on `ctx` may send the answer written at memory size `at` back to the model:
 * once per run (the same answer again, for a step resumed after it did so).
 * @example if (!(await mayRetry(ctx, reply.at))) throw new StructuredOutputError(turn.issues, text);
 */
export async function mayRetry(ctx: Context, at: number): Promise<boolean> {
  const record = await ctx.store.get<{ count: number; lastAt: number; run: string } | undefined>(RETRIES_KEY, undefined);
  const run = ctx.runId;
  const mine = record?.run === run ? record : undefined;
  if (mine?.lastAt === at) return true;
  const count = mine?.count ?? 0;
  if (count >= RETRIES) return false;
  await ctx.store.set(RETRIES_KEY, { count: count + 1, lastAt: at, run });
  return true;
}
