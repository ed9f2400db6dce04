/**
 * `Idempotency-Key`s kept in the server's session store, so that servers sharing the store
 * (behind one load balancer) answer a request sent again once, whichever of them it reaches. A
 * key is the session `idempotency:<namespace>:<sha256 of principal and key>`: created by the
 * first request (its claim, made atomic by the store's versioned save), it holds the answer
 * once given. A claim names its server and, like a handler's lease, lasts `LEASE_MS` unless
 * renewed: a server that died while answering does not lock the key for a day.
 */
import { createHash } from "node:crypto";
import { SessionConflictError } from "../sessions/types.ts";
import type { SessionStore } from "../sessions/types.ts";
import { LEASE_MS, leaseHeld } from "./handler-lease.ts";
import { ServerRequestError } from "./refusals.ts";
import { IDEMPOTENCY_SESSION_PREFIX } from "./session-kinds.ts";
import { DEFAULT_LIMITS, keyReused } from "./idempotency.ts";
import type { KeptAnswer, KeyedRequest } from "./idempotency.ts";

const FORMAT = "stepflow.idempotency/1";
/** Seconds a client is told to wait before sending a request again whose key another server is answering. */
export const IN_USE_RETRY_SECONDS = 1;
/** How often a server deletes the stored keys of its namespace that are past their time. */
const SWEEP_MS = 60 * 60 * 1000;

/** A stored key's snapshot. */
interface KeyRecord {
  readonly format: typeof FORMAT;
  readonly fingerprint: string;
  /** When the first request claimed it (ms since the epoch): its age, for the time limit. */
  readonly at: number;
  /** The server answering it, and until when its claim holds unless renewed. */
  readonly holder: string;
  readonly until: number;
  /** The run a run-and-wait started: a request sent again after its server died waits on that run rather than starting another. */
  readonly handlerId?: string;
  readonly answer?: KeptAnswer;
  /** Its request was refused (not 2xx): the key is free again, for any request. */
  readonly released?: true;
}

/**
 * A request sent again with a key that another server sharing the store is still answering:
 * 409, `Retry-After` seconds. The client sends it again with the same key later.
 * @example `err instanceof KeyInUseError && err.retryAfter // 1`
 */
export class KeyInUseError extends ServerRequestError {
  override name = "KeyInUseError";
  readonly retryAfter = IN_USE_RETRY_SECONDS;
  constructor(key: string, holder: string) {
    super(
      409,
      "idempotency_key_in_use",
      `The Idempotency-Key ${JSON.stringify(key)} is in use: another server sharing this store (${holder}) is still answering the first request sent with it. Send the request again with the same key in ${IN_USE_RETRY_SECONDS} s to get that answer; a new key would do it twice.`,
    );
  }
}

/**
 * The key of the request being answered, as the route sees it: the run a run-and-wait sent
 * before started (`handlerId`, if its server died while it waited), and where to record the run
 * it starts.
 */
export interface KeyClaim {
  readonly handlerId: string | undefined;
  /** Records the run this request started in the claim (best effort: a failed write is ignored). */
  noteHandler(handlerId: string): Promise<void>;
  /** Lets the claim go with its run, though the request is refused: a later request waits on that run rather than starting another. */
  keep(): void;
}

/** One claim this server holds: its session, the version it wrote last, its record. */
interface Held {
  readonly id: string;
  version: number;
  record: KeyRecord;
  /** The writes to the claim, one after another (each names the version the one before wrote). */
  writes: Promise<unknown>;
}

/**
 * The keys of one server in a shared store. `answer` gives `run`'s answer the first time,
 * the kept one after (from whichever server gave it), 422 for a key used with another request,
 * and 409 {@link KeyInUseError} while another live server answers it.
 * @example
 * const keys = new StoredIdempotencyKeys(await openSessionStore("sqlite:server.db"), "host/1/abc");
 * const first = await keys.answer(keyedRequest("alice", "POST /api/x", "k1", "{}"), async () => ({ status: 202, body: '{"accepted":true}' }));
 * console.log(first.replayed); // false; on another server of the store, the same call gives true
 */
