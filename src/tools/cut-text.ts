/**
 * A tool's answer cut to what the model should read, with a note saying so: a large answer
 * costs tokens, may not fit the model's context at all, and the model can ask for less.
 */

/**
 * `text` when it has at most `maxChars` characters and is `whole`, else its first `maxChars`
 * at most (never half a character) and a note for the model. `whole: false` says that the
 * answer went on past `text` (a body read only in part).
 * @example
 * cutForModel("x".repeat(30_000), 20_000).text.endsWith("(cut after 20000 characters; ask for less, e.g. a page or one item)"); // true
 */
export function cutForModel(text: string, maxChars: number, whole = true): { readonly text: string; readonly cut: boolean } {
  if (whole && text.length <= maxChars) return { text, cut: false };
  const kept = text.slice(0, /[\uD800-\uDBFF]/.test(text.charAt(maxChars - 1)) ? maxChars - 1 : maxChars);
  return { text: `${kept}… (cut after ${maxChars} characters; ask for less, e.g. a page or one item)`, cut: true };
}
