/**
 * The one test for "an object whose keys can be read": not null, not an array. Arrays are
 * objects too, and `typeof null === "object"`; both would be wrong answers where a value is
 * parsed from JSON or a store.
 */

/**
 * True when `value` is an object other than null or an array, so its keys can be read.
 * @example
 * isRecord({ a: 1 }); // true
 * isRecord([1]); // false
 * isRecord(null); // false
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
