/**
 * The contract every session store keeps (in-memory, SQLite, PostgreSQL). A session is a
 * small context snapshot plus an append-only list of chat messages; a save names the version
 * it read, so two processes continuing one session cannot both win.
 */
import { StepflowError, ContextSerdeError, quoteInput } from "../core/internal.ts";
import type { Journal } from "../core/internal.ts";

/** One stored chat message (its JSON), numbered from 1 in the order it was appended. */
export interface StoredMessage {
  readonly seq: number;
  readonly json: string;
  readonly createdAt: Date;
}

/**
 * A session as loaded: the snapshot and its newest messages (every message unless
 * `SessionStore.load` was given `newest`), consistent with `version`.
 */
export interface SessionRecord {
  readonly id: string;
  /** 1 after the first save, +1 per save. */
  readonly version: number;
  readonly snapshot: string;
  /** The newest stored messages asked for, oldest first: seqs `messageCount - messages.length + 1` to `messageCount`. */
  readonly messages: StoredMessage[];
  /** How many messages the session has stored in all. */
  readonly messageCount: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A session in a listing. */
export interface SessionSummary {
  readonly id: string;
  readonly version: number;
  readonly messageCount: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Options of `SessionStore.list`. */
export interface ListOptions {
  /** How many sessions at most: a whole number ≥ 1, default 100. */
  readonly limit?: number;
  /**
   * Only the sessions whose id starts with this (`"handler:"`): a store that shares its sessions
   * with a server's runs and keys lists a kind without reading the others.
   */
  readonly prefix?: string;
}

/** Options of `SessionStore.delete`. */
export interface DeleteOptions {
  /**
   * Delete only if the session is still at this version (a whole number ≥ 1, as loaded): a
   * process that read a session and judged it done with does not delete it if another process
   * saved it since. Left out: deleted whatever its version.
   */
  readonly expectedVersion?: number;
}

/** Options of `SessionStore.load`. */
export interface LoadOptions {
  /** Load only this many of the newest messages (a whole number ≥ 0); default: all of them. */
  readonly newest?: number;
}

/** Seqs `from` to `to`, both included (`from` ≥ 1; empty if `to` < `from`). */
export interface MessageRange {
  readonly from: number;
  readonly to: number;
}

/** One save: replaces the snapshot and appends messages, if the session is still at `expectedVersion` (0: new). */
export interface SessionSave {
  readonly expectedVersion: number;
  readonly snapshot: string;
  readonly append: readonly string[];
}

/**
 * Storage for sessions. Implementations: `MemorySessionStore`, `SqliteSessionStore`,
 * `PostgresSessionStore`; `openSessionStore(url)` picks one.
 * @example
 * const store = await openSessionStore("sqlite:.stepflow/sessions.db");
 * const version = await store.save("alice", { expectedVersion: 0, snapshot: "{}", append: ['{"role":"user","content":"Hi"}'] }); // 1
 */
export interface SessionStore {
  /** Where the sessions are, for messages (never includes a password). */
  readonly description: string;
  /**
   * The session's snapshot and its newest `options.newest` messages (default: every message),
   * read together, so they belong to one version. `undefined` for an unknown id.
   */
  load(id: string, options?: LoadOptions): Promise<SessionRecord | undefined>;
  /**
   * The stored messages with seq `range.from` to `range.to` (both included), oldest first: for
   * reading a long history page by page, and for loading messages older than a `load`'s.
   * Messages are only ever appended, so a range up to the `messageCount` of a loaded version
   * belongs to that version. Empty for an unknown id; `CorruptSessionError` if one is missing.
   */
  readMessages(id: string, range: MessageRange): Promise<StoredMessage[]>;
  /** Saves atomically and returns the new version; `SessionConflictError` if another save came first. */
  save(id: string, save: SessionSave): Promise<number>;
  /** Most recently updated first, up to `limit` (default 100), only ids starting with `prefix` if given. */
  list(options?: ListOptions): Promise<SessionSummary[]>;
  /**
   * Removes the session and its messages; false if there was none, or (with
   * `options.expectedVersion`) if it is at another version, when nothing is removed.
   */
  delete(id: string, options?: DeleteOptions): Promise<boolean>;
  close(): Promise<void>;
  /** Where the tool calls of this store's sessions are recorded, shared by every process using the store (see `Sessions`). */
  readonly journal?: Journal;
}

/**
 * A save (or a delete at a version) lost the race to another process's save of the same
 * session: nothing was saved, or deleted.
 * @example `err instanceof SessionConflictError && err.found`
 */
export class SessionConflictError extends StepflowError {
  override name = "SessionConflictError";
  constructor(
    readonly sessionId: string,
    readonly expected: number,
    /** The version found, or `undefined` if the session no longer exists. */
    readonly found: number | undefined,
    /** What was refused: a turn's save, or `Sessions.delete` with `expectedVersion`. */
    readonly refused: "save" | "delete" = "save",
  ) {
    super(
      refused === "delete"
        ? `Session "${sessionId}" was not deleted: another process saved it since it was read (expected version ${expected}, found ${found ?? "none"}). Read it again, and delete it with expectedVersion: ${found ?? expected} if it should still go.`
        : found === undefined
          ? `Session "${sessionId}" was deleted by another process (expected version ${expected}). Start it again.`
          : `Session "${sessionId}" was changed by another process (expected version ${expected}, found ${found}). Load it again and retry the turn.`,
    );
  }
}

/** A stored session's messages do not match its record (a row deleted by hand, a partial restore). @example `err instanceof CorruptSessionError && err.sessionId` */
export class CorruptSessionError extends ContextSerdeError {
  override name = "CorruptSessionError";
  constructor(
    readonly sessionId: string,
    detail: string,
  ) {
    super(`Session "${sessionId}" is corrupt: ${detail}. The stored session was not changed; restore it from a backup, or delete it.`);
  }
}

/**
 * Checks that the messages a store read have exactly the seqs `from`..`to`, as sessions only
 * append: a missing row would otherwise leave, say, a tool result without its call, silently.
 * @example checkStoredMessages("alice", { from: 1, to: 3 }, [1, 2, 3]);
 */
export function checkStoredMessages(id: string, range: MessageRange, seqs: readonly number[]): void {
  const expected = Math.max(0, range.to - range.from + 1);
  const gap = seqs.findIndex((seq, i) => seq !== range.from + i);
  if (gap >= 0 || seqs.length < expected) {
    const missing = gap >= 0 ? range.from + gap : range.from + seqs.length;
    const of =
      range.from === 1
        ? `${seqs.length} of ${expected} messages are stored`
        : `${seqs.length} of the ${expected} messages #${range.from} to #${range.to} are stored`;
    throw new CorruptSessionError(id, `message #${missing} is missing (${of})`);
  }
  if (seqs.length !== expected) {
    throw new CorruptSessionError(
      id,
      range.from === 1
        ? `it has ${seqs.length} messages stored but records ${expected}`
        : `it has ${seqs.length} messages stored as #${range.from} to #${range.to}`,
    );
  }
}

/**
 * The seqs a `load` with `options` reads from a session of `messageCount` messages; `SessionStoreError` for a bad `newest`.
 * @example loadedRange(10, { newest: 4 }); // { from: 7, to: 10 }
 */
export function loadedRange(messageCount: number, options: LoadOptions): MessageRange {
  const newest = options.newest ?? messageCount;
  if (!Number.isSafeInteger(newest) || newest < 0) {
    throw new SessionStoreError(`newest must be a whole number ≥ 0 (the number of newest messages to load); got ${String(newest)}.`);
  }
  return { from: Math.max(1, messageCount - newest + 1), to: messageCount };
}

/**
 * Throws `SessionStoreError` unless `range` is whole numbers with `from` ≥ 1 (shared by every store).
 * @example checkRange({ from: 1, to: 50 });
 */
export function checkRange(range: MessageRange): void {
  if (!Number.isSafeInteger(range?.from) || !Number.isSafeInteger(range?.to) || range.from < 1) {
    throw new SessionStoreError(`A message range is { from, to }: whole numbers, from ≥ 1 (the first message is #1); got ${JSON.stringify(range)}.`);
  }
}

/** A store could not be opened or used. @example `new SessionStoreError('Unknown session store "x". …')` */
export class SessionStoreError extends StepflowError {
  override name = "SessionStoreError";
}

/** The store's database driver (`@libsql/client`, `pg`) is not installed. @example `err instanceof SessionDriverMissingError && err.packageName // "pg"` */
export class SessionDriverMissingError extends SessionStoreError {
  override name = "SessionDriverMissingError";
  constructor(
    message: string,
    readonly packageName: string,
  ) {
    super(message);
  }
}

/**
 * Throws `SessionStoreError` unless `id` is a usable session id (1–200 characters, no control
 * characters, well-formed Unicode).
 * @example checkSessionId("alice"); // ok
 */
export function checkSessionId(id: string): void {
  // eslint-disable-next-line no-control-regex -- control characters are what a session id must not contain
  if (typeof id !== "string" || id.length === 0 || id.length > 200 || /[\u0000-\u001f\u007f-\u009f]/.test(id)) {
    throw new SessionStoreError(`A session id must be 1 to 200 characters without control characters; got ${quoteInput(id)}.`);
  }
  // A lone surrogate becomes U+FFFD in the database's UTF-8, so "a\ud800" and "a\ud801" would be one session.
  if (/\p{Surrogate}/u.test(id)) {
    throw new SessionStoreError(`A session id must be well-formed Unicode (no lone surrogates); got ${quoteInput(id)}.`);
  }
}

/**
 * The `limit` of `SessionStore.list()`: 100 if not given; `SessionStoreError` unless it is a whole number ≥ 1 (shared by every store).
 * @example listLimit({ limit: 10 }); // 10
 */
export function listLimit(options: ListOptions): number {
  const limit = options.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new SessionStoreError(`limit must be a whole number ≥ 1 (default 100); got ${typeof limit === "string" ? JSON.stringify(limit) : String(limit)}.`);
  }
  return limit;
}

/**
 * The `prefix` of `SessionStore.list()`: `undefined` for every session; `SessionStoreError`
 * unless it is a string (shared by every store).
 * @example listPrefix({ prefix: "handler:" }); // "handler:"
 */
export function listPrefix(options: ListOptions): string | undefined {
  const prefix: unknown = options.prefix;
  if (prefix === undefined || prefix === "") return undefined;
  if (typeof prefix !== "string") throw new SessionStoreError(`prefix must be a string (the start of the session ids to list); got ${typeof prefix}.`);
  return prefix;
}

/**
 * The `expectedVersion` of `SessionStore.delete()`: `undefined` to delete whatever the version;
 * `SessionStoreError` unless it is a whole number ≥ 1 (shared by every store).
 * @example deleteVersion({ expectedVersion: 3 }); // 3
 */
export function deleteVersion(options: DeleteOptions): number | undefined {
  const version: unknown = options.expectedVersion;
  if (version === undefined) return undefined;
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 1)
    throw new SessionStoreError(`expectedVersion must be a whole number ≥ 1 (the version of the session as loaded); got ${String(version)}.`);
  return version;
}

/** Throws `SessionStoreError` unless a save is well formed (shared by every store). */
export function checkSave(id: string, save: SessionSave): void {
  checkSessionId(id);
  if (!Number.isInteger(save.expectedVersion) || save.expectedVersion < 0) {
    throw new SessionStoreError(`expectedVersion must be a whole number ≥ 0 (0 for a new session); got ${String(save.expectedVersion)}.`);
  }
}

/**
 * The worker thread of a SQLite store stopped before answering (it crashed, ran out of memory, or
 * was terminated): every call waiting for it fails with this error, and so does every later call.
 * @example
 * if (error instanceof SqliteThreadError) console.error(error.message, error.exitCode);
 */
export class SqliteThreadError extends SessionStoreError {
  override name = "SqliteThreadError";
  constructor(
    readonly description: string,
    /** The worker's exit code, if it exited rather than failed to start. */
    readonly exitCode: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      `The worker thread of the session store ${description} stopped${exitCode === undefined ? "" : ` (exit code ${exitCode})`}${options?.cause instanceof Error ? `: ${options.cause.message}` : ""}. Calls waiting for it failed, and a write among them may or may not have been applied. Open the store again to continue.`,
      options,
    );
  }
}
