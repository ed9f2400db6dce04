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
  PartialToolCall,
  ToolCall,
  ToolCallLLMMessageOptions,
} from "@llamaindex/core/llms";

/** A reply decided in process: text in the pieces it streams in, and tool calls (arguments as an object or a JSON string). */
export interface LocalReply {
  readonly deltas: readonly string[];
  readonly toolCalls: readonly (ToolCall | PartialToolCall)[];
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
  chat(
    params: LLMChatParamsStreaming<object, ToolCallLLMMessageOptions> | LLMChatParamsNonStreaming<object, ToolCallLLMMessageOptions>,
  ): Promise<AsyncIterable<ChatResponseChunk<ToolCallLLMMessageOptions>> | ChatResponse<ToolCallLLMMessageOptions>> {
    // Not an async function: a request in flight keeps the reply's promise and this callback,
    // not a frame waiting for the reply.
    let reply: Promise<LocalReply>;
    try {
      reply = this.reply(
        params.messages,
        (params.tools ?? []).map((t) => t.metadata.name),
      );
    } catch (error) {
      return Promise.reject(error as Error); // as an async function would
    }
    const stream = params.stream;
    return reply.then(({ deltas, toolCalls }) => {
      if (!stream) {
        const content = deltas.join("");
        return {
          raw: null,
          message: toolCalls.length > 0 ? { role: "assistant", content, options: { toolCall: [...toolCalls] } } : { role: "assistant", content },
        };
      }
      return new ReplyStream(deltas, toolCalls);
    });
  }
}

type Chunk = ChatResponseChunk<ToolCallLLMMessageOptions>;

/**
 * A decided reply's chunks, as `@llamaindex/openai` streams them: the text deltas, then the
 * complete tool calls on a last chunk. What an async generator would give, without the request
 * object, promises and await it makes per step: an agent's session keeps these alive while it
 * waits for the model, so with many sessions in flight they are work for the garbage collector.
 */
class ReplyStream implements AsyncIterableIterator<Chunk> {
  #next = 0;

  constructor(
    private readonly deltas: readonly string[],
    private readonly toolCalls: readonly (ToolCall | PartialToolCall)[],
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Chunk, undefined>> {
    const at = this.#next++;
    if (at < this.deltas.length) return Promise.resolve({ value: { raw: null, delta: this.deltas[at] as string }, done: false });
    if (at === this.deltas.length && this.toolCalls.length > 0)
      return Promise.resolve({ value: { raw: null, delta: "", options: { toolCall: [...this.toolCalls] } }, done: false });
    this.#next = Infinity; // done for good, as a generator is
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Stopping early (a `break` in `for await`) ends the stream, as a generator's `return()` does. */
  return(): Promise<IteratorResult<Chunk, undefined>> {
    this.#next = Infinity;
    return Promise.resolve({ value: undefined, done: true });
  }
}
