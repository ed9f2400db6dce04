/**
 * The context's key–value store: what steps remember across steps and across runs.
 * Keys may be dot paths (`"user.name"`). The methods are async so that a store kept
 * elsewhere (a database) can stand behind the same interface.
 */
import { StateValidationError, StoreKeyError } from "./errors.ts";
import { isRecord } from "./is-record.ts";
import type { Journal } from "./journal/types.ts";

/**
 * `store[storeJournal]`: the journal `useJournal` gave the contexts that share this store
 * (journal/context-journal.ts). Not exported by the package.
 * @example store[storeJournal] = journal;
 */
export const storeJournal: unique symbol = Symbol("stepflow.store.journal");

/**
 * A schema that checks and completes a typed state: any object with zod's `safeParse`
 * (a `z.object({...})`, defaults included), so the engine does not depend on one zod version.
 * @example
 * const CounterState = z.object({ count: z.number().default(0) });
 * new Workflow({ state: CounterState });
 */
export interface StateSchema<S extends object> {
  safeParse(value: unknown): { success: true; data: S } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

/**
 * The function given to `ctx.store.edit`. Method-shaped, so that its parameter is checked
 * bivariantly and a `Context<MyState>` stays usable where a plain `Context` is expected.
 * @example
 * const bump: StateEditor<{ count: number }> = (s) => { s.count++; };
 */
export type StateEditor<S> = { bivarianceHack(state: S): S | void | Promise<S | void> }["bivarianceHack"];

/** The keys `get`/`set` check against a typed state; none for the untyped default (any string goes). @example `const key: StateKey<{ count: number }> = "count";` */
export type StateKey<S> = string extends keyof S ? never : keyof S & string;
/** The key type of the untyped `get`/`set`: any string on an untyped store, nothing on a typed one. @example `const key: UntypedKey<Record<string, unknown>> = "user.name";` */
export type UntypedKey<S> = string extends keyof S ? string : never;

type Plain = Record<string, unknown>;

/**
 * @example
 * await ctx.store.set("user.name", "Logan");
 * await ctx.store.get<string>("user.name"); // "Logan"
 * await ctx.store.get("missing", 0);        // 0
 */
// `out`: a Context<MyState> must be usable where a Context is expected (a step's parameter,
// run({ ctx })). TypeScript cannot prove it through the conditional key types of get/set, and
// a wrong key or value is refused at run time by the schema anyway.
// @ts-expect-error TS2636: the variance is declared, not measured (see above).
export class ContextStore<out S extends object = Record<string, unknown>> {
  #data: Plain;
  // Not StateSchema<S>: a field typed by S would make Context<MyState> unusable where a Context is expected.
  readonly #schema: StateSchema<object> | undefined;
  /** The end of the chain of `edit` calls: each edit starts when the one before has finished. */
  #lastEdit: Promise<unknown> = Promise.resolve();
  /** Set by `useJournal`: a field, where a WeakMap keyed by the store cost each run's context an entry (an ephemeron the collector tracks). */
  [storeJournal]: Journal | undefined = undefined;

  /** `schema`: checks the state after each `set` and `edit`, and fills in its defaults now. */
  constructor(initial: Plain = {}, schema?: StateSchema<S>) {
    this.#schema = schema;
    this.#data = schema ? (checkState(schema, initial, "The initial state") as Plain) : initial;
  }

  /** The value at `key` of a typed state. */
  async get<K extends StateKey<S>>(key: K): Promise<S[K]>;
  /** The value at `key` (a name or a dot path); `fallback` when there is none, else a `StoreKeyError`. */
  async get<T = unknown>(key: UntypedKey<S>, ...fallback: [T?]): Promise<T>;
  async get<T = unknown>(key: string, ...fallback: [T?]): Promise<T> {
    const found = this.#lookup(key);
    if (found.exists) return found.value as T;
    if (fallback.length > 0) return fallback[0] as T;
    throw new StoreKeyError(`The context store has no key "${key}". Set it first, or pass a default: ctx.store.get("${key}", defaultValue).`);
  }

