/**
 * The sessions a server keeps in its store, by how their ids start: its runs (`handler:…`) and,
 * with a SQLite or PostgreSQL store, its `Idempotency-Key` answers (`idempotency:…`). They are
 * not conversations: `stepflow sessions list` leaves them out unless told `--all`.
 */

/** The start of the id of a run's session (then the namespace, if any, and the handler's id). */
export const HANDLER_SESSION_PREFIX = "handler:";
/** The start of the id of a stored `Idempotency-Key`'s session. */
export const IDEMPOTENCY_SESSION_PREFIX = "idempotency:";

/**
 * Whether `id` is one of a server's own sessions (a run, a key) rather than a conversation.
 * @example isServerSession("handler:7f3a…"); // true
 * @example isServerSession("alice"); // false
 */
export function isServerSession(id: string): boolean {
  return id.startsWith(HANDLER_SESSION_PREFIX) || id.startsWith(IDEMPOTENCY_SESSION_PREFIX);
}
