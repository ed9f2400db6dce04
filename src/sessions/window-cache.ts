/**
 * The windows of the sessions this process served last, kept decoded between turns: the next
 * turn on one of them reads only the messages stored since (none when nobody else wrote), not
 * the whole window again. Bounded by sessions and by bytes, least recently used out first.
 */
import type { Json } from "../core/internal.ts";
import { SessionStoreError } from "./types.ts";

/**
 * Bounds of the windows a `Sessions` keeps between turns: `SessionsOptions.windowCache`.
 * @example new Sessions(agent, store, { windowCache: { sessions: 10_000, bytes: 256 * 2 ** 20 } });
 */
export interface WindowCacheOptions {
  /** Sessions kept at most (a whole number ≥ 0; 0 turns the cache off). Default 1,000. */
  readonly sessions?: number;
  /** Bytes of message JSON kept at most, over all sessions (a whole number ≥ 0). Default 64 MiB. */
  readonly bytes?: number;
}

/** A session's window as this process last saw it in the store. Never mutated: a turn replaces it. */
export interface CachedWindow {
  /** The stored session's version, `createdAt` (ms) and message count this window belongs to. */
  readonly version: number;
  readonly createdAt: number;
  readonly total: number;
  /** The newest messages, parsed and deeply frozen, oldest first: seqs `firstSeq` to `total`. */
  readonly messages: readonly Json[];
  readonly firstSeq: number;
  /** The stored JSON text of message #`total`, to confirm the store still holds this window. */
  readonly last: string | undefined;
  /** The messages' JSON text, in bytes (UTF-16 code units): what the cache's byte bound counts. */
  readonly bytes: number;
  /** How many messages the window had when it was last cut to what a turn needs: cut again once it doubles. */
  readonly cutAt: number;
}

export const DEFAULT_WINDOW_CACHE = { sessions: 1000, bytes: 64 * 2 ** 20 } as const;

/** Least recently used first: a Map iterates in insertion order, and a hit is re-inserted. */
export class WindowCache {
  readonly #entries = new Map<string, CachedWindow>();
  readonly #maxSessions: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(options: WindowCacheOptions = {}) {
    this.#maxSessions = bound(options, "sessions");
    this.#maxBytes = bound(options, "bytes");
  }

  get(id: string): CachedWindow | undefined {
    const entry = this.#entries.get(id);
    if (entry) {
      this.#entries.delete(id);
      this.#entries.set(id, entry);
    }
    return entry;
  }

  set(id: string, entry: CachedWindow): void {
    this.delete(id);
    if (this.#maxSessions === 0 || entry.bytes > this.#maxBytes) return;
    this.#entries.set(id, entry);
    this.#bytes += entry.bytes;
    for (const [oldest, old] of this.#entries) {
      if (this.#entries.size <= this.#maxSessions && this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= old.bytes;
    }
  }

  delete(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    this.#bytes -= entry.bytes;
  }

  /** Whether any window is kept (`sessions` ≥ 1). */
  get enabled(): boolean {
    return this.#maxSessions > 0;
  }

  /** How many sessions and bytes are kept now. */
  get size(): { readonly sessions: number; readonly bytes: number } {
    return { sessions: this.#entries.size, bytes: this.#bytes };
  }
}

function bound(options: WindowCacheOptions, name: "sessions" | "bytes"): number {
  const value = options[name] ?? DEFAULT_WINDOW_CACHE[name];
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new SessionStoreError(
      `windowCache.${name} must be a whole number ≥ 0 (0 keeps no window; default ${DEFAULT_WINDOW_CACHE[name]}); got ${typeof value === "string" ? JSON.stringify(value) : String(value)}.`,
    );
  }
  return value;
}

/** Freezes a parsed JSON value and everything in it, so that no turn can change a cached message in place. */
export function deepFreeze<T extends Json>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Array.isArray(value) ? value : Object.values(value)) deepFreeze(item);
  }
  return value;
}
