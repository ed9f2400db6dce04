/**
 * Sessions in a SQLite file (the default: `.stepflow/sessions.db`), through `@libsql/client`
 * (prebuilt binaries, no compiler needed) in a worker thread (`SqliteThread`), as libsql runs
 * a file's statements synchronously. Several processes may share the file: WAL mode, a busy
 * timeout, and every save is one atomic batch whose UPDATE checks the version.
 */
import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { InStatement, Row } from "@libsql/client";
import { StepflowError } from "../core/internal.ts";
import { SqliteJournal } from "../journal/sqlite-journal.ts";
import { SqliteThread } from "./sqlite-thread.ts";
import { LoadBatch } from "./load-batch.ts";
import {
  SessionConflictError,
  SessionDriverMissingError,
  SessionStoreError,
  checkRange,
  checkSave,
  checkSessionId,
  checkStoredMessages,
  deleteVersion,
  listLimit,
  listPrefix,
  loadedRange,
} from "./types.ts";
import type {
  DeleteOptions,
  ListOptions,
  LoadOptions,
  MessageRange,
  SessionRecord,
  SessionSave,
  SessionStore,
  SessionSummary,
  StoredMessage,
} from "./types.ts";

/** How long a statement waits for another process's write lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS stepflow_sessions (
     id TEXT PRIMARY KEY,
     version INTEGER NOT NULL,
     snapshot TEXT NOT NULL,
     message_count INTEGER NOT NULL,
     save_token TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS stepflow_session_messages (
     session_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     message TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (session_id, seq))`,
  `CREATE INDEX IF NOT EXISTS stepflow_sessions_updated ON stepflow_sessions (updated_at DESC)`,
];

/**
 * A session's messages as one row holding JSON arrays (any text, separators included, comes back
 * exactly): reading 1,000 rows one by one cost more than the rest of a turn. The seqs come too,
 * to catch a row that went missing. Callers add conditions on `seq`.
 */
const SELECT_MESSAGES =
  "SELECT json_group_array(message ORDER BY seq) AS messages, json_group_array(created_at ORDER BY seq) AS times, json_group_array(seq ORDER BY seq) AS seqs FROM stepflow_session_messages WHERE session_id = ?";

/**
 * The rows of the sessions whose ids are in the JSON array `?2`, each with its newest `?1`
 * messages as a JSON array of [seq, message, created_at], by the (session_id, seq) key.
 */
const LOAD_MANY = `SELECT s.id, s.version, s.snapshot, s.message_count, s.created_at, s.updated_at,
    (SELECT json_group_array(json_array(seq, message, created_at) ORDER BY seq) FROM stepflow_session_messages
     WHERE session_id = s.id AND seq > s.message_count - ?1) AS messages
  FROM stepflow_sessions s WHERE s.id IN (SELECT value FROM json_each(?2))`;

/**
 * Appends the messages of a save (args: how many, the time, the messages as one JSON array, the
 * session, the save's token) if the save's own UPDATE or INSERT went through.
 */
const APPEND_JSON = `INSERT INTO stepflow_session_messages (session_id, seq, message, created_at)
  SELECT s.id, s.message_count - ? + m.key + 1, m.value, ? FROM stepflow_sessions s, json_each(?) m
  WHERE s.id = ? AND s.save_token = ?`;

/**
 * Up to this many messages a save appends as arguments of their own, not as one JSON array: a turn
 * adds a few, and writing them as JSON (on the application's thread) and reading them back (on the
 * worker) cost more than the rest of the save. Above it, one JSON array keeps the statement short.
 */
const MAX_APPEND_ARGS = 64;
const appendStatements: string[] = [];

/** `APPEND_JSON` with `count` messages as arguments (args: how many, the time, the messages, the session, the token). */
function appendRows(count: number): string {
  return (appendStatements[count] ??= `INSERT INTO stepflow_session_messages (session_id, seq, message, created_at)
  SELECT s.id, s.message_count - ? + m.column1, m.column2, ? FROM stepflow_sessions s,
    (VALUES ${Array.from({ length: count }, (_, i) => `(${i + 1}, ?)`).join(", ")}) m
  WHERE s.id = ? AND s.save_token = ?`);
}

/**
 * @example
 * const store = await SqliteSessionStore.open(".stepflow/sessions.db");
 */
