/** A journal in this process's memory: the default, and for tests. */
import { checkJournalKey } from "./types.ts";
import type { Journal, JournalClaim, JournalEntry } from "./types.ts";

/**
 * Keeps the newest `limit` records (default 1,000), so a long-lived process does not grow
 * without end; exactly-once holds for work repeated within that many newer records.
 * @example
 * const journal = new MemoryJournal();
 * await journal.begin("k"); // { claimed: true }
 * await journal.begin("k"); // { claimed: false, entry: { state: "started" } }
 */
export class MemoryJournal implements Journal {
  readonly description = "memory (this process only)";
  readonly #entries = new Map<string, JournalEntry>();

  constructor(readonly limit = 1_000) {}

  begin(key: string): JournalClaim {
    checkJournalKey(key);
    const entry = this.#entries.get(key);
    if (entry) return { claimed: false, entry };
    this.#entries.set(key, { state: "started" });
    if (this.#entries.size > this.limit) this.#entries.delete(this.#entries.keys().next().value as string);
    return { claimed: true };
  }

  finish(key: string, result: string): void {
    this.#entries.set(key, { state: "finished", result });
  }

  release(key: string): void {
    if (this.#entries.get(key)?.state === "started") this.#entries.delete(key);
  }
}
