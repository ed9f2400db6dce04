/**
 * `responseFormat` of `@llamaindex/workflow`'s agents: the final answer turned into an object
 * that a zod schema (zod 3 or 4) checked. As upstream, the model is asked through the LLM's
 * `exec({ responseFormat })` (LlamaIndex's structured-output tool call); unlike upstream, the
 * object is validated, and a rejected one is sent back to the model once with zod's error.
 */
import type { ChatMessage, LLM, MessageContent } from "@llamaindex/core/llms";
import * as z4 from "zod/v4/core";
import { StepflowError } from "../../index.ts";
import type { ZodSchema } from "../workflow-core/util/zod.ts";

/**
 * The model's structured output did not match the schema, also after it was told what was wrong.
 * `issues` is zod's description of the last attempt, `received` what the model gave.
 * @example
 * import { StructuredOutputError } from "stepflow/compat/workflow";
 * const explain = (error: unknown) => (error instanceof StructuredOutputError ? error.issues : String(error));
 */
export class StructuredOutputError extends StepflowError {
  override name = "StructuredOutputError";
  constructor(
    message: string,
    readonly issues: string,
    readonly received: unknown,
  ) {
    super(message);
  }
}

const text = (content: MessageContent): string =>
  typeof content === "string" ? content : content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");

type Checked<T> = { ok: true; value: T } | { ok: false; issues: string };

/** Validates with a zod 4 schema (`_zod`) or a zod 3 one (`safeParse`). */
function check<T>(schema: ZodSchema<T>, value: unknown): Checked<T> {
  if ("_zod" in schema) {
    const result = z4.safeParse(schema, value);
    return result.success ? { ok: true, value: result.data } : { ok: false, issues: z4.prettifyError(result.error) };
  }
  const v3 = schema as { safeParse?: (data: unknown) => { success: boolean; data?: T; error?: { message: string } } };
  if (typeof v3.safeParse === "function") {
    const result = v3.safeParse(value);
    return result.success ? { ok: true, value: result.data as T } : { ok: false, issues: result.error?.message ?? "invalid" };
  }
  try {
    return { ok: true, value: schema.parse(value) };
  } catch (error) {
    return { ok: false, issues: error instanceof Error ? error.message : String(error) };
  }
}

/** What `exec()` answers: LlamaIndex's LLMs also give the tool calls the model made. */
type ExecResult = { object?: unknown; toolCalls?: readonly { name: string; input: unknown }[] };

/**
 * The model's own arguments to the structured-output tool when there are some: LlamaIndex's
 * `exec()` replaces arguments its schema rejects with an error string, which would hide from the
 * model what it got wrong.
 */
function answerOf(result: ExecResult): unknown {
  const call = result.toolCalls?.find((c) => c.name === STRUCTURED_OUTPUT_TOOL);
  if (call === undefined) return result.object;
  if (typeof call.input !== "string") return call.input;
  try {
    return JSON.parse(call.input) as unknown;
  } catch {
    return call.input;
  }
}

/** LlamaIndex's name for the tool `exec({ responseFormat })` offers the model. */
const STRUCTURED_OUTPUT_TOOL = "format_output";

/**
 * Asks `llm` for `response` as an object of `schema`, validated. The model reads the answer as
 * a user message (a conversation made of one assistant message is refused by some providers).
 * @example
 * import { z } from "zod";
 * import { structuredOutput } from "stepflow/compat/workflow";
 * import { ScriptedLLM } from "stepflow/llm/scripted";
 * const llm = new ScriptedLLM([{ toolCalls: [{ name: "format_output", input: { city: "Paris" } }] }]);
 * const object = await structuredOutput(llm, z.object({ city: z.string() }), { role: "assistant", content: "It is Paris." });
 * console.log(object.city); // Paris
 */
export async function structuredOutput<T>(llm: LLM, schema: ZodSchema<T>, response: ChatMessage): Promise<T> {
  const exec = (llm as { exec?: (params: { messages: ChatMessage[]; responseFormat: unknown }) => Promise<ExecResult> }).exec?.bind(llm);
  if (exec === undefined)
    throw new StructuredOutputError(
      "responseFormat needs an LLM with exec() (every LlamaIndex LLM and stepflow's have it); this one has none.",
      "no exec()",
      undefined,
    );
  const messages: ChatMessage[] = [{ role: "user", content: `Give this answer as the requested structured output:\n\n${text(response.content)}` }];
  let issues = "";
  let received: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    received = answerOf(await exec({ messages: [...messages], responseFormat: schema }));
    const checked = check(schema, received);
    if (checked.ok) return checked.value;
    issues = checked.issues;
    messages.push({ role: "user", content: `That output does not match the schema:\n${issues}\nGive it again, matching the schema.` });
  }
  throw new StructuredOutputError(
    `The model's structured output did not match responseFormat, twice (the second time after being told why):\n${issues}\nCheck that the schema can describe the answer, or use a model with structured output.`,
    issues,
    received,
  );
}
