/**
 * `ctx.once`: work with a side effect done at most once per step execution, however often the
 * run is saved, restored and resumed. The run keeps each execution's records (saved with the
 * context); the context's journal is asked first when a record is missing, so that two resumes
 * of one saved run, in two processes, never both do the work.
 *
 * The journal is asked only for an execution another attempt at the run could also be doing:
 * one restored from a saved context, or one a save included, and those they lead to (whose ids
 * are made from theirs, alike in every attempt: run-transitions.ts). Any other execution's id (and so
 * its keys) never left this process, so no one else can claim its work: its records are
 * enough, and a turn spends no round trips on a shared journal. An execution a save includes
 * while its work runs unclaimed gets the result written to the journal when the work ends
 * (`Journal.finish` records a key it never began), where a restorer that asks finds it.
 */
import { ContextStateError } from "./errors.ts";
import type { Journal, JournalClaim } from "./journal/types.ts";
import { decodeValue, encodeValue } from "./serialize.ts";
import type { Codecs, Json } from "./serialize.ts";
import { OnceRecords } from "./once-records.ts";

/**
 * What `ctx.once` did: ran the work now, found its recorded result, or found it started by an
 * earlier attempt without a result (it may or may not have taken effect), and did not run it.
 * @example
 * const charge = await ctx.once("charge", () => payments.charge(order));
 * if (charge.status === "unknown") return new StopEvent({ result: "Check the charge by hand." });
 */
export type OnceResult<T> = { readonly status: "ran"; readonly value: T } | { readonly status: "recorded"; readonly value: T } | { readonly status: "unknown" };

/**
 * Options of `ctx.once`.
 * @example
 * await ctx.once("fetch-quote", () => quotes.get(id), { rerunUnfinished: true }); // safe to repeat
 */
export interface OnceOptions {
  /**
   * Run the work again when an earlier attempt started it and recorded no result (the process
   * stopped mid-way, or the run was saved while it ran), instead of answering `unknown`. For
   * work that is safe to repeat. Default `false`.
   */
  readonly rerunUnfinished?: boolean;
}

/** One `once` name of one step execution: started (by this attempt, or an earlier one), or finished with its result. */
export type OnceRecord = { readonly state: "started"; readonly live?: true } | { readonly state: "finished"; readonly value: Json };

/** A record as saved in a context. @example `{ state: "finished", value: { id: "ch_1" } }` */
export type SavedOnceRecord = { readonly state: "started" } | { readonly state: "finished"; readonly value: Json };

/**
 * What `once` needs of the run: the execution's records, where to claim, and whether the run has
 * ended. Methods, so that the run can give a class instance (one object per call, no closures).
 */
export interface OnceScope {
  readonly records: OnceRecords;
  readonly journal: Journal;
  /** The workflow's codecs, for results that are not plain JSON. */
  readonly codecs: Codecs;
  /** The journal key of `name`: scoped to the run and the execution. */
  key(name: string): string;
  /**
   * Whether another attempt at the run could know this execution's keys (it was restored, or a
   * save included it); only then is the journal asked. Once true, it stays true.
   */
  shared(): boolean;
  /** The reason the run ended (a step left running may still call `once`), or `undefined` while it goes on. */
  ended(): { readonly reason: unknown } | undefined;
}

// Records without a result are all alike: shared rather than made at each call.
const LIVE: OnceRecord = Object.freeze({ state: "started", live: true });
const STARTED: OnceRecord = Object.freeze({ state: "started" });

const MAX_NAME = 200;

/**
 * Runs `work` unless the execution's records or the journal say it ran or started before.
 * Not `async`: when nothing is recorded and the journal answers at once, the only promise is
 * the one returned (the agent's tool calls go through here).
 */
export function runOnce<T>(scope: OnceScope, name: string, work: () => T | Promise<T>, options: OnceOptions | undefined): Promise<OnceResult<T>> {
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_NAME) {
    return Promise.reject(
      new ContextStateError(
        `ctx.once: the name must be 1 to ${MAX_NAME} characters, like "charge"; got ${typeof name === "string" ? `${name.length} characters` : typeof name}. It only has to be unique within the step.`,
      ),
    );
  }
  if (typeof work !== "function")
    return Promise.reject(new ContextStateError(`ctx.once("${name}"): the work must be a function, like () => payments.charge(order); got ${typeof work}.`));
  const record = scope.records.get(name);
  if (record?.state === "finished") return Promise.resolve({ status: "recorded", value: decodeValue(record.value, `ctx.once("${name}")`, scope.codecs) as T });
  if (record?.state === "started" && record.live) {
    return Promise.reject(
      new ContextStateError(
        `ctx.once("${name}") was called again while the first call is still running in this step. Await the first call, or give each piece of work its own name.`,
      ),
    );
  }
  // Live while the journal is asked, too: a second call with this name meanwhile is the same mistake.
  scope.records.set(name, LIVE);
  // Nobody else can know the key: claimed by this execution alone, with no journal round trip.
  if (!scope.shared()) return decide(scope, name, undefined, CLAIMED, record, work, options);
  const key = scope.key(name);
  let claim: JournalClaim | PromiseLike<JournalClaim>;
  try {
    claim = scope.journal.begin(key);
  } catch (error) {
    restore(scope, name, record);
    return Promise.reject(error);
  }
  if (isPromiseLike(claim)) return decideWhenClaimed(scope, name, key, claim, record, work, options);
  return decide(scope, name, key, claim, record, work, options);
}

