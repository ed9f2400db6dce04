/**
 * A tool turn as the agent runs it: for each call, the question a human must answer first (if
 * any), its idempotency key, and its result if it was finished before.
 *
 * Agent runs saved by stepflow 0.1.0 in the middle of a tool turn kept the turn in `ctx.store`
 * (`toolResults`, `approvals`, `toolCallKeys`) rather than in the engine's `ctx.once` records.
 * Such a run, restored, finishes its turn from them: finished calls are not run again, and the
 * calls put to a human are asked (again: an answer given before the save is not trusted to have
 * reached the call, and asking is the side that never runs a call unapproved).
 */
import type { ToolCall } from "@llamaindex/core/llms";
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

/**
 * One tool turn: what each call needs before it runs, and the result of a call a 0.1.0 run finished.
 * @example const result = turn.finished(call) ?? run(call, turn.approvalOf(call), turn.keyOf(call));
 */
export interface ToolTurn {
  /** The result of `call` if a run saved by 0.1.0 finished it: not run again. */
  finished(call: ToolCall): ToolSource | undefined;
  /** The `approvalId` of the question a human must answer before `call` runs, if one must. */
  approvalOf(call: ToolCall): string | undefined;
  /** The idempotency key `call` is run with: the same in every resume of the turn. */
  keyOf(call: ToolCall): string | undefined;
  /** Forgets what a 0.1.0 run saved of the turn, once the turn is in memory (nothing to wait for when there is none). */
  done(): Promise<void> | undefined;
}

/**
 * The turn of `approvals` (marked on the model's reply) and `keys` (recorded when the turn
 * started), or the turn a 0.1.0 run saved, for a reply saved without marks.
 * @example const turn = toolTurn(ctx, ev.approvals, keys);
 */
export function toolTurn(ctx: Context, approvals: ApprovalMarks | undefined, keys: Readonly<Record<string, string>>): ToolTurn {
  const legacy = approvals ? undefined : legacyTurn(ctx);
  return new Turn(legacy, approvals ?? legacy?.approvals, keys);
}

// A class, not an object of closures: every tool turn of every session makes one, and its
// methods are shared (measured with bench/turn-allocation.ts).
class Turn implements ToolTurn {
  constructor(
    private readonly legacy: LegacyTurn | undefined,
    private readonly marks: ApprovalMarks | undefined,
    private readonly keys: Readonly<Record<string, string>>,
  ) {}

  finished(call: ToolCall): ToolSource | undefined {
    return this.legacy?.results[call.id];
  }

  approvalOf(call: ToolCall): string | undefined {
    return this.marks?.[call.id];
  }

  keyOf(call: ToolCall): string | undefined {
    return this.legacy?.keys[call.id] ?? this.keys[call.id];
  }

  done(): Promise<void> | undefined {
    return this.legacy?.done();
  }
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
