/**
 * Keeps the history sent to an LLM well formed. LlamaIndex `Memory.getLLM` trims the oldest
 * messages to fit the context window, which can leave a tool result whose call was trimmed
 * (OpenAI answers 400 to that), and a run that failed between a tool call and its results
 * leaves a call without results. This pure function removes both, so every tool call is
 * immediately followed by all of its results and every result follows its call.
 */
import { createHash } from "node:crypto";
import { Settings } from "@llamaindex/core/global";
import type { ChatMessage, ToolCall } from "@llamaindex/core/llms";
import { extractText } from "@llamaindex/core/utils";
import { thinkingCost } from "./kept-thinking.ts";

// What toolCallsOf gives every message without calls (most of them, asked several times each
// per turn): one list, frozen, so a caller that added to it would fail instead of giving calls
// to other messages.
const NO_CALLS = Object.freeze([]) as readonly ToolCall[] as ToolCall[];

/** The tool calls of an assistant message (LlamaIndex `options.toolCall`), or none (a shared empty list: read it, do not change it). */
export function toolCallsOf(message: ChatMessage): ToolCall[] {
  const options = message.options as { toolCall?: ToolCall[] } | undefined;
  return message.role === "assistant" && Array.isArray(options?.toolCall) ? options.toolCall : NO_CALLS;
}

/** The id of the call a tool-result message answers (LlamaIndex `options.toolResult.id`), or undefined. */
export function toolResultIdOf(message: ChatMessage): string | undefined {
  const options = message.options as { toolResult?: { id?: unknown } } | undefined;
  const id = options?.toolResult?.id;
  return typeof id === "string" ? id : undefined;
}

/**
 * Returns `messages` without orphan tool results and without tool calls whose results are
 * missing, keeping everything else in order.
 * @example
 * const history = wellFormedHistory(await memory.getLLM(llm));
 * // never starts with a tool result; each assistant tool call is followed by its results
 */
export function wellFormedHistory(messages: readonly ChatMessage[]): ChatMessage[] {
  const kept: ChatMessage[] = [];
  let index = 0;
  while (index < messages.length) {
    const message = messages[index] as ChatMessage;
    const calls = toolCallsOf(message);
    if (calls.length === 0) {
      if (toolResultIdOf(message) === undefined) kept.push(message); // a result here has no call before it
      index++;
      continue;
    }
    // The results of a call are the tool-result messages right after it.
    let end = index + 1;
    while (end < messages.length && toolResultIdOf(messages[end] as ChatMessage) !== undefined) end++;
    const results = messages.slice(index + 1, end);
    const answered = new Set(results.map(toolResultIdOf));
    if (calls.every((call) => answered.has(call.id))) {
      const callIds = new Set(calls.map((call) => call.id));
      kept.push(message, ...results.filter((result) => callIds.has(toolResultIdOf(result) as string)));
    } else if (message.content !== "" && typeof message.content === "string") {
      // Keep what the assistant said, without the calls that never got results.
      kept.push({ role: "assistant", content: message.content });
    }
    index = end;
  }
  return kept;
}

// Token counts by text: a long conversation re-sends the same messages on every LLM call, so
// each text is counted once (docs/benchmarks.md, "Why the code is shaped as it is"). Bounded;
// cleared when full.
// Long texts are keyed by a digest, so the cache keeps neither megabytes of old tool output
// alive nor its content.
// A negative count is a lower bound: a text tokenized only until it was known not to fit.
const tokenCounts = new Map<string, number>();
const TOKEN_CACHE_SIZE = 50_000;
const DIGEST_ABOVE = 256; // characters
// BPE takes time quadratic in the length of one unbroken word (a DNA sequence), which would
// block the process: text is tokenized in pieces of at most this many characters, which may
// count a few more tokens than there are at each cut. Pieces are also where counting stops once
// a text cannot fit, so a huge tool result is never tokenized whole (the tokenizer's own cache
// thrashes on text that never repeats).
const PIECE = 2_000;

/**
 * What the model reads of a message as text: its text, for an assistant's tool calls their
 * names and arguments, and the text of the thinking it keeps for Claude (sent back with it).
 * @example messageTokens(message, limit); // tokenizes messageText(message), and adds the thinking's signatures
 */
export function messageText(message: ChatMessage): string {
  const text = extractText(message.content);
  const calls = toolCallsOf(message);
  const said = calls.length === 0 ? text : `${text}${JSON.stringify(calls.map((call) => [call.name, call.input]))}`;
  const thinking = thinkingCost(message).text;
  return thinking === "" ? said : `${thinking}${said}`;
}

