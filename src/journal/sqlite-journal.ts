/**
 * A journal in a SQLite file, shared by every process that opens it; `SqliteSessionStore`
 * keeps one in its own database. A key is claimed by one INSERT, so two processes cannot both
 * claim it.
 */
import { loadPackage, resolvePackage } from "../sqlite-thread/load-package.ts";
import { SqliteThread } from "../sqlite-thread/sqlite-thread.ts";
import type { SqliteThreadSetup } from "../sqlite-thread/sqlite-thread.ts";
import { JournalError, checkJournalKey } from "../core/internal.ts";
import type { Journal, JournalClaim } from "../core/internal.ts";

const TABLE = `CREATE TABLE IF NOT EXISTS stepflow_journal (
  key TEXT PRIMARY KEY,
  result TEXT,
  started_at INTEGER NOT NULL,
  finished_at INTEGER)`;

/**
 * What the journal needs of a connection: an `@libsql/client` `Client` has it. Declared here,
 * not imported, so that stepflow's type declarations do not require `@libsql/client` where it
 * is not installed.
 */
export interface SqliteConnection {
  execute(
    statement: string | { sql: string; args: (string | number | null)[] },
  ): Promise<{ readonly rows: ArrayLike<Record<string, unknown>>; readonly rowsAffected: number }>;
  close(): void | Promise<void>;
}

/**
 * @example
 * const journal = await SqliteJournal.open(".stepflow/journal.db");
 * const agent = new FunctionCallingAgent({ llm, tools, journal });
 */
export class SqliteJournal implements Journal {
  readonly description: string;
  readonly #db: SqliteConnection;
  readonly #owned: boolean;
  #ready: Promise<unknown> | undefined;

  /** A journal in the database `db` is connected to (its table is created on first use). */
  constructor(db: SqliteConnection, description: string, owned = false) {
    this.#db = db;
    this.description = description;
    this.#owned = owned;
  }

  /**
   * Opens (and creates, if needed) the SQLite file at `path`; `@libsql/client` must be installed.
   * Its statements run in a worker thread, as the session store's do.
   */
  static async open(path: string): Promise<SqliteJournal> {
    const db = await SqliteThread.open({ url: `file:${path}`, timeout: 5000, concurrency: 1 }, `SQLite ${path}`, JOURNAL_THREAD);
    return new SqliteJournal(db, `SQLite ${path}`, true);
  }

  async begin(key: string): Promise<JournalClaim> {
    checkJournalKey(key);
    await this.#table();
    const inserted = await this.#run(() =>
      this.#db.execute({ sql: "INSERT INTO stepflow_journal (key, started_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", args: [key, Date.now()] }),
    );
    if (inserted.rowsAffected === 1) return { claimed: true };
    const found = await this.#run(() => this.#db.execute({ sql: "SELECT result FROM stepflow_journal WHERE key = ?", args: [key] }));
    const result = found.rows[0]?.result;
    return { claimed: false, entry: typeof result === "string" ? { state: "finished", result } : { state: "started" } };
  }

  /** Records the result, inserting the key if no `begin` did (work that began before anyone else could know its key). */
  async finish(key: string, result: string): Promise<void> {
    checkJournalKey(key);
    await this.#table();
    const now = Date.now();
    await this.#run(() =>
      this.#db.execute({
        sql: `INSERT INTO stepflow_journal (key, result, started_at, finished_at) VALUES (?, ?, ?, ?)
          ON CONFLICT (key) DO UPDATE SET result = excluded.result, finished_at = excluded.finished_at`,
        args: [key, result, now, now],
      }),
    );
  }

  async release(key: string): Promise<void> {
    await this.#run(() => this.#db.execute({ sql: "DELETE FROM stepflow_journal WHERE key = ? AND result IS NULL", args: [key] }));
  }

  /** Closes the database (and its worker thread), if this journal opened it. */
  async close(): Promise<void> {
    if (this.#owned) await this.#db.close();
  }

  #table(): Promise<unknown> {
    return (this.#ready ??= this.#run(() => this.#db.execute(TABLE)).catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    }));
  }

  async #run<T>(statement: () => Promise<T>): Promise<T> {
    try {
      return await statement();
    } catch (error) {
      throw new JournalError(`Cannot use the journal ${this.description}: ${(error as Error).message}`, { cause: error });
    }
  }
}

const missingDriver = () =>
  new JournalError("The SQLite journal needs the package @libsql/client, which is not installed. Install it next to stepflow: npm install @libsql/client");

/** The journal's terms for its SQLite thread. */
const JOURNAL_THREAD: SqliteThreadSetup = {
  driverURL: () => resolvePackage("@libsql/client", missingDriver),
  loadDriver: () => loadPackage("@libsql/client", missingDriver),
  stopped: (description, exitCode, options) =>
    new JournalError(
      `The worker thread of the journal ${description} stopped${exitCode === undefined ? "" : ` (exit code ${exitCode})`}. Calls waiting for it failed, and a claim among them may or may not have been recorded. Open the journal again to continue.`,
      options,
    ),
};
