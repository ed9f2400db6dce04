/**
 * Persisted conversations: load a session's context, run one turn, save it — only if the
 * turn completed, and only if nobody else saved the session meanwhile (versioned saves).
 *
 * A turn costs its new messages, not the history: the workflow's `SessionMemory` takes the
 * messages a turn added out of the saved context (they are appended one row each, the snapshot
 * is saved without them), and says how many of the newest messages the next turn reads: only
 * those are loaded and put back.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import { Context, ContextSerdeError, useJournal } from "../core/internal.ts";
import type { ContextJSON, Event, WorkflowHandler, Json, RunOptions, Workflow } from "../core/internal.ts";
import { checkSessionMemory, sessionMemoryOf } from "./session-memory.ts";
import type { MessageWindow, SessionMemory } from "./session-memory.ts";
import { SessionConflictError, SessionStoreError, checkSessionId } from "./types.ts";
import type { DeleteOptions, ListOptions, SessionRecord, SessionStore, SessionSummary, StoredMessage } from "./types.ts";
import { WindowCache, deepFreeze } from "./window-cache.ts";
import { messageJson } from "./message-json.ts";
import { reservedIdProblem } from "./reserved-ids.ts";
import type { CachedWindow, WindowCacheOptions } from "./window-cache.ts";

/** A stored chat message with the time it was saved. */
export interface SessionMessage {
  /** Its number in the session: the first message is 1. */
  readonly seq: number;
  readonly message: ChatMessage;
  readonly createdAt: Date;
}

/** One page of a session's history: `Sessions.messagePage`. */
export interface SessionMessagePage {
  /** The page's messages, oldest first. */
  readonly messages: SessionMessage[];
  /** This page's number: 1 is the oldest messages. */
  readonly page: number;
  readonly pageSize: number;
  /** How many pages the history has (0 for an unknown or empty session): the last page holds the newest messages. */
  readonly pageCount: number;
  /** How many messages the session has stored in all. */
  readonly total: number;
  /**
   * The session's version when the page was read (0 for an unknown session): give it to
   * {@link Sessions.delete} as `expectedVersion` to delete the session only as it was read.
   */
  readonly version: number;
}

/** Options of {@link Sessions}. */
export interface SessionsOptions {
  /** How the workflow's conversation is stored; default: the workflow's own `sessionMemory`, else the whole context is saved each turn. */
  readonly memory?: SessionMemory;
  /**
   * How many sessions' windows this `Sessions` keeps decoded between turns (least recently used
   * out first), so that the next turn on one reads only the messages stored since. Default
   * 1,000 sessions and 64 MiB of message JSON; `{ sessions: 0 }` keeps none.
   */
  readonly windowCache?: WindowCacheOptions;
}

const DEFAULT_PAGE_SIZE = 50;

/** The window of a new session: one for all of them (a window is never changed in place). */
const NO_MESSAGES: MessageWindow = Object.freeze({ messages: Object.freeze([]), firstSeq: 1, total: 0 });

