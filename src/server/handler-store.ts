/**
 * Handlers kept in a session store, so that a restarted server still has them: each handler
 * is the session `handler:<id>`, its snapshot the handler's record, saved context, lease and
 * event log: the newest events in the snapshot (its `tail`), the older ones in the messages
 * (appended, never rewritten), a tail's worth to a message. Finished handlers are read back
 * from here on request; the server holds only the runs it is running.
 */
import type { ContextJSON } from "../core/internal.ts";
import { StepflowError } from "../core/internal.ts";
import { SessionConflictError } from "../sessions/types.ts";
import type { SessionRecord, SessionStore, StoredMessage } from "../sessions/types.ts";
import type { Checkpoint, StreamedEvent } from "../client/types.ts";
import { LEASE_MS } from "./handler-lease.ts";
import type { HandlerLease } from "./handler-lease.ts";
import { eventJson, parseEventJson } from "./event-json.ts";
import { FINAL_STATUSES } from "./served-handler.ts";
import { HANDLER_SESSION_PREFIX } from "./session-kinds.ts";
import type { HandlerState, ServedHandler } from "./served-handler.ts";

/**
 * `/2`: the snapshot holds the newest events and counts them all; a message holds one event or a
 * JSON array of them. `/1`, a message per event and none in the snapshot, is still read (`/2`
 * reads its messages as they are), and its handlers are written as `/2` from their next save on.
 */
const FORMAT = "stepflow.handler/2";
const FORMAT_1 = "stepflow.handler/1";
/**
 * How much of a handler's event log (JSON characters) its snapshot holds before a save moves it
 * to a message. A save is then one statement where it was two (a run of a few events, saved
 * once, writes no message at all): on SQLite the second, inserting the rows of a trivial run's
 * five events, cost as much as the rest of the save. Each save rewrites the snapshot, so the
 * tail stays short: a long run's log still goes to the messages, a tail's worth at a time. And
 * each read of the record parses it: 8 KB cost the readers of 100-event runs 3% of the server's time.
 */
const TAIL_CHARS = 2048;
/** How many ended runs' logs `HandlerStore.ended` keeps, and how much of their JSON text at most. */
const RECENT_RUNS = 64;
const RECENT_CHARS = 1024 * 1024;

/** The snapshot of a handler's checkpoints session (`handler:<id>:checkpoints`), whose messages are the checkpoints. */
const CHECKPOINTS_SNAPSHOT = JSON.stringify({ format: "stepflow.checkpoints/1" });

/** A checkpoint with the context the server saved at it: what a fork starts from (none: the run's start, from its input). */
export interface StoredCheckpoint extends Checkpoint {
  readonly context?: ContextJSON;
}

/** A handler's checkpoints this server took, and how many of them are in the store. */
interface CheckpointLog {
  readonly list: StoredCheckpoint[];
  written: number;
  /** The checkpoints session's version; undefined until read (a run taken over has one already). */
  version: number | undefined;
}

/** A handler as read back from the store. */
export interface StoredHandler {
  readonly state: HandlerState;
  readonly context: ContextJSON | undefined;
  readonly eventCount: number;
  /** Which server runs it (unfinished handlers only). */
  readonly lease: HandlerLease | undefined;
  readonly version: number;
  /** The newest events, kept in the snapshot: a claim writes them back. */
  readonly tail: readonly StreamedEvent[];
}

/** The events a handler's last save left in its snapshot, as JSON text, and their length. */
interface Tail {
  readonly texts: readonly string[];
  readonly chars: number;
}
const NO_TAIL: Tail = { texts: [], chars: 0 };

interface Snapshot {
  readonly format: typeof FORMAT | typeof FORMAT_1;
  readonly state: HandlerState;
  /** How many events the handler has (format `/2`; in `/1`, the messages' count). */
  readonly events?: number;
  /** The newest of them, those not in the messages (format `/2`). */
  readonly tail?: StreamedEvent[];
  readonly context?: ContextJSON;
  readonly lease?: HandlerLease;
}

