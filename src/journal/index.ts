/** The journal of side effects: what makes a tool call or a step's work happen at most once across resumes. */
export { JournalError, checkJournalKey, MemoryJournal, journalOf, processJournal, useJournal } from "../core/internal.ts";
export type { Journal, JournalClaim, JournalEntry } from "../core/internal.ts";
export { SqliteJournal } from "./sqlite-journal.ts";
export type { SqliteConnection } from "./sqlite-journal.ts";
export { PostgresJournal } from "./postgres-journal.ts";
export type { PostgresQueryable } from "./postgres-journal.ts";
export { once } from "./once.ts";
export type { OnceResult } from "./once.ts";
export { currentToolCall } from "../tools/current-tool-call.ts";
export type { CurrentToolCall } from "../tools/current-tool-call.ts";