export class StoredIdempotencyKeys {
  readonly #sessions: SessionStore;
  readonly #holder: string;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #held = new Set<Held>();
  #timers: NodeJS.Timeout[] = [];
  #sweeping: Promise<unknown> = Promise.resolve();

  constructor(sessions: SessionStore, holder: string, options: { namespace?: string | undefined; ttlMs?: number; now?: () => number } = {}) {
    this.#sessions = sessions;
    this.#holder = holder;
    this.#prefix = options.namespace === undefined ? IDEMPOTENCY_SESSION_PREFIX : `${IDEMPOTENCY_SESSION_PREFIX}${options.namespace}:`;
    this.#ttlMs = options.ttlMs ?? DEFAULT_LIMITS.ttlMs;
    this.#now = options.now ?? Date.now;
  }

  /** Starts renewing the claims in flight (a sixth of a lease apart) and sweeping old keys (now, then hourly); neither timer keeps the process alive. */
  start(onError: (error: unknown) => void): void {
    const sweep = () => (this.#sweeping = this.sweep().catch(onError));
    sweep();
    const renewing = setInterval(() => void this.renew().catch(onError), LEASE_MS / 6);
    const sweeping = setInterval(sweep, SWEEP_MS);
    renewing.unref();
    sweeping.unref();
    this.#timers = [renewing, sweeping];
  }

  /** Stops the timers; resolves once a sweep under way is done (before the store is closed). */
  stop(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    return this.#sweeping.then(() => {});
  }

  /**
   * The answer for the request's key: `run`'s the first time (kept if 2xx, else the claim is
   * given up), else the one kept. The key was checked and the body hashed by `keyedRequest`.
   */
  async answer(request: KeyedRequest, run: (claim: KeyClaim) => Promise<KeptAnswer>): Promise<KeptAnswer & { replayed: boolean }> {
    const { principal, key, fingerprint } = request;
    const id =
      this.#prefix +
      createHash("sha256")
        .update(JSON.stringify([principal, key]))
        .digest("hex");
    const held = await this.#claim(id, key, fingerprint);
    if ("status" in held) return { ...held, replayed: true };
    this.#held.add(held);
    let kept: KeptAnswer | undefined;
    let keep = false;
    try {
      const answer = await run({
        handlerId: held.record.handlerId,
        noteHandler: (handlerId) => this.#write(held, { ...held.record, handlerId }).catch(() => {}),
        keep: () => (keep = true),
      });
      kept = answer.status >= 200 && answer.status < 300 ? answer : undefined;
      return { ...answer, replayed: false };
    } finally {
      this.#held.delete(held);
      // A claim let go with its run (`keep`) is free at once for the retry, which waits on that run.
      // Best effort: a store that fails here leaves the claim to be abandoned a lease later. A
      // refused request frees the key by a versioned write rather than a delete, which could
      // delete the claim of a server that took it over meanwhile.
      if (kept) await this.#write(held, { ...held.record, answer: kept }).catch(() => {});
      else await this.#write(held, keep ? { ...held.record, until: 0 } : { ...held.record, released: true, until: 0 }).catch(() => {});
    }
  }

  /** Claims `id` for this server, or gives the answer kept in it; throws 422 / 409 as the record says. */
  async #claim(id: string, key: string, fingerprint: string): Promise<Held | KeptAnswer> {
    for (;;) {
      const now = this.#now();
      const fresh: KeyRecord = { format: FORMAT, fingerprint, at: now, holder: this.#holder, until: now + LEASE_MS };
      // The first try is a claim: the usual request is a new key, one save.
      try {
        const version = await this.#sessions.save(id, { expectedVersion: 0, snapshot: JSON.stringify(fresh), append: [] });
        return { id, version, record: fresh, writes: Promise.resolve() };
      } catch (error) {
        if (!(error instanceof SessionConflictError)) throw error;
      }
      const stored = await this.#sessions.load(id, { newest: 0 });
      if (!stored) continue; // given up since: claim it again
      const record = parseRecord(id, stored.snapshot);
      // Past its time, or given up: as if never used.
      const free = record.released === true || record.at + this.#ttlMs <= now;
      if (!free) {
        if (record.fingerprint !== fingerprint) throw keyReused(key);
        if (record.answer) return record.answer;
        if (leaseHeld({ holder: record.holder, until: record.until }, now)) throw new KeyInUseError(key, record.holder);
      }
      // Free, or its server died before answering: taken over (with the run it had started, if any).
      const taken: KeyRecord = free ? fresh : { ...record, holder: this.#holder, until: now + LEASE_MS };
      try {
        const version = await this.#sessions.save(id, { expectedVersion: stored.version, snapshot: JSON.stringify(taken), append: [] });
        return { id, version, record: taken, writes: Promise.resolve() };
      } catch (error) {
        if (!(error instanceof SessionConflictError)) throw error;
      }
    }
  }

  /** Writes `record` to a claim this server holds, after its earlier writes; a claim another server took over is let go. */
  #write(held: Held, record: KeyRecord): Promise<void> {
    const write = held.writes.then(async () => {
      try {
        held.version = await this.#sessions.save(held.id, { expectedVersion: held.version, snapshot: JSON.stringify(record), append: [] });
      } catch (error) {
        if (error instanceof SessionConflictError) this.#held.delete(held);
        throw error;
      }
      held.record = record;
    });
    held.writes = write.catch(() => {});
    return write;
  }

  /** Renews the claims in flight whose time is two thirds gone, so that no other server takes them over. */
  async renew(): Promise<void> {
    const now = this.#now();
    const due = [...this.#held].filter((held) => held.record.until - now < (LEASE_MS * 2) / 3);
    await Promise.all(
      due.map((held) =>
        this.#write(held, { ...held.record, until: now + LEASE_MS }).catch((error: unknown) => {
          if (!(error instanceof SessionConflictError)) throw error;
        }),
      ),
    );
  }

