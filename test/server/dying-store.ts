/** A store that fails every write from a moment on, as the store of a server process killed then would. */
import type { SessionStore } from "../../src/sessions/types.ts";

/**
 * The SQLite store of a server process that can die: after `die()` it writes nothing (each save,
 * and each write to its journal, fails), as a process killed at that moment would. Reads still
 * work (they change nothing).
 * @example const dying = dyingStore(sqlite); dying.die(); // saves now reject
 */
export function dyingStore(store: SessionStore): { store: SessionStore; die: () => void } {
  let dead = false;
  const writes = new Set<PropertyKey>(["save", "begin", "finish", "release"]);
  const dying = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(of, property) {
        if (dead && writes.has(property)) return () => Promise.reject(new Error("the server process is gone"));
        const value = Reflect.get(of, property, of) as unknown;
        if (property === "journal" && typeof value === "object" && value !== null) return dying(value);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(of) : value;
      },
    });
  return { store: dying(store), die: () => (dead = true) };
}