  /** Stores `value` at `key` of a typed state; a value the schema refuses is a `StateValidationError`, and nothing changes. */
  async set<K extends StateKey<S>>(key: K, value: S[K]): Promise<void>;
  /** Stores `value` at `key`, creating the objects on a dot path as needed. */
  async set(key: UntypedKey<S>, value: unknown): Promise<void>;
  async set(key: string, value: unknown): Promise<void> {
    if (this.#schema) {
      if (splitKey(key).length > 1)
        throw new StoreKeyError(`Cannot set "${key}": a typed state is set by its top-level keys. Change nested values with ctx.store.edit((state) => { … }).`);
      // Checked on a copy, so a refused value leaves the state as it was.
      this.#data = checkState(this.#schema, { ...this.#data, [key]: value }, `Setting "${key}" gives a state that`) as Plain;
      return;
    }
    const parts = splitKey(key);
    const last = parts.pop() as string;
    let node = this.#data;
    for (const part of parts) {
      const next = Object.hasOwn(node, part) ? node[part] : undefined; // not Object.prototype's "constructor"
      if (next === undefined) node = node[part] = {};
      else if (isRecord(next)) node = next;
      else throw new StoreKeyError(`Cannot set "${key}": "${part}" holds a ${typeof next}, not an object.`);
    }
    node[last] = value;
  }

  /** Whether a value is stored at `key`. */
  async has(key: string): Promise<boolean> {
    return this.#lookup(key).exists;
  }

  /** Removes `key`; true when something was removed. */
  async delete(key: string): Promise<boolean> {
    const parts = splitKey(key);
    const last = parts.pop() as string;
    const parent = parts.length ? this.#lookup(parts.join(".")) : { exists: true, value: this.#data };
    if (!parent.exists || !isRecord(parent.value) || !Object.hasOwn(parent.value, last)) return false;
    delete parent.value[last];
    return true;
  }

  /**
   * Removes every key (a typed state goes back to its schema's defaults).
   * @example
   * await ctx.store.clear();
   * await ctx.store.get("user", null); // null
   */
  async clear(): Promise<void> {
    this.#data = this.#schema ? (checkState(this.#schema, {}, "Clearing gives a state that") as Plain) : {};
  }

  /**
   * Reads, changes and writes the state as one step: edits run one at a time, in call order,
   * so concurrent edits from parallel steps never lose an update, even when `fn` awaits.
   * `fn` changes the state it is given, or returns a new one; with a schema the result is
   * checked, and a refused state (or an error thrown by `fn`) leaves the store as it was
   * before the edit, for changes of top-level keys (`fn` gets a shallow copy). Resolves to
   * the new state. Do not call `edit` inside `fn`: it would wait for itself.
   * @example
   * await ctx.store.edit((state) => { state.count = (state.count ?? 0) + 1; });
   * const { count } = await ctx.store.edit(async (s) => ({ ...s, count: s.count + 1 }));
   */
  edit(fn: StateEditor<S>): Promise<S> {
    const next = this.#lastEdit.then(async () => {
      const draft = { ...this.#data } as S;
      const result = (await fn(draft)) ?? draft;
      if (typeof result !== "object" || result === null || Array.isArray(result)) {
        throw new StoreKeyError(
          `ctx.store.edit: the function returned ${result === null ? "null" : Array.isArray(result) ? "an array" : typeof result}; change the state it is given, or return the new state object.`,
        );
      }
      this.#data = (this.#schema ? checkState(this.#schema, result, "The edit gives a state that") : result) as Plain;
      return this.#data as S;
    });
    // A failed edit must not stop the ones queued after it.
    this.#lastEdit = next.catch(() => {});
    return next;
  }

  /** The whole store as one object (live, not a copy): for serialization. */
  entries(): Readonly<Plain> {
    return this.#data;
  }

  #lookup(key: string): { exists: boolean; value?: unknown } {
    let node: unknown = this.#data;
    for (const part of splitKey(key)) {
      if (!isRecord(node) || !Object.hasOwn(node, part)) return { exists: false };
      node = node[part];
    }
    return { exists: true, value: node };
  }
}

/** `what` starts the message: "The initial state", or "Setting \"count\" gives a state that". */
function checkState<S extends object>(schema: StateSchema<S>, value: unknown, what: string): S {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.map(String).join(".") || "(the state)"}: ${issue.message}`);
  const unchanged = what === "The initial state" ? "" : " The state was left as it was.";
  throw new StateValidationError(`${what} does not match the state schema: ${problems.join("; ")}.${unchanged}`);
}

function splitKey(key: string): string[] {
  if (typeof key === "string" && key.length > 0 && !key.includes(".") && key !== "__proto__") return [key]; // the common case, checked cheaply
  if (typeof key !== "string" || key.length === 0 || key.split(".").some((p) => p.length === 0)) {
    throw new StoreKeyError(`Invalid store key ${JSON.stringify(key)}: use a non-empty name or dot path like "user.name".`);
  }
  const parts = key.split(".");
  // Setting "__proto__" replaces an object's prototype: a key built from user input could change every object's.
  if (parts.includes("__proto__")) throw new StoreKeyError(`Invalid store key ${JSON.stringify(key)}: "__proto__" cannot be part of a key.`);
  return parts;
}
