/**
 * Hiding secret values (API keys, tokens) from text that leaves the library's hands: what a
 * tool returns to the model, an error message. A server may echo a key anywhere in its answer
 * (a redirect's `?api_key=…`, a reflected `Authorization` header, a 404 page repeating the
 * URL), in the form it was sent: as written, percent-encoded, or form-encoded.
 */

/** What replaces a secret in text. @example `secretRedactor(["sk-123456"])("key sk-123456") === \`key ${REDACTED}\`` */
export const REDACTED = "***";

/**
 * Shorter values are not credentials (`en`, `2`, `json`), and hiding each of their occurrences
 * would garble the text instead of protecting anything.
 * @example `secretRedactor(["en-US"])("en-US") // "en-US": too short to hide`
 */
export const MIN_SECRET_LENGTH = 6;

/** Replaces every secret in a text by {@link REDACTED}; `longest` is the length of the longest form it hides (0: none). @example `const redact: Redactor = secretRedactor([apiKey]);` */
export interface Redactor {
  (text: string): string;
  readonly longest: number;
}

/**
 * A function that hides `secrets` in any text: each value as written, percent-encoded (upper-
 * or lower-case hex), form-encoded (`+` for a space) and JSON-escaped, and, for a header value
 * such as `Bearer sk-…`, each of its words of {@link MIN_SECRET_LENGTH} characters or more.
 * Values shorter than that are left alone.
 * @example
 * const redact = secretRedactor(["sk-live 123456"]);
 * redact("Location: /login?key=sk-live%20123456"); // "Location: /login?key=***"
 */
export function secretRedactor(secrets: Iterable<string | undefined>): Redactor {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== "string") continue;
    for (const value of [secret, ...secret.split(/\s+/)]) {
      if (value.length < MIN_SECRET_LENGTH) continue;
      for (const form of encodings(value)) forms.add(form);
    }
  }
  if (forms.size === 0) return Object.assign((text: string) => text, { longest: 0 });
  // Longest first, so that a whole value is replaced before one of its words.
  const sorted = [...forms].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(sorted.map(escapeRegExp).join("|"), "g");
  return Object.assign((text: string) => (typeof text === "string" ? text.replace(pattern, REDACTED) : text), { longest: sorted[0]?.length ?? 0 });
}

/**
 * Hides secrets in every string of a JSON-like value (object keys included), returning a copy.
 * @example redactJson({ echo: "Bearer sk-123456" }, secretRedactor(["sk-123456"])); // { echo: "Bearer ***" }
 */
export function redactJson<T>(value: T, redact: Redactor): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => redactJson(item, redact)) as T;
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [redact(key), redactJson(item as unknown, redact)])) as T;
  }
  return value;
}

/** The forms a value takes in URLs, form bodies and JSON. */
function encodings(value: string): string[] {
  if (/\p{Surrogate}/u.test(value)) return [value, JSON.stringify(value).slice(1, -1)]; // a lone surrogate has no URL form
  const percent = encodeURIComponent(value);
  const form = new URLSearchParams({ v: value }).toString().slice(2);
  const json = JSON.stringify(value).slice(1, -1);
  const lower = (encoded: string) => encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());
  return [value, percent, lower(percent), form, lower(form), json, encodeURI(value)];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Hides secrets in an error a user may print, in place (its class stays): `message`, `stack`,
 * its other own properties (an SDK error's parsed `error` body, `headers`) and its `cause`s.
 * @example
 * try { await llm.chat(params); } catch (error) { throw redactError(error, secretRedactor([apiKey])); }
 */
export function redactError<T>(error: T, redact: Redactor): T {
  if (redact.longest === 0) return error;
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return redact(value);
    if (typeof value !== "object" || value === null || seen.has(value) || depth > 8) return value;
    seen.add(value);
    if (value instanceof Headers) return new Headers([...value].map(([name, text]) => [name, redact(text)]));
    if (Array.isArray(value)) return value.map((item: unknown) => visit(item, depth + 1));
    for (const key of Object.getOwnPropertyNames(value)) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      if (!descriptor || !("value" in descriptor) || !descriptor.writable) continue;
      const redacted = visit(descriptor.value, depth + 1);
      if (redacted !== descriptor.value) (value as Record<string, unknown>)[key] = redacted;
    }
    // `cause` may be inherited or not enumerable: walked explicitly.
    if (value instanceof Error && value.cause !== undefined && !Object.hasOwn(value, "cause")) visit(value.cause, depth + 1);
    return value;
  };
  visit(error, 0);
  return error;
}
