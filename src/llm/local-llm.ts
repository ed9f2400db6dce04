/**
 * The part shared by stepflow's in-process LLMs (`ScriptedLLM`, `OfflineDemoLLM`): turning a
 * decided reply into LlamaIndex's chat response, or into a stream of chunks the way
 * `@llamaindex/openai` streams (text deltas, then the complete tool calls on a last chunk).
 */
import { ToolCallLLM } from "@llamaindex/core/llms";
import type {
  ChatMessage,
  ChatResponse,
  ChatResponseChunk,
  LLMChatParamsNonStreaming,
  LLMChatParamsStreaming,
  LLMMetadata,
  ToolCall,
  ToolCallLLMMessageOptions,
} from "@llamaindex/core/llms";

/** A reply decided in process: text in the pieces it streams in, and tool calls. */
export interface LocalReply {
  readonly deltas: readonly string[];
  readonly toolCalls: readonly ToolCall[];
}

/**
 * Subclasses decide a reply from the messages and the names of the tools offered.
 * @example
 * class Echo extends LocalLLM {
 *   protected async reply(messages: ChatMessage[]) { return { deltas: [String(messages.at(-1)?.content)], toolCalls: [] }; }
 * }
 */
export abstract class LocalLLM extends ToolCallLLM {
  readonly supportToolCall = true;
  metadata: LLMMetadata;

  constructor(model: string, contextWindow = 128_000) {
    super();
    this.metadata = { model, temperature: 0, topP: 1, contextWindow, tokenizer: undefined, structuredOutput: false };
  }

  protected abstract reply(messages: ChatMessage[], tools: string[]): Promise<LocalReply>;

  chat(params: LLMChatParamsStreaming<object, ToolCallLLMMessageOptions>): Promise<AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>>>;
  chat(params: LLMChatParamsNonStreaming<object, ToolCallLLMMessageOptions>): Promise<ChatResponse<ToolCallLLMMessageOptions>>;
  async chat(
    params: LLMChatParamsStreaming<object, ToolCallLLMMessageOptions> | LLMChatParamsNonStreaming<object, ToolCallLLMMessageOptions>,
  ): Promise<AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>> | ChatResponse<ToolCallLLMMessageOptions>> {
    const { deltas, toolCalls } = await this.reply(
      params.messages,
      (params.tools ?? []).map((t) => t.metadata.name),
    );
    if (!params.stream) {
      const content = deltas.join("");
      return {
        raw: null,
        message: toolCalls.length > 0 ? { role: "assistant", content, options: { toolCall: [...toolCalls] } } : { role: "assistant", content },
      };
    }
    return (async function* () {
      for (const delta of deltas) yield { raw: null, delta };
      if (toolCalls.length > 0) yield { raw: null, delta: "", options: { toolCall: [...toolCalls] } };
    })();
  }
}