export class SqliteSessionStore implements SessionStore {
  readonly description: string;
  readonly #db: SqliteThread;
  readonly #loads = new LoadBatch<Row>(async (ids, newest) => {
    const { rows } = await this.#db.execute({ sql: LOAD_MANY, args: [newest, JSON.stringify(ids)] });
    return new Map(rows.map((row) => [String(row.id), row]));
  });
  /** Tool calls of this store's sessions, in the same file. */
  readonly journal: SqliteJournal;

  private constructor(db: SqliteThread, path: string) {
    this.#db = db;
    this.description = `SQLite ${path}`;
    this.journal = new SqliteJournal(db, this.description);
  }

  /** Opens (and creates, if needed) the database file at `path`. */
  static async open(path: string): Promise<SqliteSessionStore> {
    // The client pools connections, and a PRAGMA holds only on the connection it ran on. So the busy
    // timeout is the client's option, which it gives every connection it opens (a PRAGMA left the
    // others failing at once with SQLITE_BUSY while another process wrote), and the pool has one
    // connection, so that synchronous=NORMAL holds for every write: libsql runs each call
    // synchronously, so more connections would run nothing in parallel anyway.
    let db: SqliteThread | undefined;
    try {
      db = await SqliteThread.open({ url: `file:${path}`, timeout: BUSY_TIMEOUT_MS, concurrency: 1 }, `SQLite ${path}`);
      await db.execute("PRAGMA journal_mode = WAL");
      // WAL with synchronous=NORMAL: no fsync per commit; a crash of the process loses nothing, a power cut at most the last turns.
      await db.execute("PRAGMA synchronous = NORMAL");
      await db.batch(SCHEMA, "write");
    } catch (error) {
      await db?.close();
      if (error instanceof SessionDriverMissingError) throw error; // it says which package to install
      throw new SessionStoreError(`Cannot open the session store SQLite ${path}: ${whyNotOpened(path, error)}`, { cause: error });
    }
    return new SqliteSessionStore(db, path);
  }

  async load(id: string, options: LoadOptions = {}): Promise<SessionRecord | undefined> {
    checkSessionId(id);
    loadedRange(0, options); // a bad `newest` fails before any query
    try {
      // The row and its messages are read by one statement, so of one version; the loads of many
      // sessions at once share statements (see LoadBatch): a turn is a load and a save, and each
      // statement costs the worker as much as a small read.
      const row = await this.#loads.load(id, options.newest ?? Number.MAX_SAFE_INTEGER);
      if (!row) return undefined;
      const messageCount = Number(row.message_count);
      const stored = (JSON.parse(String(row.messages)) as [number, string, number][]).map(([seq, json, createdAt]) => ({
        seq,
        json,
        createdAt: new Date(createdAt),
      }));
      checkStoredMessages(
        id,
        loadedRange(messageCount, options),
        stored.map((m) => m.seq),
      );
      return {
        id,
        version: Number(row.version),
        snapshot: String(row.snapshot),
        messages: stored,
        messageCount,
        createdAt: new Date(Number(row.created_at)),
        updatedAt: new Date(Number(row.updated_at)),
      };
    } catch (error) {
      throw this.#failed(error);
    }
  }

  async readMessages(id: string, range: MessageRange): Promise<StoredMessage[]> {
    checkSessionId(id);
    checkRange(range);
    try {
      const [sessions, messages] = await this.#db.batch(
        [
          { sql: "SELECT message_count FROM stepflow_sessions WHERE id = ?", args: [id] },
          { sql: `${SELECT_MESSAGES} AND seq BETWEEN ? AND ?`, args: [id, range.from, range.to] },
        ],
        "read",
      );
      const row = sessions?.rows[0];
      if (!row) return [];
      const stored = joinedMessages(messages?.rows[0]);
      checkStoredMessages(
        id,
        { from: range.from, to: Math.min(range.to, Number(row.message_count)) },
        stored.map((m) => m.seq),
      );
      return stored;
    } catch (error) {
      throw this.#failed(error);
    }
  }

  async save(id: string, save: SessionSave): Promise<number> {
    checkSave(id, save);
    try {
      const now = Date.now();
      const token = randomUUID();
      const count = save.append.length;
      // One batch, one transaction, no await in between, so two stores in one process cannot
      // interleave. The messages are appended only if this save's token is the one now stored.
      const change: InStatement =
        save.expectedVersion === 0
          ? {
              sql: "INSERT INTO stepflow_sessions (id, version, snapshot, message_count, save_token, created_at, updated_at) VALUES (?, 1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
              args: [id, save.snapshot, count, token, now, now],
            }
          : {
              sql: "UPDATE stepflow_sessions SET version = version + 1, snapshot = ?, message_count = message_count + ?, save_token = ?, updated_at = ? WHERE id = ? AND version = ?",
              args: [save.snapshot, count, token, now, id, save.expectedVersion],
            };
      const append: InStatement =
        count <= MAX_APPEND_ARGS
          ? { sql: appendRows(count), args: [count, now, ...save.append, id, token] }
          : { sql: APPEND_JSON, args: [count, now, JSON.stringify(save.append), id, token] };
      const [changed] = await this.#db.batch(count > 0 ? [change, append] : [change], "write");
      if (changed?.rowsAffected !== 1) {
        const found = await this.#db.execute({ sql: "SELECT version FROM stepflow_sessions WHERE id = ?", args: [id] });
        const version = found.rows[0]?.version;
        throw new SessionConflictError(id, save.expectedVersion, version === undefined ? undefined : Number(version));
      }
      return save.expectedVersion + 1;
    } catch (error) {
      throw this.#failed(error);
    }
  }

  async list(options: ListOptions = {}): Promise<SessionSummary[]> {
    const limit = listLimit(options);
    const prefix = listPrefix(options);
    try {
      // substr counts characters (code points), as [...prefix] does; LIKE would ignore ASCII case.
      const result = await this.#db.execute(
        prefix === undefined
          ? { sql: "SELECT id, version, message_count, created_at, updated_at FROM stepflow_sessions ORDER BY updated_at DESC, id LIMIT ?", args: [limit] }
          : {
              sql: "SELECT id, version, message_count, created_at, updated_at FROM stepflow_sessions WHERE substr(id, 1, ?) = ? ORDER BY updated_at DESC, id LIMIT ?",
              args: [[...prefix].length, prefix, limit],
            },
      );
      return result.rows.map((row) => ({
        id: String(row.id),
        version: Number(row.version),
        messageCount: Number(row.message_count),
        createdAt: new Date(Number(row.created_at)),
        updatedAt: new Date(Number(row.updated_at)),
      }));
    } catch (error) {
      throw this.#failed(error);
    }
  }

  async delete(id: string, options: DeleteOptions = {}): Promise<boolean> {
    checkSessionId(id);
    const version = deleteVersion(options);
    try {
      // One write transaction: with a version, the messages go only if the row is at it, then the row.
      const [, deleted] = await this.#db.batch(
        version === undefined
          ? [
              { sql: "DELETE FROM stepflow_session_messages WHERE session_id = ?", args: [id] },
              { sql: "DELETE FROM stepflow_sessions WHERE id = ?", args: [id] },
            ]
          : [
              {
                sql: "DELETE FROM stepflow_session_messages WHERE session_id = ? AND EXISTS (SELECT 1 FROM stepflow_sessions WHERE id = ? AND version = ?)",
                args: [id, id, version],
              },
              { sql: "DELETE FROM stepflow_sessions WHERE id = ? AND version = ?", args: [id, version] },
            ],
        "write",
      );
      return (deleted?.rowsAffected ?? 0) > 0;
    } catch (error) {
      throw this.#failed(error);
    }
  }

  /**
   * Copies the write-ahead log into the database file, then closes the connection and ends its
   * worker thread. libsql's close leaves the checkpoint to a later finalizer that a process
   * exiting right away never runs: every turn stayed in sessions.db-wal, and a backup of
   * sessions.db alone was empty.
   */
  async close(): Promise<void> {
    try {
      // TRUNCATE also empties the log; with another process reading, SQLite does what it can and says "busy", which is fine.
      await this.#db.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // A read-only or vanished file: nothing this process wrote is lost, it stays in the log.
    } finally {
      await this.#db.close();
    }
  }

  /** A failure of the database itself, named as the store's (not, say, the model server's). */
  #failed(error: unknown): unknown {
    if (error instanceof StepflowError) return error;
    return new SessionStoreError(
      `The session store ${this.description} failed: ${(error as Error).message}. Check that the file and its folder are writable and the disk is not full.`,
      { cause: error },
    );
  }
}

