/** The CLI's errors and how they reach the user: one line, no stack trace, no secret. */
import { StepflowError } from "../errors.ts";

export { maskCredentials, quoteInput } from "../user-text.ts";

/** A mistake in the command line: exit code 2. @example throw new UsageError("--llm must be offline or openai.") */
export class UsageError extends StepflowError { override name = "UsageError"; }

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
