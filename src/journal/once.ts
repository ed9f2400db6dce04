/** Doing a piece of work with a side effect at most once per key, whoever asks and however often. */
import type { Context, Journal, OnceResult } from "../core/internal.ts";
import { journalOf } from "../core/internal.ts";

export type { OnceResult } from "../core/internal.ts";

/**
 * Runs `work` unless the journal has a record under `key`; its result must be JSON. Inside a
 * step, prefer `ctx.once(name, work)`: the engine scopes the name to the run and the step
 * execution, and saves the result with the context. This function remains for work outside
 * steps, keyed by the caller. Pass a key
 * that a resumed run computes the same way, e.g. one kept in `ctx.store` before the work starts.
 * A `work` that throws leaves its key "started": it may have taken effect before failing.
 * @example
 * const key = await ctx.store.get<string>("refundKey");
 * const refund = await once(ctx, key, () => payments.refund(order));
 * if (refund.status === "unknown") return new StopEvent({ result: "Check the refund by hand." });
 */
export async function once<T>(target: Context | Journal, key: string, work: () => T | Promise<T>): Promise<OnceResult<T>> {
  const journal = "begin" in target ? target : journalOf(target);
  const claim = await journal.begin(key);
  if (!claim.claimed) return claim.entry.state === "finished" ? { status: "recorded", value: JSON.parse(claim.entry.result) as T } : { status: "unknown" };
  const value = await work();
  await journal.finish(key, JSON.stringify(value ?? null));
  return { status: "ran", value };
}
