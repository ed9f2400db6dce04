/**
 * Persisted conversations: load a session's context, run one turn, save it — only if the
 * turn completed, and only if nobody else saved the session meanwhile (versioned saves).
 *
 * Storage grows with each turn's new messages, not with the history: the chat messages of
 * the agent's LlamaIndex `Memory` are appended one row each, and the context snapshot saved
 * with them holds the memory without its messages.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import { Context } from "../context.ts";
import type { ContextJSON } from "../context.ts";
import type { Event } from "../event.ts";
import type { WorkflowHandler } from "../handler.ts";
import { ContextSerdeError } from "../serialize.ts";
import type { Json } from "../serialize.ts";
import type { RunOptions, Workflow } from "../workflow.ts";
import type { SessionStore, SessionSummary } from "./types.ts";
import { useJournal } from "../journal/context-journal.ts";

const MEMORY_CODEC = "llamaindex.Memory";

/** A stored chat message with the time it was saved. */
export interface SessionMessage {
  readonly message: ChatMessage;
  readonly createdAt: Date;
}

/**
 * One turn of a session: await it for the result (after the session is saved), or stream
 * its events first, or cancel it. A turn that fails, is cancelled or times out saves nothing.
 * @example
 * const turn = sessions.run("alice", { input: "What is my name?" });
 * for await (const ev of turn.streamEvents()) if (ev instanceof StreamEvent) process.stdout.write(ev.delta);
 * const { response } = await turn;
 */
export class SessionTurn<R> implements PromiseLike<R> {
  // Boxed: a handler is thenable, and a promise of it would unwrap it to its result.
  readonly #handler: Promise<{ readonly handler: WorkflowHandler<R> }>;
  readonly #result: Promise<R>;

  /** @internal */
  constructor(started: Promise<{ readonly handler: WorkflowHandler<R> }>, result: Promise<R>) {
    this.#handler = started;
    this.#result = result;
    this.#handler.catch(() => {});
    this.#result.catch(() => {});
  }

  /** The run's events, as `WorkflowHandler.streamEvents()`; ends early if loading the session failed. */
  streamEvents(): AsyncIterable<Event> {
    const handler = this.#handler;
    return {
      async *[Symbol.asyncIterator]() {
        let started: { readonly handler: WorkflowHandler<R> };
        try {
          started = await handler;
        } catch {
          return; // awaiting the turn reports why
        }
        yield* started.handler.streamEvents();
      },
    };
  }

  /** Cancels the turn; the stored session stays as it was. */
  cancel(): void {
    void this.#handler.then((box) => box.handler.cancel(), () => {});
  }

  then<A = R, B = never>(onFulfilled?: ((value: R) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.#result.then(onFulfilled, onRejected);
  }
}

/**
 * Runs a workflow (typically the `FunctionCallingAgent`) turn by turn on stored sessions.
 * @example
 * const sessions = new Sessions(agent, await openSessionStore()); // SQLite file .stepflow/sessions.db
 * await sessions.run("alice", { input: "Hello! My name is Logan." });
 * // … hours later, in another process:
 * const { response } = await sessions.run("alice", { input: "What is my name?" });
 */
export class Sessions<TInput extends object, TResult> {
  constructor(
    readonly workflow: Workflow<TInput, TResult>,
    readonly store: SessionStore,
  ) {}

  /** Runs one turn on session `id` (created on first use) and saves it when the turn completes. */
  run(id: string, input: TInput, options: Omit<RunOptions, "ctx"> = {}): SessionTurn<TResult> {
    const loaded = this.#load(id);
    const started = loaded.then(({ ctx }) => ({ handler: this.workflow.run(input, { ...options, ctx }) }));
    const result = started.then(async ({ handler: running }) => {
      const value = await running;
      const { version, messageCount } = await loaded;
      const { snapshot, messages } = splitMessages(running.ctx.toJSON());
      if (messages.length < messageCount) {
        throw new ContextSerdeError(`Session "${id}": the turn left ${messages.length} messages in memory, fewer than the ${messageCount} stored. Sessions only append; start a new session to forget.`);
      }
      await this.store.save(id, { expectedVersion: version, snapshot: JSON.stringify(snapshot), append: messages.slice(messageCount).map((m) => JSON.stringify(m)) });
      return value;
    });
    return new SessionTurn(started, result);
  }

