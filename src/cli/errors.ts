/** The CLI's errors and how they reach the user: one line, no stack trace, no secret. */
import { StepflowError } from "../errors.ts";

/** A mistake in the command line: exit code 2. @example throw new UsageError("--llm must be offline or openai.") */
export class UsageError extends StepflowError { override name = "UsageError"; }

// `scheme://user:password@`: the password part, wherever a URL appears in a message.
const URL_CREDENTIALS = /\b([a-z][a-z\d+.-]*:\/\/[^\s:/?#@]*):[^\s/?#@]*@/gi;

/**
 * Masks the password of every URL in `text`, as PostgreSQL store URLs are masked.
 * @example maskCredentials("http://bob:pw@host/v1") // "http://bob:***@host/v1"
 */
export function maskCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, "$1:***@");
}

/**
 * Replaces every secret found in `env` in `text`: the OpenAI key, and the password of
 * `OPENAI_BASE_URL`, which becomes `***` as in `maskCredentials`.
 * @example
 * redact("key sk-abc", { OPENAI_API_KEY: "sk-abc" }) // "key [redacted]"
 * redact("at http://bob:pw-1234@host", { OPENAI_BASE_URL: "http://bob:pw-1234@host" }) // "at http://bob:***@host"
 */
export function redact(text: string, env: NodeJS.ProcessEnv): string {
  // Only the secrets in `env`: masking every `user:password@` would also mask the
  // "postgres://USER:PASSWORD@HOST" of our own hints.
  let result = text;
  const key = env.OPENAI_API_KEY?.trim();
  if (key && key.length >= 4) result = result.split(key).join("[redacted]");
  for (const password of urlPasswords(env.OPENAI_BASE_URL)) result = result.split(password).join("***");
  return result;
}

/** The password of `url` as written and decoded; none if it is shorter than 4 characters (it would mask ordinary text). */
function urlPasswords(url: string | undefined): string[] {
  const raw = url === undefined ? undefined : /^[a-z][a-z\d+.-]*:\/\/[^\s:/?#@]*:([^\s/?#@]*)@/i.exec(url.trim())?.[1];
  if (!raw || raw.length < 4) return [];
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // not percent-encoded: the raw form is all there is
  }
  return [...new Set([raw, decoded])];
}

/**
 * A value the user gave, quoted for an error message and cut to `max` characters, so a
 * mistaken 5,000-character argument does not fill the screen.
 * @example quoteInput("a".repeat(5000), 3) // '"aaa…" (5000 characters)'
 */
export function quoteInput(value: string, max = 40): string {
  const chars = Array.from(value); // by code point: a cut never splits a surrogate pair
  if (chars.length <= max) return JSON.stringify(value);
  return `${JSON.stringify(`${chars.slice(0, max).join("")}…`)} (${chars.length} characters)`;
}
