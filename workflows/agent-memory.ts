/**
 * The function-calling agent's conversation: a LlamaIndex `Memory` at `ctx.store` `"memory"`,
 * saved with the context by its codec, and written so that a step resumed from a context saved
 * at any moment adds its messages once.
 */
import type { ChatMessage, ToolCallLLM } from "@llamaindex/core/llms";
import { ChatMessageAdapter, Memory } from "@llamaindex/core/memory";
import type { MemoryMessage, MessageAdapter } from "@llamaindex/core/memory";
import { ContextStateError } from "../src/index.ts";
import type { Codec, Context } from "../src/index.ts";
import { flatUUID } from "./flat-uuid.ts";

/** The store key of the agent's memory (sessions read it there). @example `await ctx.store.get<Memory>(MEMORY_KEY)` */
export const MEMORY_KEY = "memory";

/**
 * Saves a LlamaIndex Memory in a context (`ctx.toJSON()`) as its snapshot; the agent gives it
 * to the engine as the `"llamaindex.Memory"` codec. A memory it restores gets `llm`, as the
 * agent's new memories do (without one, Memory looks up `Settings.llm`, which throws and is
 * caught when unset: a stack trace on every restore).
 * @example new Workflow({ codecs: { "llamaindex.Memory": memoryCodec(llm) } })
 */
export function memoryCodec(llm: ToolCallLLM): Codec<Memory> {
  return {
    test: (value) => value instanceof Memory,
    encode: (memory) => (memory instanceof AgentMemory ? memory.saved() : JSON.parse(memory.snapshot())),
    // What loadMemory does, without its JSON.stringify-then-parse round trip of every message.
    decode: (json) => {
      const { messages = [], memoryCursor = 0 } = json as { messages?: MemoryMessage[]; memoryCursor?: number };
      return new AgentMemory(messages, { memoryCursor, llm, customAdapters: ADAPTERS });
    },
  };
}

/**
 * LlamaIndex's own conversion of a chat message for memory (an id and a date added), with the
 * id made as one flat string: `Memory.add` tries custom adapters first, so the agent's memories
 * use this one, and every message keeps ~600 fewer bytes alive (see flat-uuid.ts).
 */
class FlatIdMessageAdapter extends ChatMessageAdapter implements MessageAdapter<ChatMessage, object> {
  override toMemory(message: ChatMessage): MemoryMessage {
    return { id: flatUUID(), createdAt: new Date(), ...message };
  }
}

const ADAPTER = new FlatIdMessageAdapter();
const ADAPTERS: Record<string, MessageAdapter<unknown, object>> = { stepflow: ADAPTER as MessageAdapter<unknown, object> };

/**
 * A LlamaIndex Memory that keeps its own list of messages: the list it was made with, which
 * `Memory` appends to (its constructor keeps the array it is given; the agent's tests check
 * that messages added here are the ones `get()` returns). Knowing the list, the agent reads
 * its messages without a copy and without `Memory`'s private fields. The agent makes its
 * memories without memory blocks, so a message added to one needs nothing of `Memory.add` but
 * the adapter's conversion and a push: `add` is async and awaits `manageMemoryBlocks`, ~600
 * bytes and two microtasks per message. (A field, not a WeakMap: a lookup per message, and no
 * weak entries for the scavenger to trace for every session in flight.)
 */
class AgentMemory extends Memory {
  /** The list `Memory` appends to, until `clear()` gives it a new one. */
  #messages: MemoryMessage[] | undefined;
  /** `Memory`'s cursor: without memory blocks only `clear()` moves it. */
  #cursor: number;
  /** Whether `saved()` leaves the messages out (a saver that stores them apart asked it to). */
  #withoutMessages = false;

  constructor(messages: MemoryMessage[], options: ConstructorParameters<typeof Memory>[1] & { memoryCursor?: number }) {
    super(messages, options);
    this.#messages = messages;
    this.#cursor = options?.memoryCursor ?? 0;
  }

  override async clear(): Promise<void> {
    this.#messages = undefined; // Memory starts a list of its own, which this memory does not know
    this.#cursor = 0;
    await super.clear();
  }