  /** The chat messages of a session, oldest first, with when each was saved. Empty for an unknown id. */
  async messages(id: string): Promise<SessionMessage[]> {
    const record = await this.store.load(id);
    return (record?.messages ?? []).map((stored) => {
      const message = parseMessage(id, stored.seq, stored.json);
      return { message: { role: message.role, content: message.content, ...(message.options ? { options: message.options } : {}) }, createdAt: stored.createdAt };
    });
  }

  /** Sessions, most recently updated first. */
  list(options?: { limit?: number }): Promise<SessionSummary[]> {
    return this.store.list(options);
  }

  /** Deletes a session; false if there was none. */
  delete(id: string): Promise<boolean> {
    return this.store.delete(id);
  }

  async #load(id: string): Promise<{ ctx: Context; version: number; messageCount: number }> {
    const record = await this.store.load(id);
    if (!record) {
      const ctx = new Context(this.workflow);
      if (this.store.journal) useJournal(ctx, this.store.journal);
      return { ctx, version: 0, messageCount: 0 };
    }
    let snapshot: unknown;
    try {
      snapshot = JSON.parse(record.snapshot);
    } catch (error) {
      throw new ContextSerdeError(`Session "${id}" (version ${record.version}) has a corrupt context snapshot: ${(error as Error).message}. The stored session was not changed.`);
    }
    const messages = record.messages.map((stored) => parseMessage(id, stored.seq, stored.json));
    let ctx: Context;
    try {
      ctx = Context.fromJSON(this.workflow, joinMessages(snapshot as ContextJSON, messages));
    } catch (error) {
      // The snapshot parses but does not restore (another version, workflow or codec): say which session.
      if (!(error instanceof ContextSerdeError)) throw error;
      throw new ContextSerdeError(`Session "${id}" (version ${record.version}): ${error.message} The stored session was not changed.`);
    }
    // The store's journal, shared by every process serving the session: a tool call started by
    // one is not started again by another.
    if (this.store.journal) useJournal(ctx, this.store.journal);
    return { ctx, version: record.version, messageCount: messages.length };
  }
}

type MemorySlot = { $codec: string; value: { messages?: Json[] } & Record<string, Json> };
const memorySlots = (json: ContextJSON) =>
  Object.values(json.store).filter((v): v is MemorySlot => typeof v === "object" && v !== null && !Array.isArray(v) && v.$codec === MEMORY_CODEC);

/** Takes the memory's messages out of a saved context: they are stored one row each. */
function splitMessages(json: ContextJSON): { snapshot: ContextJSON; messages: Json[] } {
  const slots = memorySlots(json);
  if (slots.length > 1) throw new ContextSerdeError("Sessions keep one LlamaIndex Memory per context; this context's store has several.");
  const slot = slots[0];
  const messages = slot?.value.messages ?? [];
  if (slot) slot.value.messages = [];
  return { snapshot: json, messages };
}

/** Puts stored messages back into the snapshot's memory. */
function joinMessages(snapshot: ContextJSON, messages: Json[]): ContextJSON {
  if (typeof snapshot !== "object" || snapshot === null || typeof snapshot.store !== "object" || snapshot.store === null) {
    return snapshot; // Context.fromJSON explains what is wrong with it
  }
  const slot = memorySlots(snapshot)[0];
  if (slot && (typeof slot.value !== "object" || slot.value === null || Array.isArray(slot.value))) {
    throw new ContextSerdeError("Cannot restore the context: its memory is not a saved LlamaIndex Memory.");
  }
  if (slot) slot.value.messages = messages;
  else if (messages.length > 0) throw new ContextSerdeError("Cannot restore the context: the session has messages but its context snapshot has no memory to put them in.");
  return snapshot;
}

// LlamaIndex's MessageType.
const MESSAGE_ROLES = new Set<unknown>(["user", "assistant", "system", "memory", "developer"]);

function parseMessage(id: string, seq: number, json: string): ChatMessage & Json {
  try {
    const message = JSON.parse(json) as ChatMessage & Json;
    const content: unknown = typeof message === "object" && message !== null ? message.content : undefined;
    const parts = Array.isArray(content) && content.every((part) => typeof part === "object" && part !== null && typeof (part as { type?: unknown }).type === "string");
    if (MESSAGE_ROLES.has(message?.role) && (typeof content === "string" || parts)) return message;
  } catch {
    // reported below
  }
  throw new ContextSerdeError(`Session "${id}" has a corrupt message #${seq}: it is not a saved chat message. The stored session was not changed.`);
}