/**
 * A stored handler that cannot be read (its snapshot is not JSON, or not a handler's).
 * @example `err instanceof CorruptHandlerError && err.handlerId`
 */
export class CorruptHandlerError extends StepflowError {
  override name = "CorruptHandlerError";
  constructor(
    readonly handlerId: string,
    detail: string,
  ) {
    super(
      `The stored handler ${handlerId} cannot be read (${detail}); it was skipped. Delete the session "${handlerId}" from the store, or restore it from a backup.`,
    );
  }
}

/**
 * Another server took over a handler this one was running (this server's lease had ended).
 * @example `err instanceof HandlerTakenError && err.handlerId`
 */
export class HandlerTakenError extends StepflowError {
  override name = "HandlerTakenError";
  constructor(readonly handlerId: string) {
    super(`Handler ${handlerId} was taken over by another server sharing the store (this server's lease had ended); this server stopped its copy of the run.`);
  }
}

/** What a {@link HandlerStore} reports to its server. */
export interface HandlerStoreEvents {
  /** A save failed, or a stored handler could not be read (`CorruptHandlerError`). */
  readonly onError: (error: unknown, handlerId: string) => void;
  /** Another server took the handler over: this server must stop running it. */
  readonly onTaken: (handlerId: string) => void;
}

/**
 * What a {@link HandlerStore} keeps of one handler this server runs: one entry per handler (a
 * run-and-wait adds and drops it once), rather than one entry in each of six maps.
 */
interface Kept {
  /** The session's version this server wrote last (0: none). */
  version: number;
  /** How many of its events are in the store. */
  savedEvents: number;
  /** Those of them in the snapshot, not in a message. */
  tail: Tail;
  /** The last context saved. */
  context: ContextJSON | undefined;
  /** When its lease was last written (0: never). */
  leasedAt: number;
  checkpoints: CheckpointLog | undefined;
  /** Why its last save failed (its events then stay in memory); undefined once a save succeeds. */
  failure: { readonly error: unknown } | undefined;
  /** The length of the JSON text of the events this server wrote, from event `charsFrom` on. */
  chars: number;
  charsFrom: number;
}

/** One handler's saves: the last one asked for, and the one waiting to begin (which later saves join). */
interface SaveQueue {
  tail: Promise<SaveOutcome>;
  waiting: { release: boolean; done: Promise<SaveOutcome> } | undefined;
}

/**
 * How a save ended: `undefined` written, else why not (a `SessionConflictError` when another
 * server took the handler over).
 * @example const failed = await store.save(served); if (failed) console.error(failed.error);
 */
export type SaveOutcome = { readonly error: unknown } | undefined;
const SAVED: SaveOutcome = undefined;

/** Writes handlers to a session store, one save at a time per handler. */
export class HandlerStore {
  readonly sessions: SessionStore;
  readonly #events: HandlerStoreEvents;
  readonly #holder: string;
  /** What this store keeps of each handler this server runs, until `forget`. */
  readonly #kept = new Map<string, Kept>();
  /** Per handler, its saves in order: the last one, and the one queued that has not begun. */
  readonly #queues = new Map<string, SaveQueue>();
  /**
   * The event logs of the runs this server ended last, as saved (see `ended`): a reader of a
   * run that has just ended (most come then) gets them without decoding the log again.
   */
  readonly #recent = new Map<string, { readonly events: readonly StreamedEvent[]; readonly chars: number }>();
  #recentChars = 0;
  readonly #prefix: string;
  /** Resolves once the I/O ready now has been handled (see `#nextTurn`). */
  #turn: Promise<void> | undefined;

  /** `namespace` keeps the handlers of several servers sharing one store apart; `holder` names this server in leases. */
  constructor(sessions: SessionStore, events: HandlerStoreEvents, holder: string, namespace?: string) {
    this.sessions = sessions;
    this.#events = events;
    this.#holder = holder;
    this.#prefix = namespace === undefined ? HANDLER_SESSION_PREFIX : `${HANDLER_SESSION_PREFIX}${namespace}:`;
  }

