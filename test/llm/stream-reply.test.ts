import { ToolCallLLM } from "@llamaindex/core/llms";
import type {
  ChatResponse,
  ChatResponseChunk,
  LLMChatParamsNonStreaming,
  LLMChatParamsStreaming,
  LLMMetadata,
  ToolCallLLMMessageOptions,
} from "@llamaindex/core/llms";
import { describe, expect, it } from "vitest";
import { streamReply } from "../../src/llm/stream-reply.ts";

type Chunk = ChatResponseChunk<ToolCallLLMMessageOptions>;

/** Streams the chunks it is given, as an adapter that sends tool calls in growing pieces would. */
class ChunksLLM extends ToolCallLLM {
  readonly supportToolCall = true;
  metadata: LLMMetadata = { model: "chunks", temperature: 0, topP: 1, contextWindow: 8000, tokenizer: undefined, structuredOutput: false };
  constructor(private readonly chunks: Chunk[]) {
    super();
  }
  chat(params: LLMChatParamsStreaming<object, ToolCallLLMMessageOptions>): Promise<AsyncIterable<Chunk>>;
  chat(params: LLMChatParamsNonStreaming<object, ToolCallLLMMessageOptions>): Promise<ChatResponse<ToolCallLLMMessageOptions>>;
  async chat(): Promise<AsyncIterable<Chunk> | ChatResponse<ToolCallLLMMessageOptions>> {
    const chunks = this.chunks;
    return (async function* () {
      yield* chunks;
    })();
  }
}

const signal = new AbortController().signal;

describe("streamReply", () => {
  it("keeps the last version of each tool call, in the order the calls first came, and the text in order", async () => {
    const llm = new ChunksLLM([
      { raw: null, delta: "Adding " },
      { raw: null, delta: "", options: { toolCall: [{ id: "a", name: "add", input: { x: 1 } }] } },
      { raw: null, delta: "then multiplying.", options: { toolCall: [{ id: "b", name: "multiply", input: { x: 2 } }] } },
      { raw: null, delta: "", options: { toolCall: [{ id: "a", name: "add", input: { x: 1, y: 2 } }] } },
      { raw: null, delta: "", options: { toolCall: [{ id: "b", name: "multiply", input: { x: 2, y: 3 } }] } },
    ]);
    const deltas: string[] = [];
    const reply = await streamReply(llm, [{ role: "user", content: "go" }], [], signal, (delta) => deltas.push(delta));
    expect(reply).toEqual({
      role: "assistant",
      content: "Adding then multiplying.",
      options: {
        toolCall: [
          { id: "a", name: "add", input: { x: 1, y: 2 } },
          { id: "b", name: "multiply", input: { x: 2, y: 3 } },
        ],
      },
    });
    expect(deltas).toEqual(["Adding ", "then multiplying."]);
  });

  it("keeps two calls of one chunk that share an id as two, in growing pieces too, and gives the second an id of its own", async () => {
    const llm = new ChunksLLM([
      { raw: null, delta: "", options: { toolCall: [{ id: "c", name: "add", input: { x: 1 } }] } },
      {
        raw: null,
        delta: "",
        options: {
          toolCall: [
            { id: "c", name: "add", input: { x: 1, y: 2 } },
            { id: "c", name: "multiply", input: { x: 3 } },
          ],
        },
      },
      {
        raw: null,
        delta: "",
        options: {
          toolCall: [
            { id: "c", name: "add", input: { x: 1, y: 2 } },
            { id: "c", name: "multiply", input: { x: 3, y: 4 } },
          ],
        },
      },
      { raw: null, delta: "", options: { toolCall: [{ id: "c_2", name: "now", input: {} }] } },
    ]);
    const reply = await streamReply(llm, [{ role: "user", content: "go" }], [], signal, () => undefined);
    expect((reply.options as { toolCall: unknown[] }).toolCall).toEqual([
      { id: "c", name: "add", input: { x: 1, y: 2 } },
      { id: "c_3", name: "multiply", input: { x: 3, y: 4 } },
      { id: "c_2", name: "now", input: {} },
    ]);
  });

  it("gives a message without options when the model called no tool", async () => {
    const llm = new ChunksLLM([
      { raw: null, delta: "Hi" },
      { raw: null, delta: "", options: { toolCall: [] } },
    ]);
    expect(await streamReply(llm, [{ role: "user", content: "go" }], [], signal, () => {})).toEqual({ role: "assistant", content: "Hi" });
  });

  it("rejects, never throws, when the LLM's chat throws before it returns a promise", async () => {
    const llm = new ChunksLLM([]);
    llm.chat = (() => {
      throw new Error("no connection");
    }) as typeof llm.chat;
    let reply: Promise<unknown> | undefined;
    expect(() => (reply = streamReply(llm, [{ role: "user", content: "go" }], [], signal, () => {}))).not.toThrow();
    await expect(reply).rejects.toThrow("no connection");
  });

  it("stops at an abort while the model streams, and rejects with the abort's reason", async () => {
    const controller = new AbortController();
    const llm = new ChunksLLM([
      { raw: null, delta: "one " },
      { raw: null, delta: "two" },
    ]);
    const deltas: string[] = [];
    const reply = streamReply(llm, [{ role: "user", content: "go" }], [], controller.signal, (delta) => {
      deltas.push(delta);
      controller.abort(new Error("run cancelled"));
    });
    await expect(reply).rejects.toThrow("run cancelled");
    expect(deltas).toEqual(["one "]);
  });
});
