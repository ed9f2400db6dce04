/**
 * How a model is asked for an answer in a JSON schema, and how a model class says it can be.
 * The agent passes a {@link ReplyFormat} in LlamaIndex's `responseFormat` chat parameter to a
 * model that answers in a schema natively (`replyFormat: "json-schema"`: OpenAI's
 * `response_format`, Gemini's `responseJsonSchema`, Ollama's `format`); any other model gets a
 * tool to call with its answer instead, and one that can be made to call a tool
 * (`replyFormat: "tool-choice"`: Anthropic's `tool_choice`) is told to call one on every turn.
 */
import type { LLM } from "@llamaindex/core/llms";

/**
 * An answer's JSON schema as the agent sends it: a name (OpenAI's `json_schema.name`) and the
 * schema of an object, without `$schema`.
 * @example const format: ReplyFormat = { name: "answer", schema: { type: "object", properties: { total: { type: "number" } }, required: ["total"] } };
 */
export interface ReplyFormat {
  readonly name: string;
  readonly schema: Readonly<Record<string, unknown>>;
}

/**
 * What a model class can do for an answer in a schema: `"json-schema"`, take the schema with
 * the request (the answer is its text, as JSON); `"tool-choice"`, be made to call some tool on
 * every turn (the answer is a call of the tool that takes it).
 * @example class MyModel extends ProviderLLM { readonly replyFormat: ReplyFormatSupport = "json-schema"; … }
 */
export type ReplyFormatSupport = "json-schema" | "tool-choice";

/**
 * What `llm` says it can do for an answer in a schema (its `replyFormat`), or `undefined`.
 * @example replyFormatSupport(new OpenAI({ model: "gpt-4o-mini" })); // "json-schema"
 */
export function replyFormatSupport(llm: LLM): ReplyFormatSupport | undefined {
  const support = (llm as { replyFormat?: unknown }).replyFormat;
  return support === "json-schema" || support === "tool-choice" ? support : undefined;
}

/**
 * The `ReplyFormat` in a chat call's `responseFormat`, if that is one (LlamaIndex also passes
 * zod schemas and raw provider objects there).
 * @example const format = replyFormatOf(params.responseFormat);
 */
export function replyFormatOf(responseFormat: unknown): ReplyFormat | undefined {
  if (typeof responseFormat !== "object" || responseFormat === null) return undefined;
  const { name, schema, kind } = responseFormat as { name?: unknown; schema?: unknown; kind?: unknown };
  return kind === REPLY_FORMAT && typeof name === "string" && typeof schema === "object" && schema !== null ? (responseFormat as ReplyFormat) : undefined;
}

/** Marks a `ReplyFormat` made by {@link replyFormat}, so that a raw provider object is never taken for one. */
const REPLY_FORMAT = "stepflow.replyFormat";

/**
 * A `ReplyFormat` to pass as `responseFormat` to `chat` (marked as stepflow's).
 * @example await llm.chat({ messages, stream: true, responseFormat: replyFormat("answer", schema) });
 */
export function replyFormat(name: string, schema: Readonly<Record<string, unknown>>): ReplyFormat {
  return { kind: REPLY_FORMAT, name, schema } as ReplyFormat;
}

/**
 * Whether OpenAI's strict mode takes `schema`: every object lists all its properties as
 * required and allows no others (an optional field makes strict mode refuse the request).
 * @example strictSchema({ type: "object", properties: { a: { type: "number" } }, required: ["a"], additionalProperties: false }); // true
 */
export function strictSchema(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(strictSchema);
  if (typeof schema !== "object" || schema === null) return true;
  const node = schema as Record<string, unknown>;
  if (node.type === "object" || node.properties !== undefined) {
    const properties = Object.keys((node.properties as object | undefined) ?? {});
    const required = Array.isArray(node.required) ? node.required : [];
    if (node.additionalProperties !== false || properties.some((key) => !required.includes(key))) return false;
  }
  return Object.values(node).every(strictSchema);
}
