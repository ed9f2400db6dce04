/**
 * The contract every session store keeps (in-memory, SQLite, PostgreSQL). A session is a
 * small context snapshot plus an append-only list of chat messages; a save names the version
 * it read, so two processes continuing one session cannot both win.
 */
import { StepflowError } from "../errors.ts";
import { ContextSerdeError } from "../serialize.ts";
import { quoteInput } from "../user-text.ts";
import type { Journal } from "../journal/types.ts";

/** One stored chat message (its JSON), numbered from 1 in the order it was appended. */
export interface StoredMessage {
  readonly seq: number;
  readonly json: string;
  readonly createdAt: Date;
}

/** A session as loaded: the snapshot and every message, consistent with `version`. */
export interface SessionRecord {
  readonly id: string;
  /** 1 after the first save, +1 per save. */
  readonly version: number;
  readonly snapshot: string;
  readonly messages: StoredMessage[];
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
  load(id: string): Promise<SessionRecord | undefined>;
  /** Saves atomically and returns the new version; `SessionConflictError` if another save came first. */
  save(id: string, save: SessionSave): Promise<number>;
  /** Most recently updated first. `limit`: a whole number ≥ 1, default 100. */
  list(options?: { limit?: number }): Promise<SessionSummary[]>;
  /** Removes the session and its messages; false if there was none. */
  delete(id: string): Promise<boolean>;
  close(): Promise<void>;
  /** Where the tool calls of this store's sessions are recorded, shared by every process using the store (see `Sessions`). */
  readonly journal?: Journal;
}

/** A save lost the race to another process's save of the same session. @example `err instanceof SessionConflictError && err.found` */
export class SessionConflictError extends StepflowError {
  override name = "SessionConflictError";
  constructor(
    readonly sessionId: string,
    readonly expected: number,
    /** The version found, or `undefined` if the session no longer exists. */
    readonly found: number | undefined,
  ) {
    super(
      found === undefined
        ? `Session "${sessionId}" was deleted by another process (expected version ${expected}). Start it again.`
        : `Session "${sessionId}" was changed by another process (expected version ${expected}, found ${found}). Load it again and retry the turn.`,
    );
  }
}

/** A stored session's messages do not match its record (a row deleted by hand, a partial restore). @example `err instanceof CorruptSessionError && err.sessionId` */
export class CorruptSessionError extends ContextSerdeError { override name = "CorruptSessionError"; constructor(readonly sessionId: string, detail: string) { super(`Session "${sessionId}" is corrupt: ${detail}. The stored session was not changed; restore it from a backup, or delete it.`); } }

/**
 * Checks that the messages a store read are exactly 1..`messageCount`, as sessions only append:
 * a missing row would otherwise leave, say, a tool result without its call, silently.
 * @example checkStoredMessages("alice", 3, [1, 2, 3]);
 */
export function checkStoredMessages(id: string, messageCount: number, seqs: readonly number[]): void {
  const gap = seqs.findIndex((seq, i) => seq !== i + 1);
  if (gap >= 0) throw new CorruptSessionError(id, `message #${gap + 1} is missing (${seqs.length} of ${messageCount} messages are stored)`);
  if (seqs.length !== messageCount) {
    throw new CorruptSessionError(id, seqs.length < messageCount ? `message #${seqs.length + 1} is missing (${seqs.length} of ${messageCount} messages are stored)` : `it has ${seqs.length} messages stored but records ${messageCount}`);
  }
}

/** A store could not be opened or used. @example `new SessionStoreError('Unknown session store "x". …')` */
export class SessionStoreError extends StepflowError {
  override name = "SessionStoreError";
}

/** The store's database driver (`@libsql/client`, `pg`) is not installed. @example `err instanceof SessionDriverMissingError && err.packageName // "pg"` */
export class SessionDriverMissingError extends SessionStoreError { override name = "SessionDriverMissingError"; constructor(message: string, readonly packageName: string) { super(message); } }

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
export function listLimit(options: { limit?: number }): number {
  const limit = options.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new SessionStoreError(`limit must be a whole number ≥ 1 (default 100); got ${typeof limit === "string" ? JSON.stringify(limit) : String(limit)}.`);
  }
  return limit;
}

/** Throws `SessionStoreError` unless a save is well formed (shared by every store). */
export function checkSave(id: string, save: SessionSave): void {
  checkSessionId(id);
  if (!Number.isInteger(save.expectedVersion) || save.expectedVersion < 0) {
    throw new SessionStoreError(`expectedVersion must be a whole number ≥ 0 (0 for a new session); got ${String(save.expectedVersion)}.`);
  }
}
