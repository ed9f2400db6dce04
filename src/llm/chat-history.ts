/**
 * Keeps the history sent to an LLM well formed. LlamaIndex `Memory.getLLM` trims the oldest
 * messages to fit the context window, which can leave a tool result whose call was trimmed
 * (OpenAI answers 400 to that), and a run that failed between a tool call and its results
 * leaves a call without results. This pure function removes both, so every tool call is
 * immediately followed by all of its results and every result follows its call.
 */
import { Settings } from "@llamaindex/core/global";
import type { ChatMessage, ToolCall } from "@llamaindex/core/llms";
import { extractText } from "@llamaindex/core/utils";

/** The tool calls of an assistant message (LlamaIndex `options.toolCall`), or none. */
export function toolCallsOf(message: ChatMessage): ToolCall[] {
  const options = message.options as { toolCall?: ToolCall[] } | undefined;
  return message.role === "assistant" && Array.isArray(options?.toolCall) ? options.toolCall : [];
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

// Token counts by text: a long conversation re-sends the same messages on every LLM call, and
// tokenizing them again was most of a turn's cost at 1,000 messages. Bounded; cleared when full.
const tokenCounts = new Map<string, number>();
const TOKEN_CACHE_SIZE = 50_000;

/** Tokens in a message's text, with the tokenizer LlamaIndex memory uses (cl100k). */
function countTokens(message: ChatMessage): number {
  const text = extractText(message.content);
  let count = tokenCounts.get(text);
  if (count === undefined) {
    count = Settings.tokenizer.encode(text).length;
    if (tokenCounts.size >= TOKEN_CACHE_SIZE) tokenCounts.clear();
    tokenCounts.set(text, count);
  }
  return count;
}

/**
 * The newest messages whose text fits in `tokenLimit` tokens, oldest first: the trimming of
 * LlamaIndex `Memory.getLLM`, which we replace because it re-tokenizes every kept message for
 * each message it adds (quadratic in the history) and does so on every LLM call. Here each
 * message is tokenized once, and not at all when the whole text has fewer UTF-8 bytes than
 * the limit (no token is shorter than a byte), which is every short conversation.
 * @example
 * const history = wellFormedHistory(recentHistory(await memory.get(), 0.525 * llm.metadata.contextWindow));
 */
export function recentHistory(messages: readonly ChatMessage[], tokenLimit: number, tokens: (message: ChatMessage) => number = countTokens): ChatMessage[] {
  let bytes = 0;
  for (const message of messages) bytes += Buffer.byteLength(extractText(message.content)) + 1;
  if (bytes <= tokenLimit) return [...messages];
  let budget = tokenLimit;
  let start = messages.length;
  while (start > 0) {
    const cost = tokens(messages[start - 1] as ChatMessage) + 1; // + the separator LlamaIndex counts between messages
    if (cost > budget) break;
    budget -= cost;
    start--;
  }
  return messages.slice(start);
}
