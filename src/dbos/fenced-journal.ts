/**
 * The journal of one part of a durable run: `PostgresJournal`'s table, whose claims are fenced
 * (see `lease.ts`) and whose every statement rides through a database outage (see `retry.ts`).
 * A worker that was taken over claims no side effect of a run another worker now executes. A
 * claim whose reply was lost to the outage is recognised as this execution's own when the retry
 * finds it, rather than taken for another worker's work in progress.
 */
import type { Pool } from "pg";
import { JournalError, checkJournalKey } from "../core/internal.ts";
import type { Journal, JournalClaim } from "../core/internal.ts";
import { DbosDatabaseError } from "./errors.ts";
import { claimant, fenceArgs, fenceCte, leaseLost } from "./lease.ts";
import type { Fence } from "./lease.ts";
import { retrying } from "./retry.ts";

/** `PostgresJournal`'s table, and who claimed each key (to know a claim of one's own). @example await createTable(client, JOURNAL_SCHEMA) */
export const JOURNAL_SCHEMA = `CREATE TABLE IF NOT EXISTS stepflow_journal (
  key TEXT PRIMARY KEY,
  result TEXT,
  started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at TIMESTAMPTZ);
ALTER TABLE stepflow_journal ADD COLUMN IF NOT EXISTS claimant TEXT`;

/**
 * The statement that claims journal keys while a fence (a `fence` CTE before it) holds: `keys`
 * is a SQL expression of a `text[]`, `who` the claimant's. A key someone holds stays theirs.
 * @example `WITH ${fenceCte(3)} ${claimKeys("ARRAY[$1]", "$2")}`
 */
export function claimKeys(keys: string, who: string): string {
  return `INSERT INTO stepflow_journal (key, claimant) SELECT k, ${who} FROM unnest(${keys}::text[]) AS t(k) WHERE EXISTS (SELECT 1 FROM fence)
       ON CONFLICT (key) DO NOTHING`;
}

/**
 * A part's journal, fenced by `fence`.
 * @example
 * const journal = new FencedJournal(pool, fence, { database: "postgres://u:***@h/db", tolerance: 120 });
 */
export class FencedJournal implements Journal {
  readonly description: string;

  constructor(
    private readonly pool: Pool,
    private readonly fence: Fence,
    private readonly where: { readonly database: string; readonly tolerance: number },
  ) {
    this.description = `PostgreSQL ${where.database}`;
  }

  /** Claims `key` while the fence holds; throws `DbosLeaseLostError` if it no longer does. */
  async begin(key: string): Promise<JournalClaim> {
    checkJournalKey(key);
    const me = claimant(this.fence);
    const inserted = await this.#query(`WITH ${fenceCte(3)} ${claimKeys("ARRAY[$1]", "$2")} RETURNING (SELECT count(*) FROM fence)::int AS held`, [
      key,
      me,
      ...fenceArgs(this.fence),
    ]);
    if (inserted.rowCount === 1) return { claimed: true };
    const found = await this.#query(
      `WITH ${fenceCte(2)} SELECT (SELECT count(*) FROM fence)::int AS held, j.key IS NOT NULL AS present, j.result, j.claimant
       FROM (SELECT 1) one LEFT JOIN stepflow_journal j ON j.key = $1`,
      [key, ...fenceArgs(this.fence)],
    );
    const row = found.rows[0] as { held: number; present: boolean; result: string | null; claimant: string | null };
    if (typeof row.result === "string") return { claimed: false, entry: { state: "finished", result: row.result } };
    if (row.held === 0) throw leaseLost(this.fence, `the claim of side effect "${key}"`);
    if (row.claimant === me) return { claimed: true }; // this execution's own claim, whose reply the outage lost
    if (!row.present && (await this.#insertLate(key, me))) return { claimed: true };
    return { claimed: false, entry: { state: "started" } };
  }

  /**
   * Records the result. Not fenced: the work has happened, and its result tells whoever runs the
   * step now not to do it again.
   */
  async finish(key: string, result: string): Promise<void> {
    checkJournalKey(key);
    await this.#query(
      `INSERT INTO stepflow_journal (key, result, finished_at, claimant) VALUES ($1, $2, now(), $3)
       ON CONFLICT (key) DO UPDATE SET result = EXCLUDED.result, finished_at = EXCLUDED.finished_at`,
      [key, result, claimant(this.fence)],
    );
  }

  /** Removes this execution's unfinished claim of `key`. */
  async release(key: string): Promise<void> {
    await this.#query("DELETE FROM stepflow_journal WHERE key = $1 AND result IS NULL AND claimant = $2", [key, claimant(this.fence)]);
  }

  /** The row vanished between the two statements (released by its claimant): one more try at claiming it. */
  async #insertLate(key: string, me: string): Promise<boolean> {
    const inserted = await this.#query(`WITH ${fenceCte(3)} ${claimKeys("ARRAY[$1]", "$2")}`, [key, me, ...fenceArgs(this.fence)]);
    return inserted.rowCount === 1;
  }

  async #query(sql: string, args: unknown[]) {
    try {
      return await retrying(() => this.pool.query(sql, args), { ...this.where, what: "the journal of side effects" });
    } catch (error) {
      if (error instanceof DbosDatabaseError) throw new JournalError(error.message, { cause: error });
      throw new JournalError(`Cannot use the journal ${this.description}: ${(error as Error).message}`, { cause: error });
    }
  }
}
