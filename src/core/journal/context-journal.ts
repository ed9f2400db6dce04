/**
 * Which journal a context's side effects are recorded in. `Sessions` gives each session's
 * context its store's journal, so that every process serving the session shares one; work on
 * a context without one is recorded in this process's memory.
 */
import type { Context } from "../context.ts";
import { storeJournal } from "../store.ts";
import { MemoryJournal } from "./memory-journal.ts";
import type { Journal } from "./types.ts";

/** The journal of contexts that were given none: this process's memory. @example `await processJournal.begin(key)` */
export const processJournal: Journal = new MemoryJournal();

/**
 * Records the side effects of runs on `ctx` in `journal` (the agent's tool calls, {@link once}).
 * @example
 * const ctx = Context.fromJSON(agent, saved);
 * useJournal(ctx, await SqliteJournal.open(".stepflow/journal.db"));
 * await agent.run(undefined, { ctx });
 */
export function useJournal(ctx: Context<object>, journal: Journal): void {
  // On the store, which a context shares with the views of it its steps get.
  ctx.store[storeJournal] = journal;
}

/**
 * The journal given to `ctx` with {@link useJournal}, else {@link processJournal}.
 * @example const journal = journalOf(ctx);
 */
export function journalOf(ctx: Context<object>): Journal {
  return ctx.store[storeJournal] ?? processJournal;
}