/** Why SQLite could not open `path`, in words that say what to change: libsql only says "14". */
function whyNotOpened(path: string, error: unknown): string {
  const kind = (p: string) => {
    try {
      return statSync(p).isDirectory() ? "folder" : "file";
    } catch {
      return undefined;
    }
  };
  if (kind(path) === "folder") return `it is a folder. Name a file in it, such as ${join(path, "sessions.db")}.`;
  for (let parent = dirname(path); ; parent = dirname(parent)) {
    const found = kind(parent);
    if (found === "file") return `${parent} is a file, not a folder. Choose another path.`;
    if (found === "folder" || parent === dirname(parent)) break;
  }
  const detail = (error as Error).message;
  if (/\b14\b|CANTOPEN|READONLY|readonly/i.test(detail)) {
    return `SQLite cannot create or write the file (${detail}). Check that you may write to ${dirname(path)} (SQLite also creates ${basename(path)}-wal and ${basename(path)}-shm there), or choose another path.`;
  }
  return detail;
}

function joinedMessages(row: Row | undefined): StoredMessage[] {
  if (!row) return [];
  const messages = JSON.parse(String(row.messages)) as string[];
  const times = JSON.parse(String(row.times)) as number[];
  const seqs = JSON.parse(String(row.seqs)) as number[];
  return messages.map((json, i) => ({ seq: Number(seqs[i]), json, createdAt: new Date(Number(times[i])) }));
}
