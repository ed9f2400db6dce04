/** A journal in this process's memory: the default, and for tests. */
import { checkJournalKey } from "./types.ts";
import type { Journal, JournalClaim, JournalEntry } from "./types.ts";

/**
 * Keeps the newest records, between `limit / 2` and `limit` of them (default 1,000), so a
 * long-lived process does not grow without end; exactly-once holds for work repeated within
 * `limit / 2` newer records.
 * @example
 * const journal = new MemoryJournal();
 * await journal.begin("k"); // { claimed: true }
 * await journal.begin("k"); // { claimed: false, entry: { state: "started" } }
 */
export class MemoryJournal implements Journal {
  readonly description = "memory (this process only)";
  // Two generations instead of evicting the oldest record one at a time: deleting from the
  // head of a Map leaves holes that every later `keys().next()` walks over, which made each
  // record cost microseconds once the journal was full.
  #current = new Map<string, JournalEntry>();
  #previous = new Map<string, JournalEntry>();

  constructor(readonly limit = 1_000) {}

  begin(key: string): JournalClaim {
    checkJournalKey(key);
    const entry = this.#current.get(key) ?? this.#previous.get(key);
    if (entry) return { claimed: false, entry };
    this.#add(key, { state: "started" });
    return { claimed: true };
  }

  /** Records the result, adding the key if no `begin` did (work that began before anyone else could know its key). */
  finish(key: string, result: string): void {
    checkJournalKey(key);
    const entry: JournalEntry = { state: "finished", result };
    if (this.#previous.has(key)) this.#previous.set(key, entry);
    else if (this.#current.has(key)) this.#current.set(key, entry);
    else this.#add(key, entry);
  }

  release(key: string): void {
    for (const entries of [this.#current, this.#previous]) if (entries.get(key)?.state === "started") entries.delete(key);
  }

  #add(key: string, entry: JournalEntry): void {
    this.#current.set(key, entry);
    if (this.#current.size >= this.limit / 2) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
  }
}
