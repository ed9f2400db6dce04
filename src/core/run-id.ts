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
  // The time's 48 bits as two 24-bit integers, written byte by byte from a table: Number#toString(16)
  // and padding made this three times as slow as the random part (randomUUID) it adds to.
  const high = Math.floor(now / 0x1000000);
  const low = now - high * 0x1000000;
  const time = hex(high >>> 16) + hex(high >>> 8) + hex(high) + hex(low >>> 16) + "-" + hex(low >>> 8) + hex(low);
  // "xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx": from index 15 on, random bits and the variant (V) in place.
  return `${time}-7${globalThis.crypto.randomUUID().slice(15)}`;
}

/** The two hex digits of each byte. */
const HEX_BYTES = Object.freeze(Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0")));

/** The two hex digits of `value`'s lowest byte. */
function hex(value: number): string {
  return HEX_BYTES[value & 0xff] as string;
}
