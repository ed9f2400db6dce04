/**
 * Agent runs saved by stepflow 0.1.0 in the middle of a tool turn kept the turn in `ctx.store`
 * (`toolResults`, `approvals`, `toolCallKeys`) rather than in the engine's `ctx.once` records.
 * Such a run, restored, finishes its turn from them: finished calls are not run again, and the
 * calls put to a human are asked (again: an answer given before the save is not trusted to have
 * reached the call, and asking is the side that never runs a call unapproved).
 */
import type { Context } from "../src/index.ts";
import type { ToolSource } from "../src/tools/tool-calls.ts";
import type { ApprovalMarks } from "./tool-approval.ts";

const KEYS = ["toolResults", "approvals", "toolCallKeys"] as const;

/**
 * The turn a 0.1.0 run saved: results by call id, the question id of each call put to a human,
 * and each call's idempotency key. `done()` removes the keys once the turn is in memory.
 * @example
 * const legacy = legacyTurn(ctx);
 * const result = legacy?.results[call.id];
 */
export interface LegacyTurn {
  readonly results: Readonly<Record<string, ToolSource>>;
  readonly approvals: ApprovalMarks;
  readonly keys: Readonly<Record<string, string>>;
  done(): Promise<void>;
}

/**
 * The turn a context saved by 0.1.0 holds, or `undefined` (always, for contexts saved since):
 * read without an await, as every tool turn asks.
 * @example const legacy = legacyTurn(ctx);
 */
export function legacyTurn(ctx: Context): LegacyTurn | undefined {
  const store = ctx.store.entries();
  if (!KEYS.some((key) => Object.hasOwn(store, key))) return undefined;
  const approvals: Record<string, string> = {};
  for (const [callId, pending] of Object.entries(record(store.approvals))) {
    const id = (pending as { id?: unknown } | null)?.id;
    if (typeof id === "string") approvals[callId] = id;
  }
  return {
    results: record(store.toolResults) as Record<string, ToolSource>,
    approvals,
    keys: record(store.toolCallKeys) as Record<string, string>,
    async done() {
      for (const key of KEYS) await ctx.store.delete(key);
    },
  };
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
