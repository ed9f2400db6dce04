/**
 * The context's key–value store: what steps remember across steps and across runs.
 * Keys may be dot paths (`"user.name"`). The methods are async so that a store kept
 * elsewhere (a database) can stand behind the same interface.
 */
import { StoreKeyError } from "./errors.ts";

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * @example
 * await ctx.store.set("user.name", "Logan");
 * await ctx.store.get<string>("user.name"); // "Logan"
 * await ctx.store.get("missing", 0);        // 0
 */
export class ContextStore {
  #data: Plain;

  constructor(initial: Plain = {}) {
    this.#data = initial;
  }

  /** The value at `key`; `fallback` when there is none, else a `StoreKeyError`. */
  async get<T = unknown>(key: string, ...fallback: [T?]): Promise<T> {
    const found = this.#lookup(key);
    if (found.exists) return found.value as T;
    if (fallback.length > 0) return fallback[0] as T;
    throw new StoreKeyError(`The context store has no key "${key}". Set it first, or pass a default: ctx.store.get("${key}", defaultValue).`);
  }

  /** Stores `value` at `key`, creating the objects on a dot path as needed. */
  async set(key: string, value: unknown): Promise<void> {
    const parts = splitKey(key);
    const last = parts.pop() as string;
    let node = this.#data;
    for (const part of parts) {
      const next = Object.hasOwn(node, part) ? node[part] : undefined; // not Object.prototype's "constructor"
      if (next === undefined) node = node[part] = {};
      else if (isPlain(next)) node = next;
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
    if (!parent.exists || !isPlain(parent.value) || !Object.hasOwn(parent.value, last)) return false;
    delete parent.value[last];
    return true;
  }

  /** The whole store as one object (live, not a copy): for serialization. */
  entries(): Readonly<Plain> {
    return this.#data;
  }

  #lookup(key: string): { exists: boolean; value?: unknown } {
    let node: unknown = this.#data;
    for (const part of splitKey(key)) {
      if (!isPlain(node) || !Object.hasOwn(node, part)) return { exists: false };
      node = node[part];
    }
    return { exists: true, value: node };
  }
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
