/**
 * A run's id: a UUID of version 7 (RFC 9562), whose first 48 bits are the time it was made
 * (milliseconds since the epoch) and whose other 74 bits are random. Runs then sort by when
 * they began, and a store keyed by run (the server's `handler:<id>` sessions) adds each new run
 * at the end of its index, where a random id wrote a random page of it: on SQLite, for a run
 * that saves once, that page and the checkpointing of it were a third of the store thread's work.
 */

/**
 * A new run id, made at `now` (ms since the epoch).
 * @example
 * newRunId(Date.parse("2026-11-28T07:00:00.000Z")); // "01a220f4-2180-7…": the time, then random bits
 */
export function newRunId(now = Date.now()): string {
  // "xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx": from index 15 on, random bits and the variant (V) in place.
  const random = globalThis.crypto.randomUUID();
  const time = now.toString(16).padStart(12, "0");
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