  /** This server's name in leases. */
  get holder(): string {
    return this.#holder;
  }

  /**
   * Saves the handler's record and the events not saved yet; `context` replaces the saved
   * context (left out: the last one stays). An unfinished handler's lease is renewed, unless
   * `release` gives it up (the server is stopping). `soon`: the write may wait for the I/O
   * ready now (a run's first save, which a run that ends at once then shares with its last).
   * Resolves once written, with the error when it was not (which also goes to `onError`).
   */
  save(handler: ServedHandler, context?: ContextJSON, release = false, soon = false): Promise<SaveOutcome> {
    const id = handler.state.id;
    if (context) this.#keep(id).context = context;
    let queue = this.#queues.get(id);
    // A write that has not begun yet writes the handler as it is when it begins: this save joins it.
    const waiting = queue?.waiting;
    if (waiting) {
      waiting.release ||= release;
      return waiting.done;
    }
    const previous: Promise<SaveOutcome> = queue?.tail ?? Promise.resolve(SAVED);
    if (!queue) this.#queues.set(id, (queue = { tail: previous, waiting: undefined }));
    const q = queue;
    const entry: { release: boolean; done: Promise<SaveOutcome> } = { release, done: previous };
    q.waiting = entry;
    // `soon`: after the I/O ready now, so that a run ending meanwhile is saved once, as ended.
    const gate = soon ? previous.then(() => this.#nextTurn()) : previous;
    const next: Promise<SaveOutcome> = gate
      .then(() => {
        q.waiting = undefined;
        return this.#write(handler, entry.release);
      })
      .then(
        () => {
          const kept = this.#kept.get(id);
          if (kept) kept.failure = undefined;
          this.#dequeue(id, q, next);
          return SAVED;
        },
        (error: unknown) => {
          const failure = { error };
          this.#keep(id).failure = failure;
          this.#dequeue(id, q, next);
          if (error instanceof SessionConflictError) this.#events.onTaken(id);
          else this.#events.onError(error, id);
          return failure;
        },
      );
    entry.done = next;
    q.tail = next;
    return next;
  }

  /** Resolves after the I/O ready now has been handled: one `setImmediate` for all the saves that wait for it. */
  #nextTurn(): Promise<void> {
    return (this.#turn ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.#turn = undefined;
        resolve();
      }),
    ));
  }

  /** Drops a handler's queue once its last save is done. */
  #dequeue(id: string, queue: SaveQueue, done: Promise<SaveOutcome>): void {
    if (queue.tail === done && this.#queues.get(id) === queue) this.#queues.delete(id);
  }

  /** What this store keeps of handler `id`, made when there is none. */
  #keep(id: string): Kept {
    let kept = this.#kept.get(id);
    if (!kept) {
      kept = { version: 0, savedEvents: 0, tail: NO_TAIL, context: undefined, leasedAt: 0, checkpoints: undefined, failure: undefined, chars: 0, charsFrom: 0 };
      this.#kept.set(id, kept);
    }
    return kept;
  }

  /** Resolves when every save asked for so far is done. */
  async flush(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.tail));
  }

  async #write(handler: ServedHandler, release: boolean): Promise<void> {
    const id = handler.state.id;
    const kept = this.#keep(id);
    const events = handler.loadedEvents ?? [];
    const from = kept.savedEvents;
    // The tail as saved, then the events since: the snapshot is rewritten whole, the tail with it.
    let tail = kept.tail;
    let chars = 0;
    if (events.length > from) {
      const texts = tail.texts.slice();
      let tailChars = tail.chars;
      for (let i = from; i < events.length; i++) {
        const text = eventJson(events[i] as StreamedEvent);
        chars += text.length;
        texts.push(text);
        tailChars += text.length + 1;
      }
      tail = { texts, chars: tailChars };
    }
    const count = Math.max(from, events.length);
    const append = tail.chars > TAIL_CHARS ? [eventsMessage(tail.texts)] : [];
    if (append.length > 0) tail = NO_TAIL;
    const state = handler.savedState();
    const now = Date.now();
    const lease = release || FINAL_STATUSES.has(state.status) ? undefined : { holder: this.#holder, until: now + LEASE_MS };
    const context = kept.context;
    const snapshot: Snapshot = { format: FORMAT, state, events: count, ...(context ? { context } : {}), ...(lease ? { lease } : {}) };
    const version = await this.sessions.save(this.#prefix + id, {
      expectedVersion: kept.version,
      snapshot: withTail(JSON.stringify(snapshot), tail.texts),
      append,
    });
    kept.version = version;
    kept.savedEvents = count;
    kept.tail = tail;
    kept.chars += chars;
    if (lease) kept.leasedAt = now;
    if (kept.checkpoints) await this.#writeCheckpoints(id, kept.checkpoints);
  }

  /** Keeps a checkpoint of a handler this server runs; it is written to the store with the handler's next save. */
  checkpoint(id: string, checkpoint: StoredCheckpoint): void {
    const kept = this.#keep(id);
    (kept.checkpoints ??= { list: [], written: 0, version: undefined }).list.push(checkpoint);
  }

  async #writeCheckpoints(id: string, log: CheckpointLog): Promise<void> {
    if (log.written >= log.list.length) return;
    const session = `${this.#prefix}${id}:checkpoints`;
    try {
      log.version ??= (await this.sessions.load(session, { newest: 0 }))?.version ?? 0;
      const append = log.list.slice(log.written).map((c) => JSON.stringify(c));
      log.version = await this.sessions.save(session, { expectedVersion: log.version, snapshot: CHECKPOINTS_SNAPSHOT, append });
      log.written += append.length;
    } catch (error) {
      // The run is saved; only points to fork from are missing. Read the version again next time.
      log.version = undefined;
      this.#events.onError(error, id);
    }
  }

  /** A handler's checkpoints, oldest first: those in the store, then those of this server not written yet. */
  async checkpoints(id: string): Promise<StoredCheckpoint[]> {
    const record = await this.sessions.load(`${this.#prefix}${id}:checkpoints`);
    const stored = (record?.messages ?? []).map((m) => JSON.parse(m.json) as StoredCheckpoint);
    const log = this.#kept.get(id)?.checkpoints;
    if (!log) return stored;
    // A write may have landed between the read and now: each checkpoint once.
    const key = (c: Checkpoint) => `${c.seq}|${c.at}|${c.label}`;
    const seen = new Set(stored.map(key));
    return [...stored, ...log.list.filter((c) => !seen.has(key(c)))];
  }

  /** Whether the handler's last save succeeded (a failed save keeps its events in memory). */
  saved(id: string): boolean {
    return this.#kept.get(id)?.failure === undefined;
  }

  /** Why the handler's last save failed, or undefined when it succeeded. */
  saveFailure(id: string): { readonly error: unknown } | undefined {
    return this.#kept.get(id)?.failure;
  }

  /** Whether the handler's lease is due for renewal (a third of its length has passed). */
  leaseDue(id: string, now = Date.now()): boolean {
    return now - (this.#kept.get(id)?.leasedAt ?? 0) >= LEASE_MS / 3;
  }

  /**
   * Notes the log of a run this server ended and saved, as it leaves memory: kept for the last
   * few runs (a bounded count and size, so that memory stays flat), and used only while the
   * store's record has as many events (an ended run's log never changes).
   */
  ended(id: string, events: readonly StreamedEvent[] | undefined): void {
    if (!events) return;
    // Counted as they were written, when this server wrote them all.
    const kept = this.#kept.get(id);
    let chars = kept?.charsFrom === 0 && kept.savedEvents === events.length ? kept.chars : 0;
    if (chars === 0) for (const ev of events) chars += eventJson(ev).length;
    if (chars > RECENT_CHARS / 4) return;
    this.#recent.set(id, { events, chars });
    this.#recentChars += chars;
    for (const [oldest, entry] of this.#recent) {
      if (this.#recent.size <= RECENT_RUNS && this.#recentChars <= RECENT_CHARS) break;
      this.#recent.delete(oldest);
      this.#recentChars -= entry.chars;
    }
  }

  /** Drops what this store remembers of a handler it no longer runs (it is in the store). */
  forget(id: string): void {
    this.#kept.delete(id);
  }

  /**
   * Takes over an unfinished handler read with `load`/`loadAll`: writes this server's lease if
   * the snapshot is still the one read. False when another server was faster.
   */
  async claim(stored: StoredHandler): Promise<boolean> {
    const id = stored.state.id;
    const now = Date.now();
    const lease: HandlerLease = { holder: this.#holder, until: now + LEASE_MS };
    const snapshot: Snapshot = {
      format: FORMAT,
      state: stored.state,
      events: stored.eventCount,
      ...(stored.context ? { context: stored.context } : {}),
      lease,
    };
    const tail = stored.tail.map(eventJson);
    try {
      const version = await this.sessions.save(this.#prefix + id, {
        expectedVersion: stored.version,
        snapshot: withTail(JSON.stringify(snapshot), tail),
        append: [],
      });
      const kept = this.#keep(id);
      kept.version = version;
      kept.savedEvents = stored.eventCount;
      kept.tail = { texts: tail, chars: tail.reduce((n, t) => n + t.length + 1, 0) };
      kept.charsFrom = stored.eventCount;
      if (stored.context) kept.context = stored.context;
      kept.leasedAt = now;
    } catch (error) {
      if (error instanceof SessionConflictError) return false;
      throw error;
    }
    return true;
  }

  /** Every unfinished stored handler, oldest first; one that cannot be read is reported to `onError` and skipped. */
  async loadUnfinished(): Promise<StoredHandler[]> {
    const handlers: StoredHandler[] = [];
    for (const id of await this.#ids()) {
      let stored: StoredHandler | undefined;
      try {
        stored = await this.load(id);
      } catch (error) {
        if (!(error instanceof CorruptHandlerError)) throw error;
        this.#events.onError(error, id);
        continue;
      }
      if (stored && !FINAL_STATUSES.has(stored.state.status)) handlers.push(stored);
    }
    return handlers.reverse();
  }

  /**
   * Stored handlers that `keep` accepts, most recently updated first, up to `limit`; `skip`: ids
   * not to read (the server has them). Unreadable ones are left out (and reported).
   */
  async list(keep: (state: HandlerState) => boolean, limit: number, skip: ReadonlySet<string>): Promise<StoredHandler[]> {
    const found: StoredHandler[] = [];
    for (const id of await this.#ids()) {
      if (found.length >= limit) break;
      if (skip.has(id)) continue;
      try {
        const stored = await this.load(id);
        if (stored && keep(stored.state)) found.push(stored);
      } catch (error) {
        if (!(error instanceof CorruptHandlerError)) throw error;
        this.#events.onError(error, id);
      }
    }
    return found;
  }

  /** The handler ids in the store, most recently updated first. */
  async #ids(): Promise<string[]> {
    const summaries = await this.sessions.list({ limit: 1_000_000, prefix: this.#prefix });
    const ids: string[] = [];
    for (const s of summaries) {
      // Checked again: a store of one's own may not know `prefix` (it came after `limit`).
      if (!s.id.startsWith(this.#prefix)) continue;
      const id = s.id.slice(this.#prefix.length);
      if (!id.includes(":")) ids.push(id);
    }
    return ids;
  }

  /**
   * One stored handler; `CorruptHandlerError` when it cannot be read. Its events come too with
   * `withEvents` (read with the record: one query, where `loadEvents` after it is a second).
   */
  async load(id: string, withEvents = false): Promise<(StoredHandler & { readonly events?: StreamedEvent[] }) | undefined> {
    const recent = withEvents ? this.#recent.get(id) : undefined;
    const record = await this.sessions.load(this.#prefix + id, withEvents && !recent ? {} : { newest: 0 });
    if (!record) return undefined;
    const stored = storedHandler(id, record);
    if (!withEvents) return stored;
    // The snapshot says how many events the run has: the log this server saved, if it has them all.
    if (recent && recent.events.length === stored.eventCount) return { ...stored, events: recent.events.slice() };
    return { ...stored, events: recent ? await this.loadEvents(id) : eventsOf(stored, record.messages) };
  }

  /** The stored event log of a handler. */
  async loadEvents(id: string): Promise<StreamedEvent[]> {
    const record = await this.sessions.load(this.#prefix + id);
    return record ? eventsOf(storedHandler(id, record), record.messages) : [];
  }

  /** The last context saved for a handler: remembered for a run of this server, else read from the store. */
  async context(id: string): Promise<ContextJSON | undefined> {
    return this.#kept.get(id)?.context ?? (await this.load(id))?.context;
  }
}

/** A handler as its session holds it; `CorruptHandlerError` when it is not one. */
function storedHandler(id: string, record: SessionRecord): StoredHandler {
  let snapshot: Partial<Snapshot>;
  try {
    snapshot = JSON.parse(record.snapshot) as Partial<Snapshot>;
  } catch (error) {
    throw new CorruptHandlerError(id, `its snapshot is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (snapshot?.format !== FORMAT && snapshot?.format !== FORMAT_1) {
    const format = snapshot?.format as unknown;
    // A later stepflow's run: another server sharing the store was upgraded first.
    const newer = Number(/^stepflow\.handler\/(\d+)$/.exec(String(format))?.[1]) > 2 ? ", written by a later stepflow: upgrade this server" : "";
    throw new CorruptHandlerError(id, `its snapshot's format is ${JSON.stringify(format)}, not "${FORMAT}"${newer}`);
  }
  const state = snapshot.state;
  if (typeof state !== "object" || state === null || state.id !== id || typeof state.workflow !== "string" || typeof state.status !== "string")
    throw new CorruptHandlerError(id, "its snapshot has no handler record with this id, a workflow and a status");
  const tail = snapshot.format === FORMAT_1 ? [] : (snapshot.tail ?? []);
  const eventCount = snapshot.format === FORMAT_1 ? record.messageCount : snapshot.events;
  if (!Array.isArray(tail) || !Number.isSafeInteger(eventCount) || (eventCount as number) < tail.length)
    throw new CorruptHandlerError(id, "its snapshot does not say which events it has");
  return { state, context: snapshot.context, eventCount: eventCount as number, lease: snapshot.lease, version: record.version, tail };
}

/** The snapshot's JSON text with the tail's events (JSON texts, kept from when they were recorded) as its `tail`. */
function withTail(snapshot: string, tail: readonly string[]): string {
  return tail.length === 0 ? snapshot : `${snapshot.slice(0, -1)},"tail":[${tail.join(",")}]}`;
}

/**
 * Events as one message: one event is its own JSON, several a JSON array of them (an event is an
 * object, so a reader tells them apart).
 */
function eventsMessage(texts: readonly string[]): string {
  return texts.length === 1 ? (texts[0] as string) : `[${texts.join(",")}]`;
}

/**
 * A handler's events, in order: those of its messages (each one event, or a JSON array of them),
 * then its snapshot's tail. `CorruptHandlerError` if they are not as many as the snapshot says.
 */
function eventsOf(stored: StoredHandler, messages: readonly StoredMessage[]): StreamedEvent[] {
  const id = stored.state.id;
  const events: StreamedEvent[] = [];
  for (const { json } of messages) {
    if (json.charCodeAt(0) !== 0x5b /* [ */) {
      events.push(parseEventJson(json));
      continue;
    }
    let batch: unknown;
    try {
      batch = JSON.parse(json);
    } catch (error) {
      throw new CorruptHandlerError(id, `a message of its events is not JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    for (const ev of batch as StreamedEvent[]) events.push(ev);
  }
  for (const ev of stored.tail) events.push(ev);
  if (events.length !== stored.eventCount) throw new CorruptHandlerError(id, `it records ${stored.eventCount} events, and holds ${events.length}`);
  return events;
}
