/**
 * The saved context format: what `ctx.toJSON()` writes and `Context.fromJSON()` reads, with a
 * version and a shape check (`context-check.ts`). Contexts saved by older versions are migrated first
 * (`context-format-migrations.ts`), so a stored conversation survives upgrades.
 */
import { ContextShapeError, checkContextShape } from "./context-check.ts";
import { migrateContextJSON } from "./context-format-migrations.ts";
import type { WorkflowShape } from "./context-format-migrations.ts";
import { ContextSerdeError } from "./serialize.ts";
import type { Json, SavedEvent } from "./serialize.ts";
import type { SavedOnceRecord } from "./step-once.ts";

/**
 * The format version `toJSON` writes; `fromJSON` reads this and every older one.
 * 1: the first; 2: `collectEvents` buffers per step (`run.collected[step][bufferId]`);
 * 3: each queued and in-flight event carries its step execution's id (`execution`), and
 * `run.once` keeps the `ctx.once` records of those executions.
 * @example
 * if (saved.version < CONTEXT_FORMAT_VERSION) console.log("saved by an older stepflow; it is migrated on load");
 */
export const CONTEXT_FORMAT_VERSION = 3;

/** An event given to a step, with the id of that step execution (absent before format 3). @example `{ type: "StartEvent", data: {}, execution: "1f0c9a2e.1" }` */
export interface SavedDelivery extends SavedEvent {
  readonly execution?: string;
}

/** The part of a saved context that describes a run in progress (plain JSON). @example `context.run?.queued` */
export interface SavedRun {
  /** The run's id (`handler.runId`): a resumed run keeps it. Absent in contexts saved before it existed. */
  readonly runId?: string;
  /** Events waiting for a worker, per step. */
  readonly queued: Record<string, SavedDelivery[]>;
  /** Events whose step was executing; on resume the step runs again from this event, as the same execution. */
  readonly inFlight: Record<string, SavedDelivery[]>;
  /** `ctx.once` records of the executions in `queued` and `inFlight`: execution id → name → record. */
  readonly once?: Record<string, Record<string, SavedOnceRecord>>;
  /** `collectEvents` buffers: per step, per buffer id (by default the list of type names). */
  readonly collected: Record<string, Record<string, SavedEvent[]>>;
  /** Events sent that no step or waiter has taken yet. */
  readonly unclaimed: SavedEvent[];
  /** What `waitForEvent` calls were waiting for (informational: re-run steps wait again). */
  readonly waiters: { readonly type: string; readonly requirements: Json }[];
}

/**
 * A saved context: plain JSON, safe to store anywhere.
 * @example
 * const saved: ContextJSON = ctx.toJSON();
 * saved.version; // 3
 */
export interface ContextJSON {
  readonly version: number;
  /** The workflow class it was saved from. */
  readonly workflow: string;
  /** The store, with non-JSON values encoded by their codecs. */
  readonly store: { [key: string]: Json };
  /** Whether a run was in progress: passing the restored context to `run()` continues it. */
  readonly running: boolean;
  readonly run: SavedRun | null;
}

/**
 * Reads a saved context (the object or its JSON text) of any supported version: parses it,
 * migrates it to the current format and checks it against the schema. Throws
 * `ContextSerdeError` naming the path of the first bad field.
 */
export function readContextJSON(json: ContextJSON | string, workflow: WorkflowShape): ContextJSON {
  let data: unknown = json;
  if (typeof json === "string") {
    try {
      data = JSON.parse(json);
    } catch (error) {
      throw new ContextSerdeError(`Cannot restore the context: the saved text is not valid JSON (${(error as Error).message}).`, { cause: error });
    }
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new ContextSerdeError(
      `Cannot restore the context: expected the object ctx.toJSON() returns, got ${Array.isArray(data) ? "an array" : data === null ? "null" : typeof data}.`,
    );
  }
  const record = data as Record<string, unknown>;
  if (typeof record.version !== "number" || !Number.isInteger(record.version) || record.version < 1) {
    throw new ContextSerdeError(`Cannot restore the context: "version" is missing; this is not a saved stepflow context.`, { path: "version" });
  }
  if (record.version > CONTEXT_FORMAT_VERSION) {
    throw new ContextSerdeError(
      `Cannot restore the context: it was saved in format version ${record.version} by a newer stepflow; this one reads up to version ${CONTEXT_FORMAT_VERSION}. Upgrade stepflow.`,
      { path: "version" },
    );
  }
  if (record.running === true && (typeof record.run !== "object" || record.run === null)) {
    throw new ContextSerdeError(`Cannot restore the context: "running" is true but "run" is missing.`, { path: "run" });
  }
  // Restored, it would replace the store's prototype.
  if (typeof record.store === "object" && record.store !== null && Object.hasOwn(record.store, "__proto__")) {
    throw new ContextSerdeError(`Cannot restore the context: store key "__proto__" cannot be restored (it would replace the store's prototype).`, {
      path: "store.__proto__",
    });
  }
  const current = migrateContextJSON(record, workflow);
  let result: ContextJSON;
  try {
    result = checkContextShape(current, CONTEXT_FORMAT_VERSION) as unknown as ContextJSON;
  } catch (error) {
    if (!(error instanceof ContextShapeError)) throw error;
    const path = formatPath(error.path);
    throw new ContextSerdeError(
      `Cannot restore the context: ${path} ${error.problem}. The saved context was changed or damaged; restore it from a copy saved by ctx.toJSON(), or start over with a new Context.`,
      { path },
    );
  }
  return result.running ? result : { ...result, run: null };
}

/** `run.queued["slow step"][0].type`: the path as JavaScript would reach it. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (typeof part === "string" && /^[A-Za-z_$][\w$]*$/.test(part)) out += out === "" ? part : `.${part}`;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out === "" ? "the saved context" : out;
}