/** Marks a promise's rejection as handled: one function for every turn, not two new ones each. */
const ignore = (): void => {};

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
    this.#handler.catch(ignore);
    this.#result.catch(ignore);
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

  /** Sends `event` to the turn's run (a human's answer, say), once it has started. @example `turn.sendEvent(new ToolApprovalEvent({ approvalId, approved: true }))` */
  sendEvent(event: Event): void {
    void this.#handler.then(
      (box) => box.handler.ctx.sendEvent(event),
      () => {},
    );
  }

  /** Cancels the turn; the stored session stays as it was. */
  cancel(): void {
    void this.#handler.then(
      (box) => box.handler.cancel(),
      () => {},
    );
  }

  then<A = R, B = never>(
    onFulfilled?: ((value: R) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
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
  /** How the workflow's conversation is stored and how much of it a turn loads. */
  readonly memory: SessionMemory;
  readonly #cache: WindowCache;

  constructor(
    readonly workflow: Workflow<TInput, TResult>,
    readonly store: SessionStore,
    options: SessionsOptions = {},
  ) {
    if (options.memory !== undefined) checkSessionMemory(options.memory);
    this.memory = options.memory ?? sessionMemoryOf(workflow);
    this.#cache = new WindowCache(options.windowCache);
  }

  /**
   * Runs one turn on session `id` (created on first use) and saves it when the turn completes.
   * A new session's id may not start with `handler:` or `idempotency:`, a stepflow server's own
   * records in a store it may share: `SessionStoreError` says so, and nothing is saved.
   * If another turn of the same session (in this process or another) saved first, the turn
   * fails with `SessionConflictError` and saves nothing: load and run it again if it should.
   */
  run(id: string, input: TInput, options: Omit<RunOptions, "ctx"> = {}): SessionTurn<TResult> {
    // Two promises and the state of one async call live through the turn, not a chain of five:
    // with a thousand turns waiting on their model, whatever each keeps is copied by every scavenge.
    // (#finish awaits the start itself: a `then` calling it kept a closure and a third promise, resolved with #finish's.)
    const started = this.#start(id, input, options);
    return new SessionTurn(started, this.#finish(id, started));
  }

  /** Loads the session (in its slice of time, as steps run) and starts the workflow's run on it. */
  async #start(id: string, input: TInput, options: Omit<RunOptions, "ctx">): Promise<StartedTurn<TResult>> {
    // Many turns started at once load in slices of time (the workflow's), as their steps run: not all in one go.
    const slices = this.workflow.timeSlices;
    if (slices.sliceSpent()) await slices.nextSlice();
    const slice = slices.currentSlice();
    let loaded: Loaded;
    try {
      loaded = await this.#read(id);
    } finally {
      slices.workDone(slice);
    }
    // A new session only: a conversation stored under such an id before this check goes on.
    const reserved = loaded.version === 0 ? reservedIdProblem(id) : undefined;
    if (reserved !== undefined) throw new SessionStoreError(reserved);
    return { handler: this.workflow.run(input, { ...options, ctx: loaded.ctx }), loaded };
  }

  /** Awaits the run, then saves the session: only if the turn completed, and nobody saved it meanwhile. */
  async #finish(id: string, started: Promise<StartedTurn<TResult>>): Promise<TResult> {
    // The save is a call of its own: what it needs is not kept in this frame while the run goes on.
    const turn = await started;
    const value = await turn.handler;
    await this.#save(id, turn);
    return value;
  }

  async #save(id: string, { handler: running, loaded }: StartedTurn<TResult>): Promise<void> {
    // Saving is work of its own: with many turns ending at once, it waits its slice as steps do.
    const slices = this.workflow.timeSlices;
    if (slices.sliceSpent()) await slices.nextSlice();
    const slice = slices.currentSlice();
    const { version, window, kept } = loaded;
    let saved: { readonly snapshot: ContextJSON; readonly append: readonly Json[] };
    try {
      saved = this.memory.saveContext ? this.memory.saveContext(running.ctx, window) : this.memory.save(running.ctx.toJSON(), window);
    } catch (error) {
      if (!(error instanceof ContextSerdeError)) throw error;
      throw new ContextSerdeError(`Session "${id}": ${error.message} The stored session was not changed.`, { cause: error });
    }
    const append = saved.append.map(messageJson);
    let savedVersion: number;
    try {
      savedVersion = await this.store.save(id, { expectedVersion: version, snapshot: JSON.stringify(saved.snapshot), append });
    } catch (error) {
      this.#cache.delete(id); // a conflict, or a save that may or may not have been applied
      throw error;
    }
    if (kept) this.#remember(id, savedVersion, window, kept, append);
    slices.workDone(slice);
  }

  /**
   * The chat messages of a session, oldest first, with when each was saved. Empty for an
   * unknown id. Reads the whole history: for a long session, read it page by page with
   * {@link messagePage}.
   */
  async messages(id: string): Promise<SessionMessage[]> {
    const record = await this.store.load(id);
    return (record?.messages ?? []).map((stored) => sessionMessage(id, stored));
  }

  /**
   * One page of a session's history: page 1 holds messages 1 to `pageSize` (the oldest), the
   * last page (`pageCount`) the newest. A page past the end is empty. `pageSize` defaults to 50.
   * @example
   * const { messages, pageCount } = await sessions.messagePage("alice", { page: 1, pageSize: 20 });
   */
  async messagePage(id: string, options: { readonly page: number; readonly pageSize?: number }): Promise<SessionMessagePage> {
    checkSessionId(id);
    const { page } = options;
    const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isSafeInteger(page) || page < 1)
      throw new SessionStoreError(`page must be a whole number ≥ 1 (page 1 is the oldest messages); got ${String(page)}.`);
    if (!Number.isSafeInteger(pageSize) || pageSize < 1)
      throw new SessionStoreError(`pageSize must be a whole number ≥ 1 (default ${DEFAULT_PAGE_SIZE}); got ${String(pageSize)}.`);
    const record = await this.store.load(id, { newest: 0 });
    const total = record?.messageCount ?? 0;
    const from = (page - 1) * pageSize + 1;
    const stored = record && from <= total ? await this.store.readMessages(id, { from, to: Math.min(total, from + pageSize - 1) }) : [];
    return {
      messages: stored.map((m) => sessionMessage(id, m)),
      page,
      pageSize,
      pageCount: Math.ceil(total / pageSize),
      total,
      version: record?.version ?? 0,
    };
  }

  /**
   * Every message of a session, oldest first, read `pageSize` (default 50) at a time.
   * @example
   * for await (const { seq, message } of sessions.history("alice")) console.log(seq, message.role, message.content);
   */
  async *history(id: string, options: { readonly pageSize?: number } = {}): AsyncGenerator<SessionMessage> {
    for (let page = 1; ; page++) {
      const batch = await this.messagePage(id, { page, pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE });
      yield* batch.messages;
      if (page >= batch.pageCount) return;
    }
  }

  /** Sessions, most recently updated first (`limit`, default 100; `prefix`: only ids starting with it). */
  list(options?: ListOptions): Promise<SessionSummary[]> {
    return this.store.list(options);
  }

  /**
   * Deletes a session; false if there was none. With `expectedVersion` (the `version` of a
   * {@link messagePage} or a {@link list} entry), only the session as it was read: if another
   * process saved it since, nothing is deleted and `SessionConflictError` says so, with the
   * version found. Without it, the session goes whatever its version, as `stepflow sessions
   * delete` does: asking to delete a session is not a judgement of what it held.
   * @example
   * const read = await sessions.messagePage("alice", { page: 1 });
   * if (read.total > 0 && isDone(read.messages)) await sessions.delete("alice", { expectedVersion: read.version });
   */
  async delete(id: string, options: DeleteOptions = {}): Promise<boolean> {
    this.#cache.delete(id);
    if (await this.store.delete(id, options)) return true;
    if (options.expectedVersion === undefined) return false;
    // The store says only "not deleted": none, or at another version, which the caller must hear about.
    const found = await this.store.load(id, { newest: 0 });
    if (found === undefined) return false;
    throw new SessionConflictError(id, options.expectedVersion, found.version, "delete");
  }

  async #read(id: string): Promise<Loaded> {
    const cached = this.#cache.get(id);
    // With a window cached, the newest message alone confirms the store still holds it.
    let record = await this.store.load(id, { newest: cached ? 1 : this.memory.initialWindow });
    if (!record) {
      this.#cache.delete(id);
      const ctx = new Context(this.workflow);
      if (this.store.journal) useJournal(ctx, this.store.journal);
      return { ctx, version: 0, window: NO_MESSAGES, kept: undefined };
    }
    let continued = cached && (await this.#continue(id, record, cached));
    if (!continued) {
      if (cached) {
        this.#cache.delete(id);
        record = await this.store.load(id, { newest: this.memory.initialWindow });
        if (!record) return this.#read(id); // deleted meanwhile: a new session
      }
      const window = await this.#window(id, record.version, record.messages, record.messageCount);
      const keep = this.#cache.enabled;
      continued = {
        window,
        kept: keep
          ? { createdAt: record.createdAt.getTime(), bytes: jsonBytes(window.messages), cutAt: window.messages.length, last: record.messages.at(-1)?.json }
          : undefined,
      };
    }
    const { window, kept } = continued;

    let snapshot: unknown;
    try {
      snapshot = JSON.parse(record.snapshot);
    } catch (error) {
      throw new ContextSerdeError(
        `Session "${id}" (version ${record.version}) has a corrupt context snapshot: ${(error as Error).message}. The stored session was not changed.`,
      );
    }
    let ctx: Context;
    try {
      ctx = Context.fromJSON(this.workflow, this.memory.restore(snapshot as ContextJSON, window));
    } catch (error) {
      // The snapshot parses but does not restore (another version, workflow or codec): say which session.
      if (!(error instanceof ContextSerdeError)) throw error;
      throw new ContextSerdeError(`Session "${id}" (version ${record.version}): ${error.message} The stored session was not changed.`, { cause: error });
    }
    // The store's journal, shared by every process serving the session: a tool call started by
    // one is not started again by another.
    if (this.store.journal) useJournal(ctx, this.store.journal);
    return { ctx, version: record.version, window, kept };
  }

  /**
   * The cached window brought up to date with `record` (loaded with its newest message): the
   * messages stored since, by this process or another, are read and appended. `undefined` when
   * the store no longer holds the cached window (the session was deleted and started again):
   * the turn then loads as if nothing were cached.
   */
  async #continue(id: string, record: SessionRecord, cached: CachedWindow): Promise<{ window: MessageWindow; kept: Kept | undefined } | undefined> {
    if (record.createdAt.getTime() !== cached.createdAt || record.version < cached.version || record.messageCount < cached.total) return undefined;
    let grown: MessageWindow = cached;
    let kept: Kept = cached;
    if (record.messageCount === cached.total) {
      if (record.messages.at(-1)?.json !== cached.last) return undefined;
    } else {
      // The messages since, with the newest cached one again: it must be the one cached.
      const from = Math.max(1, cached.total);
      const since = await this.store.readMessages(id, { from, to: record.messageCount });
      if (since.length !== record.messageCount - from + 1) throw new SessionConflictError(id, record.version, undefined);
      if (cached.total > 0 && since.shift()?.json !== cached.last) return undefined;
      const added = since.map((stored) => deepFreeze(parseMessage(id, stored.seq, stored.json)));
      grown = { messages: cached.messages.concat(added), firstSeq: cached.firstSeq, total: record.messageCount };
      kept = { ...kept, bytes: cached.bytes + since.reduce((sum, m) => sum + m.json.length, 0), last: since.at(-1)?.json };
    }
    // Turns only add to a window: once it has doubled, it is cut back to what a turn needs (a load's window).
    if (grown.messages.length <= 2 * Math.max(kept.cutAt, this.memory.initialWindow)) return { window: grown, kept };
    const window = await this.#cut(id, record.version, grown);
    return { window, kept: { ...kept, bytes: jsonBytes(window.messages), cutAt: window.messages.length } };
  }

  /** Keeps the window of a turn just saved (as version `version`) for the next turn on the session. */
  #remember(id: string, version: number, window: MessageWindow, kept: Kept, append: readonly string[]): void {
    const added = append.map((json, i) => deepFreeze(parseMessage(id, window.total + i + 1, json)));
    this.#cache.set(id, {
      ...kept,
      version,
      total: window.total + append.length,
      messages: added.length === 0 ? window.messages : window.messages.concat(added),
      firstSeq: window.firstSeq,
      last: append.at(-1) ?? kept.last,
      bytes: kept.bytes + append.reduce((sum, json) => sum + json.length, 0),
    });
  }

  /** A window grown by turns, cut back to the newest messages the workflow needs (as a load would read them). */
  async #cut(id: string, version: number, grown: MessageWindow): Promise<MessageWindow> {
    const keep = Math.min(this.memory.initialWindow, grown.messages.length);
    return this.#window(id, version, grown.messages.slice(grown.messages.length - keep), grown.total, grown);
  }

  /**
   * The newest messages the next turn needs: those loaded, and older ones while the workflow
   * asks for more, taken from `held` (messages already parsed) while it has them, else read.
   */
  async #window(id: string, version: number, newest: readonly StoredMessage[] | readonly Json[], total: number, held?: MessageWindow): Promise<MessageWindow> {
    let messages: Json[] = held ? [...(newest as Json[])] : (newest as StoredMessage[]).map((stored) => this.#parse(id, stored));
    let firstSeq = total - messages.length + 1;
    for (;;) {
      const window = { messages, firstSeq, total };
      if (firstSeq <= 1) return window;
      const more = this.memory.more(window);
      if (!Number.isSafeInteger(more) || more < 0)
        throw new SessionStoreError(`SessionMemory.more must return a whole number ≥ 0 (how many older messages to load); got ${String(more)}.`);
      if (more === 0) return window;
      const from = Math.max(1, firstSeq - more);
      if (held && from >= held.firstSeq) {
        messages = [...held.messages.slice(from - held.firstSeq, firstSeq - held.firstSeq), ...messages];
        firstSeq = from;
        continue;
      }
      // Messages are only appended: those before the loaded ones belong to the version loaded.
      const older = await this.store.readMessages(id, { from, to: firstSeq - 1 });
      // Fewer only if the session was deleted (and maybe started again) since it was loaded.
      if (older.length !== firstSeq - from) throw new SessionConflictError(id, version, undefined);
      messages = [...older.map((stored) => this.#parse(id, stored)), ...messages];
      firstSeq = from;
    }
  }

  /** A stored message, parsed (and frozen when windows are kept: a kept message must not change in place). */
  #parse(id: string, stored: StoredMessage): Json {
    const message = parseMessage(id, stored.seq, stored.json);
    return this.#cache.enabled ? deepFreeze(message) : message;
  }
}

