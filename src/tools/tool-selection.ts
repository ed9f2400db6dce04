/**
 * Choosing which of many tools to send the model on one call: every tool spec costs prompt
 * tokens on every call, so an agent with hundreds of tools sends only those most relevant to
 * the user's question, found by a local BM25 full-text index (minisearch) over each tool's
 * name, description and parameters. No network, no model.
 */
import type { BaseTool, ChatMessage, MessageContent } from "@llamaindex/core/llms";
import MiniSearch from "minisearch";
import { stemmer } from "stemmer";
import { ConfigurationError, isRecord } from "../core/internal.ts";

/**
 * Picks the tools to send the model for one question.
 * @example
 * const selector: ToolSelector = { select: (query, k) => tools.filter((t) => query.includes(t.metadata.name)).slice(0, k) };
 */
export interface ToolSelector {
  /** At most `k` tools for `query` (the user's latest message), most relevant first. */
  select(query: string, k: number): readonly BaseTool[];
}

/**
 * Options of {@link bm25ToolSelector}.
 * @example bm25ToolSelector(tools, { boost: { name: 3, parameters: 0 } });
 */
export interface Bm25ToolSelectorOptions {
  /** How much a word in a field counts: defaults `{ name: 2, description: 1, parameters: 0.5 }`. */
  readonly boost?: { readonly name?: number; readonly description?: number; readonly parameters?: number };
}

interface ToolDocument {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  readonly parameters: string;
}

// Words that say nothing about which tool a question needs.
const STOP_WORDS = new Set(
  (
    "a an and any are as at be by can could do does for from get give has have how i if in into is it its me my of on or our please show " +
    "tell that the their them then there these this to up us want was we what when where which who whose why will with would you your"
  ).split(" "),
);

/** Splits `getUserById`, `get_user_by_id` and `/users/{id}` alike into words. */
function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
}

function processTerm(term: string): string | null {
  const word = term.toLowerCase();
  return STOP_WORDS.has(word) ? null : stemmer(word);
}

/** The words of a tool's JSON schema: its property names and their descriptions, nested ones included. */
function schemaWords(schema: unknown, depth = 0): string[] {
  if (!isRecord(schema) || depth > 4) return [];
  const words: string[] = [];
  if (isRecord(schema.properties)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      words.push(name);
      if (isRecord(property) && typeof property.description === "string") words.push(property.description);
      words.push(...schemaWords(property, depth + 1));
    }
  }
  if (isRecord(schema.items)) words.push(...schemaWords(schema.items, depth + 1));
  return words;
}

/**
 * A {@link ToolSelector} that ranks tools by BM25 over their name, description and parameter
 * names, with words split at case and underscore changes and stemmed (Porter), so
 * "refunds for order 12" finds `refundOrder`. Built once for a list of tools.
 * @example
 * const selector = bm25ToolSelector(tools);
 * selector.select("Fire Michael Lawson", 10).map((t) => t.metadata.name); // ["delete_api_users_id", "get_api_users", …]
 */
export function bm25ToolSelector(tools: readonly BaseTool[], options: Bm25ToolSelectorOptions = {}): ToolSelector {
  const index = new MiniSearch<ToolDocument>({ fields: ["name", "description", "parameters"], tokenize, processTerm });
  index.addAll(
    tools.map((tool, id) => ({
      id,
      name: tool.metadata.name,
      description: tool.metadata.description,
      parameters: schemaWords(tool.metadata.parameters).join(" "),
    })),
  );
  const boost = { name: options.boost?.name ?? 2, description: options.boost?.description ?? 1, parameters: options.boost?.parameters ?? 0.5 };
  return {
    select(query, k) {
      const hits = index.search(query, { boost, combineWith: "OR" });
      return hits.slice(0, k).map((hit) => tools[hit.id as number] as BaseTool);
    },
  };
}

/**
 * `maxToolsPerCall` when usable: a whole number ≥ 1, or undefined (all tools on every call).
 * @example checkMaxToolsPerCall(10); // 10
 */
export function checkMaxToolsPerCall(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
    throw new ConfigurationError(
      `maxToolsPerCall must be a whole number ≥ 1 (the tools sent on each LLM call), or left out to send every tool; got ${String(value)}.`,
      "maxToolsPerCall",
      value,
    );
  return value;
}

function textOf(content: MessageContent): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : "")).join(" ");
}

const isToolResult = (message: ChatMessage) => isRecord(message.options) && "toolResult" in message.options;

/** User messages of `history` (tool results are sent with the user role by LlamaIndex: not those), newest first. */
function questions(history: readonly ChatMessage[]): number[] {
  const found: number[] = [];
  for (let i = history.length - 1; i >= 0; i--) if (history[i]?.role === "user" && !isToolResult(history[i] as ChatMessage)) found.push(i);
  return found;
}

const EARLIER_QUESTIONS = 2; // earlier questions searched when the latest finds fewer than k tools ("and the other one?")

/** Names of the tools called in `messages`, newest call first. */
function calledTools(messages: readonly ChatMessage[]): string[] {
  const names: string[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const options = (messages[i] as ChatMessage).options;
    const calls = isRecord(options) ? (options as { toolCall?: unknown }).toolCall : undefined;
    if (!Array.isArray(calls)) continue;
    for (let j = calls.length - 1; j >= 0; j--) {
      const call: unknown = calls[j];
      if (isRecord(call) && typeof call.name === "string" && !names.includes(call.name)) names.push(call.name);
    }
  }
  return names;
}

/**
 * The tools to send when the selector finds none for the latest questions ("Hi", a question in
 * a language the tools are not described in): the `k` the model called last in the conversation,
 * then the first of `tools`, so that the model always has tools to call, as a vector retriever,
 * which always ranks something first, would give it.
 */
function fallbackTools(history: readonly ChatMessage[], tools: readonly BaseTool[], k: number): Set<string> {
  const names = new Set(tools.map((tool) => tool.metadata.name));
  const chosen = new Set(
    calledTools(history)
      .filter((name) => names.has(name))
      .slice(0, k),
  );
  for (const tool of tools) {
    if (chosen.size >= k) break;
    chosen.add(tool.metadata.name);
  }
  return chosen;
}

/**
 * The tools to send on the next call of a turn: the `k` the selector finds for the user's
 * latest message (then for the one or two before it, while fewer than `k` are found), and
 * every tool the model has called since that message, as its next step may need it again.
 * When the selector finds none at all (a greeting, a language the tools are not described in),
 * the `k` tools the model called last in the conversation go instead, then the first of
 * `tools` up to `k`: never none. They keep the order of `tools`: a stable order keeps the
 * prompt's prefix, which servers cache, the same from call to call.
 * @example
 * const sent = toolsForCall(history, agent.tools, bm25ToolSelector(agent.tools), 10);
 */
export function toolsForCall(history: readonly ChatMessage[], tools: readonly BaseTool[], selector: ToolSelector, k: number): readonly BaseTool[] {
  if (tools.length <= k) return tools;
  const asked = questions(history);
  const wanted = new Set(calledTools(history.slice((asked[0] ?? -1) + 1)));
  let selected = new Set<string>();
  for (const at of asked.slice(0, 1 + EARLIER_QUESTIONS)) {
    for (const tool of selector.select(textOf((history[at] as ChatMessage).content), k)) {
      if (selected.size < k) selected.add(tool.metadata.name);
    }
    if (selected.size >= k) break;
  }
  if (selected.size === 0) selected = fallbackTools(history, tools, k);
  return tools.filter((tool) => wanted.has(tool.metadata.name) || selected.has(tool.metadata.name));
}
