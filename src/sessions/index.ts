/** Persisted sessions: `Sessions` runs turns on stored conversations; the stores keep them. */
export { Sessions, SessionTurn } from "./sessions.ts";
export type { SessionMessage } from "./sessions.ts";
export { DEFAULT_SESSION_STORE, openSessionStore, sessionStoreKind } from "./open-store.ts";
export { MemorySessionStore } from "./memory-store.ts";
export { SqliteSessionStore } from "./sqlite-store.ts";
export { SqliteThreadError } from "./sqlite-thread.ts";
export { PostgresSessionStore } from "./postgres-store.ts";
export { CorruptSessionError, SessionConflictError, SessionDriverMissingError, SessionStoreError, checkSessionId } from "./types.ts";
export type { SessionRecord, SessionSave, SessionStore, SessionSummary, StoredMessage } from "./types.ts";