  /** What `snapshot()` gives, as JSON, without its stringify-then-parse round trip of each message object. */
  saved(): { messages: unknown[]; memoryCursor: number } {
    if (this.#messages === undefined) return JSON.parse(this.snapshot()) as { messages: unknown[]; memoryCursor: number };
    const messages = this.#withoutMessages ? [] : (JSON.parse(JSON.stringify(this.#messages)) as unknown[]);
    return { messages, memoryCursor: this.#cursor };
  }

  /** The memory's messages (its own list, the same objects), or `undefined` once cleared. */
  static messagesOf(memory: unknown): readonly MemoryMessage[] | undefined {
    return memory instanceof AgentMemory ? memory.#messages : undefined;
  }

  /** What `save` returns, with `saved()` leaving out the messages of the memory while it runs. */
  static withoutMessages<T>(memory: AgentMemory, save: () => T): T {
    memory.#withoutMessages = true;
    try {
      return save();
    } finally {
      memory.#withoutMessages = false;
    }
  }

  /**
   * Adds `message` as `add` would, at once, while the memory's messages are still its own
   * list; else `false`, for `add` to do it.
   */
  static addAtOnce(memory: Memory, message: ChatMessage): boolean {
    const own = AgentMemory.messagesOf(memory);
    if (own === undefined || !ADAPTER.isCompatible(message)) return false;
    (own as MemoryMessage[]).push(ADAPTER.toMemory(message));
    return true;
  }
}

/**
 * The messages of a memory the agent made, as the list it keeps (the same objects, not a copy),
 * or `undefined` for any other Memory, or one cleared since.
 * @example const stored = agentMessages(memory)?.length;
 */
export function agentMessages(memory: unknown): readonly MemoryMessage[] | undefined {
  return AgentMemory.messagesOf(memory);
}

/**
 * What `save` returns, with a memory the agent made encoded without its messages while `save`
 * runs (for a saver that stores them apart); `false` when `memory` is not one.
 * @example const json = savedWithoutMessages(memory, () => ctx.toJSON());
 */
export function savedWithoutMessages<T>(memory: unknown, save: () => T): T | false {
  return memory instanceof AgentMemory && AgentMemory.messagesOf(memory) !== undefined ? AgentMemory.withoutMessages(memory, save) : false;
}

/** Adds `message` to `memory` as `memory.add` does: at once when it can, else by `add`, and its promise. */
function addMessage(memory: Memory, message: ChatMessage): Promise<void> | undefined {
  return AgentMemory.addAtOnce(memory, message) ? undefined : memory.add(message);
}

/**
 * The agent's memory in `ctx.store`, created on a context's first run.
 * @example const memory = await agentMemory(ctx, llm);
 */
export async function agentMemory(ctx: Context, llm: ToolCallLLM): Promise<Memory> {
  const existing = await ctx.store.get<unknown>(MEMORY_KEY, undefined);
  if (existing instanceof Memory) return existing;
  if (existing !== undefined) {
    throw new ContextStateError(
      `ctx.store "${MEMORY_KEY}" holds a ${typeof existing}, not a LlamaIndex Memory. Use a fresh Context, or store the agent's memory under that key only.`,
    );
  }
  // Given the LLM, Memory does not look up Settings.llm, which throws (and is caught) when unset.
  const memory = new AgentMemory([], { llm, customAdapters: ADAPTERS });
  await ctx.store.set(MEMORY_KEY, memory);
  return memory;
}

/**
 * Memory as a run writes it: `size` messages, of which `history` are the newest that fit the
 * history's token limit (kept up to date, so each LLM call does not read all of memory).
 * @example const conversation: Conversation = { memory, size: 0, history: [] };
 */
export interface Conversation<H extends HistoryLike = ChatMessage[]> {
  readonly memory: Memory;
  size: number;
  /** The history the run sends the model (the agent's `RunHistory`, or an array). */
  history: H;
}

/** What `appendAt` needs of a history: messages pushed at its end. @example `const h: HistoryLike = [];` */
export interface HistoryLike {
  push(...messages: ChatMessage[]): unknown;
}

/**
 * Adds a step's messages to memory at the place the step recorded (`at`, the size of memory
 * then), unless they are there already: a step resumed from a context saved after it wrote
 * them, but before it returned, writes them once. `false` when they were there; else `true`
 * once they are in memory, or a promise while `memory.add` is at work on them (a memory the
 * agent made takes messages at once). Each `memory.add` appends before its first await, so a
 * save sees all of them or none.
 * @example
 * const at = (await ctx.once("memory size", () => conversation.size, { rerunUnfinished: true })).value;
 * const written = appendAt(conversation, at, [message]);
 * if (written instanceof Promise) await written;
 */
export function appendAt(conversation: Conversation<HistoryLike>, at: number, messages: readonly ChatMessage[]): Promise<unknown> | boolean {
  if (conversation.size !== at) return false;
  conversation.size += messages.length;
  for (const message of messages) conversation.history.push(message); // not a spread call: one message, mostly
  // A step writes one message at a time but for its tool results: no Promise.all (and its array and closures) for one.
  if (messages.length === 1) return addMessage(conversation.memory, messages[0] as ChatMessage) ?? true;
  let adding: Promise<void>[] | undefined;
  for (const message of messages) {
    const added = addMessage(conversation.memory, message);
    if (added) (adding ??= []).push(added);
  }
  return adding ? Promise.all(adding) : true;
}

/**
 * Whether `message` is already `last`, the newest of the history, as a question without
 * options: a question asked again after a run that failed before the model answered is kept once.
 * @example isNewest({ role: "user", content: "Hi" }, history.last)
 */
export function isNewest(message: ChatMessage, last: ChatMessage | undefined): boolean {
  return (
    last !== undefined &&
    last.role === message.role &&
    last.options === undefined &&
    message.options === undefined &&
    JSON.stringify(last.content) === JSON.stringify(message.content)
  );
}
