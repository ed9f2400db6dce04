/**
 * How `Sessions` stores a conversation kept in a LlamaIndex `Memory` in `ctx.store` (the
 * `FunctionCallingAgent`'s): the memory's messages are stored one row each, the snapshot keeps
 * the memory without them, and a turn loads only the newest messages the agent sends to the
 * model, that is, those that fit its token window, with the newest question.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import { recentHistory, toolResultIdOf } from "../src/llm/chat-history.ts";
import { ContextSerdeError } from "../src/index.ts";
import type { Context, ContextJSON, Json } from "../src/index.ts";
import { agentMessages, savedWithoutMessages } from "./agent-memory.ts";
import type { MessageWindow, SessionMemory } from "../src/sessions/session-memory.ts";

/** Options of {@link memorySessions}. */
export interface MemorySessionsOptions {
  /** The `ctx.store` key the memory is kept under. */
  readonly storeKey: string;
  /** The name the memory's codec saves it with. Default "llamaindex.Memory". */
  readonly codec?: string;
  /** Tokens of history a turn sends to the model (read when a turn loads, so it may follow the LLM). */
  readonly tokenLimit: () => number;
  /** Messages loaded first. Default 64: a short session is read whole in one query. */
  readonly initialWindow?: number;
}

/** A saved LlamaIndex Memory: `Memory.snapshot()`'s fields. */
interface SavedMemory {
  messages: Json[];
  /** How many messages long-term memory blocks have processed; stored counted from the session's first message. */
  memoryCursor?: number;
  [key: string]: Json | undefined;
}

/**
 * The `SessionMemory` of a workflow that keeps its chat in a LlamaIndex `Memory` at
 * `ctx.store[storeKey]` and sends the model the newest messages that fit `tokenLimit()` tokens
 * (`recentHistory`). A turn loads the newest stored messages until they hold the newest
 * question and more than fits: the history the model sees is then the same as from the whole
 * conversation.
 * @example
 * class MyAgent extends Workflow<AgentInput, AgentResult> {
 *   readonly sessionMemory = memorySessions({ storeKey: "memory", tokenLimit: () => 50_000 });
 * }
 */
export function memorySessions(options: MemorySessionsOptions): SessionMemory {
  const { storeKey, codec = "llamaindex.Memory", tokenLimit, initialWindow = 64 } = options;

  /** The saved memory in a context's store, or undefined if there is none. */
  const savedMemory = (json: ContextJSON, doing: string): SavedMemory | undefined => {
    const store: unknown = typeof json === "object" && json !== null ? json.store : undefined;
    if (typeof store !== "object" || store === null) return undefined; // Context.fromJSON explains what is wrong with it
    const slot = (store as Record<string, Json | undefined>)[storeKey];
    if (slot === undefined) return undefined;
    const value = isObject(slot) && slot.$codec === codec ? slot.value : undefined;
    if (!isObject(value) || (value.messages !== undefined && !Array.isArray(value.messages))) {
      throw new ContextSerdeError(`Cannot ${doing} the context: its store "${storeKey}" is not a saved LlamaIndex Memory (codec "${codec}").`);
    }
    value.messages ??= [];
    return value as SavedMemory;
  };

  const sessionMemory: SessionMemory = {
    initialWindow,
    more(window: MessageWindow): number {
      const messages = window.messages as unknown as ChatMessage[];
      const loaded = messages.length;
      // The question being answered is always sent: the loaded messages must reach back to it.
      if (messages.some(isQuestion)) {
        // recentHistory keeps the newest messages that fit: if it leaves some of these out, older ones would be left out too.
        if (recentHistory(messages, tokenLimit()).length < loaded) return 0;
      }
      // No token is shorter than a byte: at least (limit - bytes) / (bytes per message) more messages fit.
      const bytes = messages.reduce((sum, message) => sum + JSON.stringify(message.content).length, 0);
      const atLeast = bytes < tokenLimit() && loaded > 0 ? Math.ceil((tokenLimit() - bytes) / Math.max(1, bytes / loaded)) : 0;
      return Math.max(atLeast, loaded, initialWindow, 1);
    },
    restore(snapshot: ContextJSON, window: MessageWindow): ContextJSON {
      const memory = savedMemory(snapshot, "restore");
      if (!memory) {
        if (window.total > 0)
          throw new ContextSerdeError(
            `Cannot restore the context: the session has messages but its context snapshot has no memory ("${storeKey}") to put them in.`,
          );
        return snapshot;
      }
      memory.messages = window.messages.slice(); // the memory appends to it: not the caller's array
      memory.memoryCursor = Math.max(0, (memory.memoryCursor ?? 0) - (window.firstSeq - 1));
      return snapshot;
    },
    save(saved: ContextJSON, window: MessageWindow) {
      const memory = savedMemory(saved, "save");
      if (!memory) {
        if (window.messages.length > 0)
          throw new ContextSerdeError(
            `The turn left no memory ("${storeKey}") in the context, though ${window.messages.length} messages were loaded. Sessions only append; start a new session to forget.`,
          );
        return { snapshot: saved, append: [] };
      }
      const messages = memory.messages;
      if (messages.length < window.messages.length) {
        throw new ContextSerdeError(
          `The turn left ${messages.length} messages in memory, fewer than the ${window.messages.length} loaded. Sessions only append; start a new session to forget.`,
        );
      }
      memory.messages = [];
      memory.memoryCursor = (memory.memoryCursor ?? 0) + (window.firstSeq - 1);
      return { snapshot: saved, append: messages.slice(window.messages.length) };
    },
    saveContext(ctx: Context, window: MessageWindow) {
      const memory = ctx.store.entries()[storeKey];
      const messages = agentMessages(memory);
      const loaded = window.messages.length;
      // The memory restore made holds the window's messages first (the same objects), unless the turn replaced them.
      if (!messages || messages.length < loaded || (loaded > 0 && messages[loaded - 1] !== window.messages[loaded - 1])) {
        return sessionMemory.save(ctx.toJSON(), window);
      }
      // Encoded without its messages: those put back from the window are stored already, and
      // the turn's own are appended as they are.
      const saved = savedWithoutMessages(memory, () => ctx.toJSON()) as ContextJSON;
      const { snapshot } = sessionMemory.save(saved, { messages: [], firstSeq: window.firstSeq, total: window.total });
      // The memory's own message objects, not a JSON copy of them (the codec's snapshot): written
      // with JSON.stringify, as Sessions writes them, they make the same text (a Date its ISO string).
      return { snapshot, append: messages.slice(loaded) as unknown as Json[] };
    },
  };
  return sessionMemory;
}

/** A message from the user, not a tool result (as recentHistory counts the question). */
function isQuestion(message: ChatMessage): boolean {
  return message.role === "user" && toolResultIdOf(message) === undefined;
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
