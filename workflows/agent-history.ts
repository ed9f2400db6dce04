/**
 * The agent's history as a run reads it from memory, counted once per message: a session
 * continued turn after turn in one process hands the agent the same message objects (its
 * window cache keeps them), so neither converting a message for the model nor counting its
 * tokens is done again on the next LLM call or the next turn.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import type { Memory, MemoryMessage } from "@llamaindex/core/memory";
import { messageTokens } from "../src/llm/chat-history.ts";

// Keyed by the message objects themselves: gone with them.
const chatMessages = new WeakMap<object, ChatMessage>();
// Exact counts; a negative one is a lower bound, counted only until the message could not fit.
const tokenCounts = new WeakMap<ChatMessage, number>();

/**
 * The messages of a LlamaIndex `Memory` (its private `messages` field, which it only appends
 * to), or `undefined` if this version of LlamaIndex keeps them elsewhere.
 * @example const stored = memoryMessages(memory)?.length;
 */
export function memoryMessages(memory: Memory): MemoryMessage[] | undefined {
  const messages = (memory as unknown as { messages?: unknown }).messages;
  return Array.isArray(messages) ? (messages as MemoryMessage[]) : undefined;
}

/**
 * What `memory.get()` returns (the chat messages, oldest first), without a new object per
 * message on each call: one made per memory message is reused.
 * @example const history = await chatHistory(memory);
 */
export async function chatHistory(memory: Memory): Promise<ChatMessage[]> {
  const messages = memoryMessages(memory);
  if (!messages) return memory.get();
  return messages.map((message) => {
    let chat = chatMessages.get(message);
    if (!chat) chatMessages.set(message, (chat = { content: message.content, role: message.role, options: message.options } as ChatMessage));
    return chat;
  });
}

/**
 * `messageTokens`, remembered per message object: pass it to `recentHistory` so that each LLM
 * call of a long conversation does not look every message up again by its text.
 * @example recentHistory(history, tokenLimit, countedTokens);
 */
export function countedTokens(message: ChatMessage, atMost: number): number {
  const known = tokenCounts.get(message);
  if (known !== undefined && (known >= 0 || -known > atMost)) return Math.abs(known);
  const count = messageTokens(message, atMost);
  // messageTokens counts past atMost only as far as it must: then the count is a lower bound.
  tokenCounts.set(message, count > atMost ? -count : count);
  return count;
}
