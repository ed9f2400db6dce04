/**
 * The thinking an assistant message keeps for Claude (`options.anthropic.content`, written by
 * the Anthropic provider), as the history's trimming counts it: the blocks go back to the API
 * with the message, so they take room in the context window like its text does.
 */
import type { ChatMessage } from "@llamaindex/core/llms";

/** A block of a reply kept on its message, as far as counting needs to know it. */
interface KeptBlock {
  readonly type: string;
  readonly thinking?: unknown;
  readonly signature?: unknown;
  readonly data?: unknown;
}

/**
 * The reply blocks an assistant message keeps (`options.anthropic.content`), or none.
 * @example keptReplyBlocks(response).filter((block) => block.type === "thinking");
 */
export function keptReplyBlocks(message: ChatMessage): readonly KeptBlock[] {
  if (message.role !== "assistant") return [];
  const content = (message.options as { anthropic?: { content?: unknown } } | undefined)?.anthropic?.content;
  return Array.isArray(content) ? (content as KeptBlock[]) : [];
}

/** What a message's kept thinking costs: text to tokenize, and tokens estimated for what cannot be read. */
export interface ThinkingCost {
  /** The thinking text of its `thinking` blocks, joined. */
  readonly text: string;
  /** Tokens estimated for its signatures and `redacted_thinking` data. */
  readonly opaqueTokens: number;
}

const NONE: ThinkingCost = Object.freeze({ text: "", opaqueTokens: 0 });

/**
 * What the thinking kept on `message` adds to its size in the context window.
 *
 * The thinking text is text the model reads: the caller tokenizes it with the rest. A
 * signature (and a `redacted_thinking` block's data) is base64 of encrypted thinking, which
 * the API decrypts for the model: with summarized thinking the signature carries the full
 * thinking the summary stands for, and with the thinking text omitted it is all there is. It
 * is counted as one token per two bytes it decodes to: encryption does not make text shorter,
 * and text takes more than two bytes a token (with cl100k: English prose 3.6, TypeScript 4.1,
 * Japanese 3.0, Chinese 2.6), so this is at or above the tokens of the thinking it hides; its
 * fixed overhead (nonce, key, tag) only adds to it. Tokenizing the base64 itself would count
 * the ciphertext, about one token per byte (5,758 cl100k tokens for 6,000 random bytes), four
 * times what an English thinking costs, at about 6 ms a kilobyte. A summary and its signature
 * are both counted: a little over, never under.
 * @example thinkingCost(response).opaqueTokens; // 0 for a message without kept thinking
 */
export function thinkingCost(message: ChatMessage): ThinkingCost {
  const blocks = keptReplyBlocks(message);
  if (blocks.length === 0) return NONE;
  let text = "";
  let opaqueTokens = 0;
  for (const block of blocks) {
    if (block.type === "thinking") {
      if (typeof block.thinking === "string") text += block.thinking;
      opaqueTokens += base64Tokens(block.signature);
    } else if (block.type === "redacted_thinking") opaqueTokens += base64Tokens(block.data);
  }
  return text === "" && opaqueTokens === 0 ? NONE : { text, opaqueTokens };
}

/** One token per two decoded bytes of a base64 string (3 bytes per 4 characters). */
function base64Tokens(value: unknown): number {
  return typeof value === "string" ? Math.ceil((value.length * 3) / 8) : 0;
}