const CLAIMED: JournalClaim = Object.freeze({ claimed: true });

/** Puts back the record `name` had before this call (none, or an earlier attempt's). */
function restore(scope: OnceScope, name: string, before: OnceRecord | undefined): void {
  if (before) scope.records.set(name, before);
  else scope.records.delete(name);
}

/** `decide`, once the journal answers; a function of its own, so that its closures cost only the calls that ask a journal. */
function decideWhenClaimed<T>(
  scope: OnceScope,
  name: string,
  key: string,
  claim: PromiseLike<JournalClaim>,
  before: OnceRecord | undefined,
  work: () => T | Promise<T>,
  options: OnceOptions | undefined,
): Promise<OnceResult<T>> {
  return Promise.resolve(claim).then(
    (settled) => decide(scope, name, key, settled, before, work, options),
    (error: unknown) => {
      restore(scope, name, before);
      throw error;
    },
  );
}

/** `key`: the journal key claimed, or `undefined` when the journal was not asked; `before`: the record `name` had before this call. */
function decide<T>(
  scope: OnceScope,
  name: string,
  key: string | undefined,
  claim: JournalClaim,
  before: OnceRecord | undefined,
  work: () => T | Promise<T>,
  options: OnceOptions | undefined,
): Promise<OnceResult<T>> {
  const rerun = options?.rerunUnfinished === true;
  if (!claim.claimed && claim.entry.state === "finished") {
    let value: Json;
    try {
      value = JSON.parse(claim.entry.result) as Json;
    } catch (error) {
      return Promise.reject(
        new ContextStateError(
          `ctx.once("${name}"): the journal ${scope.journal.description} holds a result under "${key}" that is not JSON. Remove that entry, or use another journal.`,
          { cause: error },
        ),
      );
    }
    scope.records.set(name, { state: "finished", value });
    return Promise.resolve({ status: "recorded", value: decodeValue(value, `ctx.once("${name}")`, scope.codecs) as T });
  }
  // Started before, by an earlier attempt at this run (its record says so) or by anyone (the journal does).
  if ((before !== undefined || !claim.claimed) && !rerun) {
    scope.records.set(name, STARTED);
    return Promise.resolve({ status: "unknown" });
  }
  const ended = scope.ended();
  if (ended) {
    restore(scope, name, before);
    // The run ended while the claim was written: the work never started, so a later attempt may do it.
    if (claim.claimed && key !== undefined) {
      const released = scope.journal.release(key);
      if (isPromiseLike(released)) return Promise.resolve(released).then(() => Promise.reject(ended.reason));
    }
    return Promise.reject(ended.reason);
  }
  let output: T | Promise<T>;
  try {
    output = work();
  } catch (error) {
    // It may have taken effect before throwing: the record stays "started".
    scope.records.set(name, STARTED);
    return Promise.reject(error);
  }
  if (isPromiseLike(output)) {
    return Promise.resolve(output).then(
      (value) => finish(scope, name, value),
      (error: unknown) => {
        scope.records.set(name, STARTED);
        throw error;
      },
    );
  }
  try {
    return Promise.resolve(finish(scope, name, output));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Records the result; in the journal too if the execution is shared now, even if it was not
 * when the work began. Throws, and answers a promise only when the journal does: returned from
 * a `then` callback, a promise would cost its adoption (two more promises and microtasks).
 */
function finish<T>(scope: OnceScope, name: string, value: T): OnceResult<T> | Promise<OnceResult<T>> {
  let json: Json;
  try {
    json = encodeValue(value ?? null, `the result of ctx.once("${name}")`, scope.codecs);
  } catch (error) {
    scope.records.set(name, STARTED);
    throw error;
  }
  scope.records.set(name, { state: "finished", value: json });
  const result: OnceResult<T> = { status: "ran", value };
  if (!scope.shared()) return result;
  const finished = scope.journal.finish(scope.key(name), JSON.stringify(json));
  return isPromiseLike(finished) ? Promise.resolve(finished).then(() => result) : result;
}

/** The records of an execution as saved JSON; a record of this attempt's work in progress is saved as started. */
export function saveOnceRecords(records: Iterable<[string, OnceRecord]>): Record<string, SavedOnceRecord> {
  const out: Record<string, SavedOnceRecord> = {};
  for (const [name, record] of records) out[name] = record.state === "finished" ? { state: "finished", value: record.value } : { state: "started" };
  return out;
}

/** Saved records as an execution's live ones (none of them this attempt's). */
export function restoreOnceRecords(saved: Readonly<Record<string, SavedOnceRecord>> | OnceRecords | undefined): OnceRecords {
  const records = new OnceRecords();
  if (!saved) return records;
  const entries = saved instanceof OnceRecords ? [...saved] : Object.entries(saved as Record<string, SavedOnceRecord>);
  for (const [name, record] of entries) records.set(name, record.state === "finished" ? { state: "finished", value: record.value } : STARTED);
  return records;
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === "function";
}
