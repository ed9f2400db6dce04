/**
 * The JSON text of a chat message as a session stores it: `JSON.stringify(message)`, the same
 * text, written faster for the messages LlamaIndex's `Memory` makes. Each carries a `createdAt`
 * Date, and `JSON.stringify` calls `Date#toJSON` through its generic path: for a turn's six
 * messages that was half of what writing them cost, and writing them was the main thread's
 * costliest line of a save.
 */

const DAY_MS = 86_400_000;
/** The UTC day of the last date formatted: its start (ms since 1970) and its "YYYY-MM-DDT" text. */
let dayStart = Number.NaN;
let dayText = "";
/** The second of the last date formatted: its start and its "YYYY-MM-DDTHH:MM:SS." text. */
let secondStart = Number.NaN;
let secondText = "";
/** "000Z" to "999Z", made as needed: the end of an ISO text, the one part that changes within a second. */
const millisTexts: string[] = [];

const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * `date.toISOString()`: the text of its second (a turn's messages are made within milliseconds
 * of each other) and of its day are kept from the previous call, so most calls only join two
 * strings. `null` for an invalid date, as `Date#toJSON` gives.
 */
function isoText(date: Date): string | null {
  const time = date.getTime();
  if (!Number.isFinite(time)) return null;
  const milli = time - secondStart;
  if (!(milli >= 0 && milli < 1000)) {
    const ms = time - dayStart;
    if (!(ms >= 0 && ms < DAY_MS)) {
      const text = date.toISOString();
      // Years 0 to 9999 only: other years are written with a sign and six digits.
      if (time < 0 || text.length !== 24) return text;
      dayStart = time - (time % DAY_MS);
      dayText = text.slice(0, 11);
    }
    const seconds = Math.floor((time - dayStart) / 1000);
    secondStart = dayStart + seconds * 1000;
    secondText = `${dayText}${twoDigits(Math.floor(seconds / 3600))}:${twoDigits(Math.floor(seconds / 60) % 60)}:${twoDigits(seconds % 60)}.`;
  }
  const at = time - secondStart;
  return secondText + (millisTexts[at] ??= `${at < 10 ? "00" : at < 100 ? "0" : ""}${at}Z`);
}

/**
 * `JSON.stringify(message)`, the same text.
 * @example
 * messageJson({ role: "user", content: "Hi", createdAt: new Date(0) }); // '{"role":"user","content":"Hi","createdAt":"1970-01-01T00:00:00.000Z"}'
 */
export function messageJson(message: unknown): string {
  const createdAt = isPlainObject(message) ? message.createdAt : undefined;
  // Only a plain Date written by Date#toJSON: a subclass or an object of its own may write itself otherwise.
  if (!(createdAt instanceof Date) || createdAt.toJSON !== Date.prototype.toJSON) return JSON.stringify(message);
  // A copy with the date as its text, in the same place among the keys: JSON.stringify then takes no detour.
  return JSON.stringify({ ...(message as Record<string, unknown>), createdAt: isoText(createdAt) });
}

/** An object literal's kind (no class, so no `toJSON` of its own to lose in a copy). */
function isPlainObject(value: unknown): value is { readonly createdAt?: unknown } {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && !Object.hasOwn(value, "toJSON");
}
