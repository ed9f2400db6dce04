/** Persisted sessions: `Sessions` runs turns on stored conversations; the stores keep them. */
export { Sessions, SessionTurn } from "./sessions.ts";
export type { SessionMessage, SessionMessagePage, SessionsOptions } from "./sessions.ts";
export type { WindowCacheOptions } from "./window-cache.ts";
export { checkSessionMemory, sessionMemoryOf, wholeContextMemory } from "./session-memory.ts";
export type { MessageWindow, SessionAware, SessionMemory } from "./session-memory.ts";
export { DEFAULT_SESSION_STORE, openSessionStore, sessionStoreKind } from "./open-store.ts";
export { MemorySessionStore } from "./memory-store.ts";
export { SqliteSessionStore } from "./sqlite-store.ts";
export { PostgresSessionStore } from "./postgres-store.ts";
export { CorruptSessionError, SessionConflictError, SessionDriverMissingError, SessionStoreError, SqliteThreadError, checkSessionId } from "./types.ts";
export type {
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
