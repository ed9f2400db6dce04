/**
 * The journal of side effects: before a piece of work with a side effect starts (a tool call
 * that deletes an employee), its key is recorded; when it ends, its result. Whoever comes next
 * with the same key (a second resume of one saved run, in this process or another) finds the
 * record and does not do the work again. Stores that several processes share make this hold
 * across processes.
 */
import { StepflowError } from "../errors.ts";

/** What a journal holds for a key: the work started (and perhaps never ended), or its result. @example `{ state: "finished", result: '{"ok":true}' }` */
export type JournalEntry = { readonly state: "started" } | { readonly state: "finished"; readonly result: string };

/** The answer to {@link Journal.begin}: the caller may do the work, or someone began it before. @example `{ claimed: false, entry: { state: "started" } }` */
export type JournalClaim = { readonly claimed: true } | { readonly claimed: false; readonly entry: JournalEntry };

/**
 * Where the records of side effects are kept. A journal in memory may answer at once (no
 * promise), so that recording a call costs no await; callers handle both. Implementations: `MemoryJournal` (this process),
 * `SqliteJournal`, `PostgresJournal` (shared by every process using the database).
 * @example
 * const claim = await journal.begin("refund:order-42");
 * if (claim.claimed) await journal.finish("refund:order-42", JSON.stringify(await refund()));
 */
export interface Journal {
  /** Where the records are, for messages (never includes a password). */
  readonly description: string;
  /**
   * Records that the work under `key` starts, atomically: `{ claimed: true }` for exactly one
   * caller; every other caller gets what was recorded (`started`, or `finished` with the result).
   */
  begin(key: string): JournalClaim | Promise<JournalClaim>;
  /**
   * Records the result (text, typically JSON) of the work under `key`: claimed by this caller
   * with `begin`, or never begun in the journal at all. `ctx.once` begins work in the journal
   * only once another process could know its key; work that was already running when that
   * became so (the run was saved meanwhile) ends here without a `begin`. So `finish` must
   * insert the key when it is missing, and overwrite a `started` record when it is there.
   */
  finish(key: string, result: string): void | Promise<void>;
  /** Removes a claim whose work did not start after all (the run was cancelled first), so a later attempt may do it. */
  release(key: string): void | Promise<void>;
}

/** A journal could not be read or written. @example `new JournalError("Cannot write the journal SQLite x.db: …")` */
export class JournalError extends StepflowError {
  override name = "JournalError";
}

/**
 * Throws `JournalError` unless `key` is a usable key (1–500 characters).
 * @example checkJournalKey("call:7f1c…"); // ok
 */
export function checkJournalKey(key: string): void {
  if (typeof key !== "string" || key.length === 0 || key.length > 500) {
    throw new JournalError(`A journal key must be 1 to 500 characters; got ${typeof key === "string" ? `${key.length} characters` : typeof key}.`);
  }
}
