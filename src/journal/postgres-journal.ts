/**
 * A journal in PostgreSQL, shared by every process on every machine using the database;
 * `PostgresSessionStore` keeps one in its own database. A key is claimed by one INSERT, so two
 * processes cannot both claim it.
 */
import { JournalError, checkJournalKey } from "../core/internal.ts";
import type { Journal, JournalClaim } from "../core/internal.ts";

const TABLE = `CREATE TABLE IF NOT EXISTS stepflow_journal (
  key TEXT PRIMARY KEY,
  result TEXT,
  started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at TIMESTAMPTZ)`;

/**
 * What the journal needs of a connection: a `pg` `Pool` or `Client` has it. Declared here, not
 * imported, so that stepflow's type declarations do not require `pg` where it is not installed.
 */
export interface PostgresQueryable {
  query(sql: string, values: unknown[]): Promise<{ readonly rows: readonly Record<string, unknown>[]; readonly rowCount: number | null }>;
}

/**
 * @example
 * const journal = new PostgresJournal(new pg.Pool({ connectionString: process.env.DATABASE_URL }), "PostgreSQL");
 */
export class PostgresJournal implements Journal {
  readonly #pool: PostgresQueryable;
  #ready: Promise<unknown> | undefined;

  /** A journal in the database of `pool` (its table is created on first use). `description` names it in errors, without a password. */
  constructor(
    pool: PostgresQueryable,
    readonly description: string,
  ) {
    this.#pool = pool;
  }

  async begin(key: string): Promise<JournalClaim> {
    checkJournalKey(key);
    await this.#table();
    const inserted = await this.#query("INSERT INTO stepflow_journal (key) VALUES ($1) ON CONFLICT (key) DO NOTHING", [key]);
    if (inserted.rowCount === 1) return { claimed: true };
    const found = await this.#query("SELECT result FROM stepflow_journal WHERE key = $1", [key]);
    const result: unknown = found.rows[0]?.result;
    return { claimed: false, entry: typeof result === "string" ? { state: "finished", result } : { state: "started" } };
  }

  /** Records the result, inserting the key if no `begin` did (work that began before anyone else could know its key). */
  async finish(key: string, result: string): Promise<void> {
    checkJournalKey(key);
    await this.#table();
    await this.#query(
      `INSERT INTO stepflow_journal (key, result, finished_at) VALUES ($1, $2, now())
        ON CONFLICT (key) DO UPDATE SET result = EXCLUDED.result, finished_at = EXCLUDED.finished_at`,
      [key, result],
    );
  }

  async release(key: string): Promise<void> {
    await this.#query("DELETE FROM stepflow_journal WHERE key = $1 AND result IS NULL", [key]);
  }

  #table(): Promise<unknown> {
    // Two processes creating the table at once can collide on the catalog: a second attempt sees it.
    return (this.#ready ??= this.#query(TABLE, [])
      .catch(() => this.#query(TABLE, []))
      .catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      }));
  }

  async #query(sql: string, args: unknown[]): ReturnType<PostgresQueryable["query"]> {
    try {
      return await this.#pool.query(sql, args);
    } catch (error) {
      throw new JournalError(`Cannot use the journal ${this.description}: ${(error as Error).message}`, { cause: error });
    }
  }
}
