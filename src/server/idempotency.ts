/**
 * `Idempotency-Key` on the API's POSTs, as Stripe's and OpenAI's APIs take it: a client whose
 * request failed before it read the answer (a reset connection, a proxy's 502) sends it again
 * with the same key and gets the first answer back instead of a second run, event or approval.
 * Kept in this server's memory, bounded in count, bytes and age.
 */
import { createHash } from "node:crypto";
import { ServerRequestError } from "./refusals.ts";

/** The request header a client names its attempt in. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** The answer header set on an answer given again for a key already used. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** An answer to keep: its status and its JSON text. */
export interface KeptAnswer {
  readonly status: number;
  readonly body: string;
}

interface Entry {
  readonly fingerprint: string;
  readonly at: number;
  /** Settles with the first request's answer, or `undefined` when it failed (nothing is kept then). */
  readonly answer: Promise<KeptAnswer | undefined>;
  /** Bytes of the kept answer; `undefined` while the first request is still being answered. */
  size: number | undefined;
}

/** Limits of an {@link IdempotencyKeys}: how many answers, how many bytes of them, for how long. */
export interface IdempotencyLimits {
  readonly maxKeys: number;
  readonly maxBytes: number;
  readonly ttlMs: number;
}

/**
 * A request sent with an `Idempotency-Key`, read once for both the server's memory and a shared
 * store: who sent it, its key (checked), and what the key is used for (the route and body,
 * hashed), so that neither hashes the body again.
 */
export interface KeyedRequest {
  readonly principal: string;
  readonly key: string;
  readonly fingerprint: string;
}

/**
 * Reads a keyed request: refuses (400) a key that is not 1 to 255 printable ASCII characters,
 * and hashes the route and body once.
 * @example
 * const request = keyedRequest("alice", "POST /api/workflows/agent/run", "k1", '{"input":{}}');
 * request.fingerprint; // 44 base64 characters
 */
export function keyedRequest(principal: string, route: string, key: string, body: string): KeyedRequest {
  checkKey(key);
  return { principal, key, fingerprint: fingerprintOf(route, body) };
}

/** The limits unless told otherwise: 10,000 answers, 32 MiB of them, kept 24 h (a stored key's time limit too). */
export const DEFAULT_LIMITS: IdempotencyLimits = { maxKeys: 10_000, maxBytes: 32 * 1024 * 1024, ttlMs: 24 * 60 * 60 * 1000 };

/**
 * The answers given to requests that carried an `Idempotency-Key`, by who sent them, the route
 * and the key. A key is the caller's for one request: the same key with another body, or on
 * another route, is refused (422), so that a key reused by mistake does not pass off an old
 * answer as the new request's. Only a 2xx answer is kept: a refused request changed nothing and
 * may be sent again with its key.
 * @example
 * const keys = new IdempotencyKeys();
 * const request = keyedRequest("alice", "POST /api/x", "k1", "{}");
 * const first = await keys.answer(request, async () => ({ status: 202, body: '{"accepted":true}' }));
 * const again = await keys.answer(request, async () => { throw new Error("not run again"); });
 * console.log(first.replayed, again.replayed); // false true
 */
export class IdempotencyKeys {
  readonly #entries = new Map<string, Entry>();
  readonly #limits: IdempotencyLimits;
  readonly #now: () => number;
  #bytes = 0;

  constructor(limits: Partial<IdempotencyLimits> = {}, now: () => number = Date.now) {
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
    this.#now = now;
  }

  /** How many keys are remembered, and the bytes of their answers. */
  get size(): { keys: number; bytes: number } {
    return { keys: this.#entries.size, bytes: this.#bytes };
  }

  /**
   * The answer for `key`: `run`'s, the first time (kept if 2xx), or the one given before. A
   * request with the key while the first is still being answered (a run-and-wait) waits for
   * that answer. `run` may say its answer was `replayed` (a stored key's, given by another server).
   */
  async answer(request: KeyedRequest, run: () => Promise<KeptAnswer & { replayed?: boolean }>): Promise<KeptAnswer & { replayed: boolean }> {
    this.#expire();
    const { principal, key, fingerprint } = request;
    const id = JSON.stringify([principal, key]);
    const known = this.#entries.get(id);
    if (known) {
      if (known.fingerprint !== fingerprint) throw keyReused(key);
      const earlier = await known.answer;
      if (earlier) return { ...earlier, replayed: true };
      // The first attempt failed and is forgotten: this one is tried as new (after any other waiter).
      return this.answer(request, run);
    }
    let settle!: (kept: KeptAnswer | undefined) => void;
    const entry: Entry = { fingerprint, at: this.#now(), answer: new Promise((resolve) => (settle = resolve)), size: undefined };
    this.#entries.set(id, entry);
    let kept: KeptAnswer | undefined;
    try {
      const answer = await run();
      kept = answer.status >= 200 && answer.status < 300 ? { status: answer.status, body: answer.body } : undefined;
      return { status: answer.status, body: answer.body, replayed: answer.replayed === true };
    } finally {
      if (!kept) this.#entries.delete(id);
      else if (this.#entries.get(id) === entry) {
        entry.size = id.length + kept.body.length;
        this.#bytes += entry.size;
        this.#evict();
      }
      settle(kept);
    }
  }

  /** Drops the answers older than the time limit: the map is in insertion order, oldest first. */
  #expire(): void {
    const oldest = this.#now() - this.#limits.ttlMs;
    for (const [id, entry] of this.#entries) {
      if (entry.at > oldest) break;
      // One still being answered stays: a retry waits for it rather than running it again.
      if (entry.size !== undefined) this.#drop(id, entry);
    }
  }

  /** Drops the oldest answers until the count and bytes are within the limits. */
  #evict(): void {
    for (const [id, entry] of this.#entries) {
      if (this.#entries.size <= this.#limits.maxKeys && this.#bytes <= this.#limits.maxBytes) break;
      if (entry.size !== undefined) this.#drop(id, entry);
    }
  }

  #drop(id: string, entry: Entry): void {
    this.#entries.delete(id);
    this.#bytes -= entry.size ?? 0;
  }
}

/**
 * What a key is used for: the route and the body, hashed.
 * @example fingerprintOf("POST /api/workflows/agent/run", '{"input":{}}'); // 44 base64 characters
 */
export function fingerprintOf(route: string, body: string): string {
  return createHash("sha256").update(route).update("\0").update(body).digest("base64");
}

/**
 * The 422 for a key sent with another request than its first.
 * @example throw keyReused("k1");
 */
export function keyReused(key: string): ServerRequestError {
  return new ServerRequestError(
    422,
    "idempotency_key_reused",
    `The Idempotency-Key ${JSON.stringify(key)} was used for another request (another route or body). Use a new key for each new request, the same one only to send a request again.`,
  );
}

/**
 * Refuses (400) a key that is not 1 to 255 printable ASCII characters.
 * @example checkKey("3f2b…"); // ok
 */
export function checkKey(key: string): void {
  if (!/^[\x21-\x7e]{1,255}$/.test(key))
    throw new ServerRequestError(
      400,
      "invalid_idempotency_key",
      `An Idempotency-Key is 1 to 255 printable ASCII characters without spaces (a UUID, say); got ${JSON.stringify(key.slice(0, 300))}.`,
    );
}
