/**
 * The error of a streamed reply that could not be read, whichever provider sent it: the
 * server broke it off, sent what is not a stream event, or did not stream at all.
 */
import { StepflowError } from "../core/internal.ts";

/**
 * A model server's streamed reply could not be read: it broke off, an event was not a JSON
 * object, or the server did not stream at all. `baseURL` is the server, `problem`
 * which of these happened.
 * @example
 * try { await agent.run({ input }); }
 * catch (e) { if (e instanceof LLMStreamError && e.problem === "not-streaming") console.log(`check ${e.baseURL}`); }
 */
export class LLMStreamError extends StepflowError {
  override name = "LLMStreamError";
  constructor(
    message: string,
    readonly baseURL: string,
    readonly problem: "broken-off" | "not-json" | "not-object" | "not-streaming",
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * What undici says went wrong ("other side closed"), rather than fetch's bare "terminated".
 * @example networkDetail(new TypeError("terminated", { cause: socketError })); // "other side closed (UND_ERR_SOCKET)"
 */
export function networkDetail(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const detail = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && code !== "" ? `${detail} (${code})` : detail;
}

/**
 * Whether reading a response body failed because the connection went (fetch's "terminated", or
 * a socket error's code under it), rather than because of what the body said.
 * @example if (connectionLost(error)) throw new LLMStreamError(`… broke off its reply: ${networkDetail(error)}`, baseURL, "broken-off", { cause: error });
 */
export function connectionLost(error: unknown): boolean {
  return error instanceof TypeError && (error.message === "terminated" || typeof (error.cause as { code?: unknown } | undefined)?.code === "string");
}

/**
 * The error of a reply the server at `baseURL` broke off: `detail` says how.
 * @example throw brokenOff("https://api.anthropic.com", "the stream ended before its message_stop event");
 */
export function brokenOff(baseURL: string, detail: string, cause?: unknown): LLMStreamError {
  return new LLMStreamError(
    `The server at ${baseURL} broke off its reply: ${detail}. Try again; if it happens again, check the server and the network between.`,
    baseURL,
    "broken-off",
    cause === undefined ? undefined : { cause },
  );
}
