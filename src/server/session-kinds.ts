/**
 * The sessions a server keeps in its store, by how their ids start: its runs (`handler:…`) and,
 * with a SQLite or PostgreSQL store, its `Idempotency-Key` answers (`idempotency:…`). They are
 * not conversations: `stepflow sessions list` leaves them out unless told `--all`, and
 * `Sessions` starts no conversation under these prefixes (src/sessions/reserved-ids.ts).
 */
export { HANDLER_SESSION_PREFIX, IDEMPOTENCY_SESSION_PREFIX, isServerSession } from "../sessions/reserved-ids.ts";
