/**
 * The JSON text of a chat message as a session stores it: `JSON.stringify(message)`, the same
 * text, written faster for the messages LlamaIndex's `Memory` makes. Each carries a `createdAt`
 * Date, and `JSON.stringify` calls `Date#toJSON` through its generic path: a copy holding
 * `toISOString()`'s text cuts a turn's six messages from about 10 to 7 µs. (Caching the text of
 * the day and second saved 1–2 µs more: not worth a date formatter of our own.)
 */

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
  const time = createdAt.getTime();
  return JSON.stringify({ ...(message as Record<string, unknown>), createdAt: Number.isFinite(time) ? createdAt.toISOString() : null });
}

/** An object literal's kind (no class, so no `toJSON` of its own to lose in a copy). */
function isPlainObject(value: unknown): value is { readonly createdAt?: unknown } {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && !Object.hasOwn(value, "toJSON");
}
