/**
 * Whether a value can go in an HTTP header: fetch takes Latin-1 without control characters and
 * fails on anything else with "Cannot convert argument to a ByteString", which names neither
 * the setting nor the character. API keys go in headers, so the answer never holds the value.
 */

/**
 * What makes `value` unsendable in a header, by position and code point only (the value may be
 * a key), or `undefined` when it can be sent.
 * @example
 * headerValueProblem("sk-ab✓"); // "character 6 of 6 is U+2713"
 * headerValueProblem("sk-abc"); // undefined
 */
export function headerValueProblem(value: string): string | undefined {
  const chars = Array.from(value);
  const bad = chars.findIndex((ch) => /[^\u0020-\u007e\u0080-\u00ff]/.test(ch));
  if (bad < 0) return undefined;
  const code = (chars[bad] as string).codePointAt(0) as number;
  return `character ${bad + 1} of ${chars.length} is U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** What to tell a person whose key has such a character. */
export const COPY_AGAIN = "Copy the value again; an editor may have put in a curly quote, a dash or a line break.";
