/**
 * What `stepflow sessions list` lists: the conversations in a store, most recent first. A store
 * a `stepflow serve` or `WorkflowServer` shares also holds the server's runs and keys as
 * sessions (thousands of keys a day on a busy server); they are left out unless asked for.
 */
import type { ListOptions, SessionSummary } from "../sessions/types.ts";
import { isServerSession } from "../server/session-kinds.ts";

/** How many sessions a listing shows. */
export const LISTED = 100;

/** The sessions listed, and how many of a server's were read and left out. */
export interface SessionListing {
  readonly sessions: SessionSummary[];
  readonly serverSessions: number;
}

/**
 * The newest `LISTED` sessions of `store`: with `all`, every kind; else the conversations only.
 * A store lists by age, not by kind, so a listing that found a server's sessions among the
 * newest asks again for more (four times as many each time) until it has `LISTED`
 * conversations or has read the whole store.
 * @example
 * const { sessions, serverSessions } = await listSessions(store, false);
 * for (const s of sessions) console.log(s.id); // alice, bob; not handler:… or idempotency:…
 */
export async function listSessions(store: { list(options?: ListOptions): Promise<SessionSummary[]> }, all: boolean): Promise<SessionListing> {
  if (all) return { sessions: await store.list({ limit: LISTED }), serverSessions: 0 };
  for (let limit = LISTED; ; limit *= 4) {
    const read = await store.list({ limit });
    const sessions = read.filter((session) => !isServerSession(session.id));
    if (sessions.length >= LISTED || read.length < limit) return { sessions: sessions.slice(0, LISTED), serverSessions: read.length - sessions.length };
  }
}
