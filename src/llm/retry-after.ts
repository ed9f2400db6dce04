/**
 * How long a provider asked the caller to wait before trying again (a 429 or 503 answer): its
 * `Retry-After` header, or the `RetryInfo` detail with `retryDelay` that Google's APIs put in
 * the error body. The Anthropic and OpenAI SDKs keep the response's headers on their errors;
 * Google's SDK keeps neither, so the Gemini class puts both on the error itself.
 */

/**
 * Seconds the server asked to wait before the request is sent again, read from an error a
 * model class threw: its `retryAfter` (Gemini's errors), else its `headers` (`retry-after-ms`,
 * then `retry-after`, in seconds or as an HTTP date), as the Anthropic and OpenAI SDKs keep
 * them. `undefined` when the server did not say.
 * @example
 * try { await agent.run({ input }); }
 * catch (e) { const wait = retryAfter(e); if (wait !== undefined) console.log(`try again in ${wait} s`); }
 */
export function retryAfter(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { retryAfter: seconds, headers } = error as { retryAfter?: unknown; headers?: unknown };
  if (typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0) return seconds;
  return headers instanceof Headers ? headerDelay(headers) : undefined;
}

/**
 * The delay `headers` ask for: `retry-after-ms` (milliseconds), else `retry-after` (seconds, or
 * an HTTP date, counted from `now`), in seconds.
 * @example headerDelay(new Headers({ "retry-after": "7" })); // 7
 */
export function headerDelay(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/**
 * The `retryDelay` of a `google.rpc.RetryInfo` detail in a Google API error body (a Duration
 * such as `"37s"` or `"0.5s"`), in seconds; `text` may have words before the JSON, as the
 * Gemini SDK's messages have.
 * @example bodyRetryDelay('{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}'); // 37
 */
export function bodyRetryDelay(text: string): number | undefined {
  const start = text.indexOf("{");
  if (start < 0) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text.slice(start));
  } catch {
    return undefined;
  }
  const details = (body as { error?: { details?: unknown } } | null)?.error?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details as { "@type"?: unknown; retryDelay?: unknown }[]) {
    if (typeof detail?.["@type"] !== "string" || !detail["@type"].endsWith("google.rpc.RetryInfo")) continue;
    const delay = /^(\d+(?:\.\d+)?)s$/.exec(String(detail.retryDelay ?? "").trim());
    if (delay) return Number(delay[1]);
  }
  return undefined;
}
