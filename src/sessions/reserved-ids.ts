/**
 * The session ids a stepflow server keeps for its own records in a store it may share with
 * conversations: its runs (`handler:…`) and, with a SQLite or PostgreSQL store, its
 * `Idempotency-Key` answers (`idempotency:…`). They are told from conversations by these
 * prefixes alone (a listing reads ids, not snapshots), so `Sessions` starts no conversation
 * under them; one stored under such an id before goes on.
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

/**
 * Why a new conversation cannot be named `id` (it starts with a server's prefix), or
 * `undefined` when it can.
 * @example reservedIdProblem("handler:notes"); // 'Session id "handler:notes" starts with "handler:", …'
 */
export function reservedIdProblem(id: string): string | undefined {
  const prefix = [HANDLER_SESSION_PREFIX, IDEMPOTENCY_SESSION_PREFIX].find((p) => id.startsWith(p));
  if (prefix === undefined) return undefined;
  const rest = id.slice(prefix.length);
  return (
    `Session id ${JSON.stringify(id)} starts with "${prefix}", which a stepflow server keeps for its own records ` +
    `(its runs are "${HANDLER_SESSION_PREFIX}…", its Idempotency-Keys "${IDEMPOTENCY_SESSION_PREFIX}…") in a store it may share, ` +
    `and such sessions are not listed as conversations. Give the conversation another id${rest ? `, such as ${JSON.stringify(rest)}` : ""}.`
  );
}