/** What a turn loaded, with what the window cache keeps of it (`undefined` for a new session, whose creation time the store sets). */
interface Loaded {
  readonly ctx: Context;
  readonly version: number;
  readonly window: MessageWindow;
  readonly kept: Kept | undefined;
}

/** A turn whose run has started: `SessionTurn` streams and cancels the handler, and the save needs what was loaded. */
interface StartedTurn<R> {
  readonly handler: WorkflowHandler<R>;
  readonly loaded: Loaded;
}

/** The fields of a cached window that a turn carries from its load to its save. */
type Kept = Pick<CachedWindow, "createdAt" | "bytes" | "cutAt" | "last">;

/** The size of messages' JSON text, as the window cache counts it. */
const jsonBytes = (messages: readonly Json[]) => messages.reduce<number>((sum, message) => sum + JSON.stringify(message).length, 0);

function sessionMessage(id: string, stored: StoredMessage): SessionMessage {
  const message = parseMessage(id, stored.seq, stored.json);
  return {
    seq: stored.seq,
    message: { role: message.role, content: message.content, ...(message.options ? { options: message.options } : {}) },
    createdAt: stored.createdAt,
  };
}

// LlamaIndex's MessageType.
const MESSAGE_ROLES = new Set<unknown>(["user", "assistant", "system", "memory", "developer"]);

function parseMessage(id: string, seq: number, json: string): ChatMessage & Json {
  try {
    const message = JSON.parse(json) as ChatMessage & Json;
    const content: unknown = typeof message === "object" && message !== null ? message.content : undefined;
    const parts =
      Array.isArray(content) && content.every((part) => typeof part === "object" && part !== null && typeof (part as { type?: unknown }).type === "string");
    if (MESSAGE_ROLES.has(message?.role) && (typeof content === "string" || parts)) return message;
  } catch {
    // reported below
  }
  throw new ContextSerdeError(`Session "${id}" has a corrupt message #${seq}: it is not a saved chat message. The stored session was not changed.`);
}