/**
 * At least the tokens of a message, without tokenizing it: the UTF-8 bytes of its text (no token
 * is shorter than a byte) and the tokens estimated for its thinking's signatures and redacted data.
 * @example messageBytes(message) <= tokenLimit; // then the message fits, whatever the tokenizer says
 */
export const messageBytes = (message: ChatMessage): number => Buffer.byteLength(messageText(message)) + thinkingCost(message).opaqueTokens;

/** Tokens in a text, with the tokenizer LlamaIndex memory uses (cl100k); past `atMost`, any count over it. */
function countTokens(text: string, atMost: number): number {
  const key = text.length > DIGEST_ABOVE ? `#${createHash("sha256").update(text).digest("base64")}` : text;
  const cached = tokenCounts.get(key);
  if (cached !== undefined && (cached >= 0 || -cached > atMost)) return Math.abs(cached);
  const { tokenizer } = Settings;
  let count = 0;
  let at = 0;
  for (; at < text.length && count <= atMost; at += PIECE) count += tokenizer.encode(text.slice(at, at + PIECE)).length;
  if (tokenCounts.size >= TOKEN_CACHE_SIZE) tokenCounts.clear();
  if (at >= text.length) tokenCounts.set(key, count);
  else if (count > 0) tokenCounts.set(key, -count); // a lower bound (0 would read as an exact count)
  return count;
}

/**
 * Tokens of a message as {@link recentHistory} counts them (exactly up to `atMost`; past it, any count over it).
 * @example messageTokens({ role: "user", content: "Hello!" }, 100); // 2
 */
export function messageTokens(message: ChatMessage, atMost: number): number {
  const opaque = thinkingCost(message).opaqueTokens; // signatures and redacted thinking: estimated, never tokenized
  return opaque + countTokens(messageText(message), Math.max(atMost - opaque, 0));
}

/**
 * The newest messages whose text (tool calls' arguments and kept thinking included) fits in `tokenLimit` tokens,
 * oldest first: the trimming of LlamaIndex `Memory.getLLM`, which we replace because it
 * re-tokenizes every kept message for each message it adds (quadratic in the history), on
 * every LLM call, and can return nothing at all. Here each message is tokenized once, and not
 * at all when the whole text has fewer UTF-8 bytes than the limit (no token is shorter than a
 * byte), which is every short conversation.
 *
 * Two things are always kept, even past the limit: the newest user message (the question
 * being answered) and the newest message with everything after it (the newest tool call and
 * its results). A request without them is worse than one the server refuses as too long: the
 * model would answer nothing, or something nobody asked.
 * @example
 * const history = wellFormedHistory(recentHistory(await memory.get(), 0.525 * llm.metadata.contextWindow));
 */
export function recentHistory(
  messages: readonly ChatMessage[],
  tokenLimit: number,
  tokens: (message: ChatMessage, atMost: number) => number = messageTokens,
): ChatMessage[] {
  let bytes = 0;
  for (let i = messages.length - 1; i >= 0 && bytes <= tokenLimit; i--) bytes += messageBytes(messages[i] as ChatMessage) + 1;
  if (bytes <= tokenLimit) return [...messages];
  let question = messages.length - 1;
  while (question >= 0 && !isQuestion(messages[question] as ChatMessage)) question--;
  let newest = messages.length - 1;
  while (newest > 0 && toolResultIdOf(messages[newest] as ChatMessage) !== undefined) newest--;
  // + 1 per message: the separator LlamaIndex counts between messages.
  let budget = tokenLimit - (question >= 0 ? tokens(messages[question] as ChatMessage, tokenLimit) + 1 : 0);
  let start = messages.length;
  while (start > 0) {
    const index = start - 1;
    if (index !== question) {
      const cost = tokens(messages[index] as ChatMessage, Math.max(budget, 0)) + 1;
      if (cost > budget && index < newest) break;
      budget -= cost;
    }
    start--;
  }
  const kept = messages.slice(start);
  return question >= 0 && question < start ? [messages[question] as ChatMessage, ...kept] : kept;
}

/**
 * A message from the user, not a tool result: the question `recentHistory` always keeps.
 * @example isQuestion({ role: "user", content: "Hi" }); // true
 */
export function isQuestion(message: ChatMessage): boolean {
  return message.role === "user" && toolResultIdOf(message) === undefined;
}