  /**
   * Deletes the keys of this namespace past their time: those of any server (one that has
   * stopped included), found by listing the store; one saved since it was read (claimed again)
   * is kept. Returns how many were deleted.
   */
  async sweep(): Promise<number> {
    const now = this.#now();
    let deleted = 0;
    for (const summary of await this.#sessions.list({ limit: 1_000_000, prefix: this.#prefix })) {
      const rest = summary.id.startsWith(this.#prefix) ? summary.id.slice(this.#prefix.length) : "";
      // The store's own time says which are surely young; the record's, which are old.
      if (!/^[0-9a-f]{64}$/.test(rest) || summary.updatedAt.getTime() > now - this.#ttlMs) continue;
      const stored = await this.#sessions.load(summary.id, { newest: 0 });
      let at = 0;
      try {
        if (stored) at = parseRecord(summary.id, stored.snapshot).at;
      } catch {
        // unreadable: deleted as old
      }
      // Deleted only at the version read: another server may have claimed the old key again (or
      // answered it) since, and a plain delete would lose that claim and the answer it keeps. A
      // delete at a version is one statement in each store; a tombstone saved at the version
      // would still need a delete, with the same race. A store of one's own that ignores
      // `expectedVersion` deletes as before.
      if (stored && at + this.#ttlMs <= now && (await this.#sessions.delete(summary.id, { expectedVersion: stored.version }))) deleted++;
    }
    return deleted;
  }
}

function parseRecord(id: string, snapshot: string): KeyRecord {
  let record: Partial<KeyRecord> | undefined;
  try {
    record = JSON.parse(snapshot) as Partial<KeyRecord>;
  } catch {
    // said below
  }
  if (record?.format !== FORMAT || typeof record.fingerprint !== "string" || typeof record.at !== "number" || typeof record.holder !== "string")
    throw new ServerRequestError(
      500,
      "corrupt_idempotency_key",
      `The stored Idempotency-Key record ${id} cannot be read. Send the request with a new key, or delete the session "${id}" from the store.`,
    );
  return record as KeyRecord;
}
