/**
 * Handlers kept in a session store, so that a restarted server still has them: each handler
 * is the session `handler:<id>`, its snapshot the handler's record and saved context, its
 * messages the event log (appended, never rewritten).
 */
import type { ContextJSON } from "../core/internal.ts";
import type { SessionStore } from "../sessions/types.ts";
import type { StreamedEvent } from "../client/types.ts";
import type { HandlerState, ServedHandler } from "./served-handler.ts";

const FORMAT = "stepflow.handler/1";

/** A handler as read back from the store. */
export interface StoredHandler {
  readonly state: HandlerState;
  readonly context: ContextJSON | undefined;
  readonly eventCount: number;
}

interface Snapshot {
  readonly format: typeof FORMAT;
  readonly state: HandlerState;
  readonly context?: ContextJSON;
}

/** Writes handlers to a session store, one save at a time per handler. */
export class HandlerStore {
  readonly sessions: SessionStore;
  readonly #onError: (error: unknown, handlerId: string) => void;
  readonly #versions = new Map<string, number>();
  readonly #savedEvents = new Map<string, number>();
  readonly #contexts = new Map<string, ContextJSON>();
  readonly #queues = new Map<string, Promise<void>>();
  readonly #prefix: string;
  #failures = 0;

  /** `namespace` keeps the handlers of several servers sharing one store apart. */
  constructor(sessions: SessionStore, onError: (error: unknown, handlerId: string) => void, namespace?: string) {
    this.sessions = sessions;
    this.#onError = onError;
    this.#prefix = namespace === undefined ? "handler:" : `handler:${namespace}:`;
  }

  /**
   * Saves the handler's record and the events not saved yet; `context` replaces the saved
   * context (left out: the last one stays). Resolves once written; a failure goes to `onError`.
   */
  save(handler: ServedHandler, context?: ContextJSON): Promise<void> {
    const id = handler.state.id;
    if (context) this.#contexts.set(id, context);
    const previous = this.#queues.get(id) ?? Promise.resolve();
    const next = previous
      .then(() => this.#write(handler))
      .catch((error: unknown) => {
        this.#failures++;
        this.#onError(error, id);
      });
    this.#queues.set(id, next);
    void next.then(() => {
      if (this.#queues.get(id) === next) this.#queues.delete(id);
    });
    return next;
  }

  /** Resolves when every save asked for so far is done. */
  async flush(): Promise<void> {
    await Promise.all([...this.#queues.values()]);
  }

  async #write(handler: ServedHandler): Promise<void> {
    const id = handler.state.id;
    const events = handler.loadedEvents ?? [];
    const from = this.#savedEvents.get(id) ?? 0;
    const append = events.slice(from).map((ev) => JSON.stringify(ev));
    const context = this.#contexts.get(id);
    const snapshot: Snapshot = { format: FORMAT, state: handler.savedState(), ...(context ? { context } : {}) };
    const version = await this.sessions.save(this.#prefix + id, { expectedVersion: this.#versions.get(id) ?? 0, snapshot: JSON.stringify(snapshot), append });
    this.#versions.set(id, version);
    this.#savedEvents.set(id, from + append.length);
  }

  /** Whether every event recorded so far is saved (a failed save keeps them in memory). */
  get holdsEvents(): boolean {
    return this.#failures === 0;
  }

  /** Every stored handler, newest first (events not loaded: see `loadEvents`). */
  async loadAll(): Promise<StoredHandler[]> {
    const summaries = (await this.sessions.list({ limit: 1_000_000 })).filter(
      (s) => s.id.startsWith(this.#prefix) && !s.id.slice(this.#prefix.length).includes(":"),
    );
    const handlers: StoredHandler[] = [];
    for (const summary of summaries) {
      const record = await this.sessions.load(summary.id, { newest: 0 });
      if (!record) continue;
      const snapshot = JSON.parse(record.snapshot) as Partial<Snapshot>;
      if (snapshot.format !== FORMAT || !snapshot.state) continue;
      const id = snapshot.state.id;
      this.#versions.set(id, record.version);
      this.#savedEvents.set(id, record.messageCount);
      if (snapshot.context) this.#contexts.set(id, snapshot.context);
      handlers.push({ state: snapshot.state, context: snapshot.context, eventCount: record.messageCount });
    }
    return handlers;
  }

  /** The stored event log of a handler. */
  async loadEvents(id: string): Promise<StreamedEvent[]> {
    const record = await this.sessions.load(this.#prefix + id);
    return (record?.messages ?? []).map((m) => JSON.parse(m.json) as StreamedEvent);
  }

  /** The last context saved for a handler, if any. */
  context(id: string): ContextJSON | undefined {
    return this.#contexts.get(id);
  }
}
