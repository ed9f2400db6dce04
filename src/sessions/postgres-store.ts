/**
 * Sessions in PostgreSQL (`pg`), for many processes serving one set of conversations. A save
 * is one transaction: the UPDATE that checks the version takes the row lock, so a concurrent
 * save of the same session waits, then finds the version changed and fails with
 * `SessionConflictError`.
 *
 * A turn's load and save are named (prepared) statements: each connection parses and plans them
 * once, not per turn, which cut the server's CPU per turn to a third. The loads of many
 * sessions at once share statements (`LoadBatch`), and so do their saves (`#sendSaves`).
 */
import type { Pool, PoolClient } from "pg";
import { StepflowError, maskCredentials } from "../core/internal.ts";
import { PostgresJournal } from "../journal/postgres-journal.ts";
import { loadDriver } from "./load-driver.ts";
import { LoadBatch } from "./load-batch.ts";
import {
  SessionConflictError,
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

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS stepflow_sessions (
    id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL);
  CREATE TABLE IF NOT EXISTS stepflow_session_messages (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    message TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (session_id, seq));
  CREATE INDEX IF NOT EXISTS stepflow_sessions_updated ON stepflow_sessions (updated_at DESC);`;

/** A session's row as a load reads it. */
interface SessionRow {
  readonly id: string;
  readonly version: number;
  readonly snapshot: string;
  readonly message_count: number;
  readonly created_at: Date;
  readonly updated_at: Date;
  /** JSON: [seq, message, created_at] of each message loaded, or null for none. */
  readonly messages: string | null;
}

/** A save waiting to be sent; resolves to whether it was applied (false: the version had changed). */
interface QueuedSave {
  readonly id: string;
  readonly save: SessionSave;
  readonly resolve: (saved: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/** Saves sent as one statement at most. */
const SAVES_PER_STATEMENT = 100;

const SCHEMA_LOCK = 748_213_901; // serialises CREATE … IF NOT EXISTS of processes starting together

/**
 * @example
 * const store = await PostgresSessionStore.open(process.env.DATABASE_URL);
 */
export class PostgresSessionStore implements SessionStore {
  readonly description: string;
  readonly #pool: Pool;
  readonly #loads = new LoadBatch<SessionRow>((ids, newest) => this.#readSessions(ids, newest));
  /** Saves asked for in this turn of the event loop, not yet sent (see `#sendSaves`). */
  #saves: QueuedSave[] = [];
  /** Tool calls of this store's sessions, in the same database. */
  readonly journal: PostgresJournal;

  private constructor(pool: Pool, description: string) {
    this.#pool = pool;
    this.journal = new PostgresJournal(pool, description);
    this.description = description;
  }

  /** Connects to `url` (postgres://user:password@host:port/db) and creates the tables if needed. */
  static async open(url: string): Promise<PostgresSessionStore> {
    const description = `PostgreSQL ${maskCredentials(url)}`;
    const { default: pg } = await loadDriver("pg", "PostgreSQL");
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on("error", () => {}); // an idle client's lost connection: the next query reports it
    // A checked-out client's lost connection (a restart between two statements): the next query reports it, never the process.
    pool.on("connect", (client) => client.on("error", () => {}));
    try {
      await transaction(pool, async (client) => {
        await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
        await client.query(SCHEMA);
      });
    } catch (error) {
      await pool.end();
      throw new SessionStoreError(
        `Cannot open the session store ${description}: ${(error as Error).message}. Is PostgreSQL running, and is DATABASE_URL right?`,
      );
    }
    return new PostgresSessionStore(pool, description);
  }

  async load(id: string, options: LoadOptions = {}): Promise<SessionRecord | undefined> {
    checkSessionId(id);
    loadedRange(0, options); // a bad `newest` fails before any query
    try {
      const row = await this.#loads.load(id, options.newest ?? Number.MAX_SAFE_INTEGER);
      if (!row) return undefined;
      const messageCount = Number(row.message_count);
      const range = loadedRange(messageCount, options);
      const rows = (row.messages === null ? [] : JSON.parse(String(row.messages))) as [number, string, string][];
      checkStoredMessages(
        id,
        range,
        rows.map(([seq]) => seq),
      );
      return {
        id,
        version: Number(row.version),
        snapshot: String(row.snapshot),
        messages: rows.map(([seq, json, createdAt]) => ({ seq, json, createdAt: new Date(createdAt) })),
        messageCount,
        createdAt: new Date(row.created_at),
        updatedAt: new Date(row.updated_at),
      };
    } catch (error) {
      throw this.#failed(error);
    }
  }

  /**
   * The rows of sessions `ids` with their newest messages, by one statement (so each of one
   * version), the messages as a JSON array of [seq, message, created_at]: the loads of many
   * sessions at once share it (see `LoadBatch`).
   */
  async #readSessions(ids: readonly string[], newest: number): Promise<ReadonlyMap<string, SessionRow>> {
    const result = await this.#pool.query<SessionRow>({
      name: "stepflow_session_load_many",
      text: `SELECT s.id, s.version, s.snapshot, s.message_count, s.created_at, s.updated_at, m.rows::text AS messages
         FROM stepflow_sessions s
         LEFT JOIN LATERAL (
           SELECT json_agg(json_build_array(seq, message, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) ORDER BY seq) AS rows
           FROM stepflow_session_messages WHERE session_id = s.id AND seq > s.message_count - $2::bigint) m ON true
         WHERE s.id = ANY($1::text[])`,
      values: [ids, newest],
    });
    return new Map(result.rows.map((row) => [String(row.id), row]));
  }

  async readMessages(id: string, range: MessageRange): Promise<StoredMessage[]> {
    checkSessionId(id);
    checkRange(range);
    try {
      const session = await this.#pool.query("SELECT message_count FROM stepflow_sessions WHERE id = $1", [id]);
      const row = session.rows[0];
      return row ? await this.#messages(id, { from: range.from, to: Math.min(range.to, Number(row.message_count)) }) : [];
    } catch (error) {
      throw this.#failed(error);
    }
  }

  /** Messages `range` of a session whose count is known to cover it; `CorruptSessionError` if one is missing. */
  async #messages(id: string, range: MessageRange): Promise<StoredMessage[]> {
    if (range.to < range.from) return [];
    const messages = await this.#pool.query(
      "SELECT seq, message, created_at FROM stepflow_session_messages WHERE session_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq",
      [id, range.from, range.to],
    );
    checkStoredMessages(
      id,
      range,
      messages.rows.map((m) => Number(m.seq)),
    );
    return messages.rows.map((m) => ({ seq: Number(m.seq), json: String(m.message), createdAt: new Date(m.created_at) }));
  }

  async save(id: string, save: SessionSave): Promise<number> {
    checkSave(id, save);
    try {
      const saved = await new Promise<boolean>((resolve, reject) => {
        if (this.#saves.length === 0) setImmediate(() => this.#sendSaves());
        this.#saves.push({ id, save, resolve, reject });
      });
      if (!saved) {
        const found = await this.#pool.query("SELECT version FROM stepflow_sessions WHERE id = $1", [id]);
        const version = found.rows[0]?.version;
        throw new SessionConflictError(id, save.expectedVersion, version === undefined ? undefined : Number(version));
      }
      return save.expectedVersion + 1;
    } catch (error) {
      throw this.#failed(error);
    }
  }

  /**
   * Sends the saves asked for in one turn of the event loop: those of different sessions together,
   * up to 100 a statement (a round trip and a socket write each was most of what a save cost this
   * process, with a thousand sessions at once). A second save of a session waits for the first, as
   * if sent one after the other.
   */
  #sendSaves(): void {
    const queue = this.#saves;
    this.#saves = [];
    const together: QueuedSave[] = [];
    const later: QueuedSave[] = [];
    const ids = new Set<string>();
    for (const queued of queue) {
      if (ids.has(queued.id)) later.push(queued);
      else {
        ids.add(queued.id);
        together.push(queued);
      }
    }
    const sent: Promise<void>[] = [];
    for (let i = 0; i < together.length; i += SAVES_PER_STATEMENT) {
      const chunk = together.slice(i, i + SAVES_PER_STATEMENT);
      sent.push(chunk.length === 1 ? this.#saveOne(chunk[0] as QueuedSave) : this.#saveMany(chunk));
    }
    if (later.length > 0)
      void Promise.all(sent).then(() => {
        if (this.#saves.length === 0) setImmediate(() => this.#sendSaves());
        this.#saves.push(...later);
      });
  }

  /**
   * One save as one statement, so one round trip and its own transaction: the row change takes
   * the row lock (a concurrent save of the session waits, then finds the version changed), and the
   * messages are appended only if it changed a row.
   */
  async #saveOne({ id, save, resolve, reject }: QueuedSave): Promise<void> {
    const change =
      save.expectedVersion === 0
        ? "INSERT INTO stepflow_sessions (id, version, snapshot, message_count, created_at, updated_at) VALUES ($3, 1, $1, $2, now(), now()) ON CONFLICT (id) DO NOTHING RETURNING message_count"
        : "UPDATE stepflow_sessions SET version = version + 1, snapshot = $1, message_count = message_count + $2, updated_at = now() WHERE id = $3 AND version = $5 RETURNING message_count";
    const count = save.append.length;
    try {
      const changed = await this.#pool.query({
        name: save.expectedVersion === 0 ? "stepflow_session_create" : "stepflow_session_update",
        text: `WITH changed AS (${change}),
         appended AS (
           INSERT INTO stepflow_session_messages (session_id, seq, message, created_at)
           SELECT $3, changed.message_count - $2::int + m.n::int, m.message, now() FROM changed, json_array_elements_text($4::json) WITH ORDINALITY AS m(message, n))
         SELECT message_count FROM changed`,
        // The messages as one JSON array, not a text[]: see #saveMany.
        values:
          save.expectedVersion === 0
            ? [save.snapshot, count, id, JSON.stringify(save.append)]
            : [save.snapshot, count, id, JSON.stringify(save.append), save.expectedVersion],
      });
      resolve(changed.rows.length === 1);
    } catch (error) {
      reject(error);
    }
  }

  /**
   * The saves of different sessions as one statement, each applied only if its session is at its
   * expected version (as `#saveOne`). If the statement fails (nothing of it was applied), each
   * save is sent alone, to get its own answer: a deadlock with another process's saves of the
   * same sessions, taking their row locks in another order, is the one failure to expect.
   */
  async #saveMany(saves: readonly QueuedSave[]): Promise<void> {
    try {
      const changed = await this.#pool.query<{ id: string }>({
        name: "stepflow_session_save_many",
        text: `WITH input AS (
           SELECT t.id, t.expected, s.snapshot, t.n, t.i FROM unnest($1::text[], $2::int[], $4::int[]) WITH ORDINALITY AS t(id, expected, n, i)
           JOIN json_array_elements_text($3::json) WITH ORDINALITY AS s(snapshot, i) ON s.i = t.i),
         created AS (
           INSERT INTO stepflow_sessions (id, version, snapshot, message_count, created_at, updated_at)
           SELECT id, 1, snapshot, n, now(), now() FROM input WHERE expected = 0
           ON CONFLICT (id) DO NOTHING RETURNING id, message_count),
         updated AS (
           UPDATE stepflow_sessions s SET version = s.version + 1, snapshot = i.snapshot, message_count = s.message_count + i.n, updated_at = now()
           FROM input i WHERE s.id = i.id AND i.expected > 0 AND s.version = i.expected
           RETURNING s.id, s.message_count),
         changed AS (SELECT id, message_count FROM created UNION ALL SELECT id, message_count FROM updated),
         appended AS (
           INSERT INTO stepflow_session_messages (session_id, seq, message, created_at)
           SELECT c.id, c.message_count - inp.n + m.k, m.message, now()
           FROM changed c JOIN input inp ON inp.id = c.id
           JOIN json_array_elements($5::json) WITH ORDINALITY AS per(messages, i) ON per.i = inp.i
           CROSS JOIN LATERAL json_array_elements_text(per.messages) WITH ORDINALITY AS m(message, k))
         SELECT id FROM changed`,
        // Snapshots and messages (JSON text, full of quotes) go as JSON, not text[]: pg writes an
        // array literal escaping each element with two regular expressions, five times slower than
        // JSON.stringify (7.5 against 1.2 µs a turn, on this thread). The messages go as each
        // save's own list, in the saves' order: no session id and number per message to gather.
        values: [
          saves.map(({ id }) => id),
          saves.map(({ save }) => save.expectedVersion),
          JSON.stringify(saves.map(({ save }) => save.snapshot)),
          saves.map(({ save }) => save.append.length),
          JSON.stringify(saves.map(({ save }) => save.append)),
        ],
      });
      const saved = new Set(changed.rows.map((row) => String(row.id)));
      for (const { id, resolve } of saves) resolve(saved.has(id));
    } catch {
      await Promise.all(saves.map((queued) => this.#saveOne(queued)));
    }
  }

  async list(options: ListOptions = {}): Promise<SessionSummary[]> {
    const limit = listLimit(options);
    const prefix = listPrefix(options);
    try {
      const result = await this.#pool.query(
        `SELECT id, version, message_count, created_at, updated_at FROM stepflow_sessions${prefix === undefined ? "" : " WHERE starts_with(id, $2)"} ORDER BY updated_at DESC, id LIMIT $1`,
        prefix === undefined ? [limit] : [limit, prefix],
      );
      return result.rows.map((row) => ({
        id: String(row.id),
        version: Number(row.version),
        messageCount: Number(row.message_count),
        createdAt: new Date(row.created_at),
        updatedAt: new Date(row.updated_at),
      }));
    } catch (error) {
      throw this.#failed(error);
    }
  }

  async delete(id: string, options: DeleteOptions = {}): Promise<boolean> {
    checkSessionId(id);
    const version = deleteVersion(options);
    try {
      return transaction(this.#pool, async (client) => {
        if (version === undefined) {
          await client.query("DELETE FROM stepflow_session_messages WHERE session_id = $1", [id]);
          return ((await client.query("DELETE FROM stepflow_sessions WHERE id = $1", [id])).rowCount ?? 0) > 0;
        }
        // The row first: its delete takes the row lock (a concurrent save waits, then finds it gone), and nothing goes unless it is at the version.
        if (((await client.query("DELETE FROM stepflow_sessions WHERE id = $1 AND version = $2", [id, version])).rowCount ?? 0) === 0) return false;
        await client.query("DELETE FROM stepflow_session_messages WHERE session_id = $1", [id]);
        return true;
      });
    } catch (error) {
      throw this.#failed(error);
    }
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  /** A failure of the database itself, named as the store's (not, say, the model server's). */
  #failed(error: unknown): unknown {
    if (error instanceof StepflowError) return error;
    return new SessionStoreError(
      `The session store ${this.description} failed: ${(error as Error).message}. Is PostgreSQL running, and is DATABASE_URL right?`,
      { cause: error },
    );
  }
}

async function transaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A checked-out client reports a lost connection twice: its query fails (handled below) and
  // it emits "error", which with no listener would crash the process. The broken client is then
  // released as broken, so the pool does not hand it out again.
  let lost: Error | undefined;
  const onError = (error: Error) => (lost = error);
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    if (!lost) await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.removeListener("error", onError);
    client.release(lost);
  }
}
