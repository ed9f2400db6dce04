/**
 * One streamed LLM call with tools, gathered into the assistant message it makes: its text as
 * it streams, and its tool calls complete.
 */
import type { BaseTool, ChatMessage, ToolCall, ToolCallLLM } from "@llamaindex/core/llms";
import { usageOf } from "./token-usage.ts";
import type { TokenUsage } from "./token-usage.ts";

/**
 * Streams `llm`'s reply to `messages`, calling `onDelta` with each piece of text, and returns
 * the reply as one assistant message (`options.toolCall` when the model called tools). Throws
 * the signal's reason when `signal` aborts meanwhile, so that a cut-off reply is never taken
 * for a whole one (the OpenAI SDK ends an aborted stream quietly). `onUsage` gets the token
 * usage the server reported in a chunk's `raw` (OpenAI's last chunk, with `include_usage`), if any.
 * @example
 * const reply = await streamReply(llm, history, tools, ctx.signal, (delta) => process.stdout.write(delta));
 */
export async function streamReply(
  llm: ToolCallLLM,
  messages: ChatMessage[],
  tools: readonly BaseTool[],
  signal: AbortSignal,
  onDelta: (delta: string) => void,
  onUsage?: (usage: TokenUsage) => void,
): Promise<ChatMessage> {
  // An LLM that can abort a request (stepflow's OpenAI) gets the signal: an aborted run closes its request.
  const options = (llm as { supportsAbortSignal?: boolean }).supportsAbortSignal === true ? { additionalChatOptions: { signal } } : {};
  let content = "";
  // Keyed by id, last seen wins: adapters that emit growing partial calls still end complete.
  const calls = new Map<string, ToolCall>();
  for await (const chunk of await llm.chat({ messages, tools: tools as BaseTool[], stream: true, ...options })) {
    if (signal.aborted) break;
    if (chunk.delta) {
      content += chunk.delta;
      onDelta(chunk.delta);
    }
    if (onUsage && chunk.raw) {
      const usage = usageOf(chunk.raw);
      if (usage) onUsage(usage);
    }
    for (const call of (chunk.options as { toolCall?: ToolCall[] } | undefined)?.toolCall ?? []) calls.set(call.id, call);
  }
  if (signal.aborted) throw signal.reason;
  const toolCalls = [...calls.values()];
  return toolCalls.length > 0 ? { role: "assistant", content, options: { toolCall: toolCalls } } : { role: "assistant", content };
}
