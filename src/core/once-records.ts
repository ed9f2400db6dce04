/**
 * The `ctx.once` records of one step execution, by name. Most executions make one or two (the
 * agent's: a reply; a tool turn and its call), so the first two live in fields and a `Map` is
 * made only for a third: a `Map` for every execution that calls `ctx.once` was about 200 bytes,
 * 1.2 KB of an agent turn's 60 (bench/turn-allocation.ts).
 */
import type { OnceRecord } from "./step-once.ts";

/**
 * A `Map` of name to record, as far as `ctx.once` and saving use one.
 * @example
 * const records = new OnceRecords();
 * records.set("charge", { state: "started" });
 * records.get("charge"); // { state: "started" }
 */
export class OnceRecords implements Iterable<[string, OnceRecord]> {
  #name0: string | undefined;
  #record0: OnceRecord | undefined;
  #name1: string | undefined;
  #record1: OnceRecord | undefined;
  #more: Map<string, OnceRecord> | undefined;

  /** How many names have a record. */
  get size(): number {
    return (this.#name0 === undefined ? 0 : 1) + (this.#name1 === undefined ? 0 : 1) + (this.#more?.size ?? 0);
  }

  get(name: string): OnceRecord | undefined {
    if (name === this.#name0) return this.#record0;
    if (name === this.#name1) return this.#record1;
    return this.#more?.get(name);
  }

  set(name: string, record: OnceRecord): this {
    if (name === this.#name0) this.#record0 = record;
    else if (name === this.#name1) this.#record1 = record;
    else if (this.#more?.has(name)) this.#more.set(name, record);
    else if (this.#name0 === undefined) {
      this.#name0 = name;
      this.#record0 = record;
    } else if (this.#name1 === undefined) {
      this.#name1 = name;
      this.#record1 = record;
    } else (this.#more ??= new Map()).set(name, record);
    return this;
  }

  delete(name: string): boolean {
    if (name === this.#name0) this.#name0 = this.#record0 = undefined;
    else if (name === this.#name1) this.#name1 = this.#record1 = undefined;
    else return this.#more?.delete(name) ?? false;
    return true;
  }

  *[Symbol.iterator](): IterableIterator<[string, OnceRecord]> {
    if (this.#name0 !== undefined) yield [this.#name0, this.#record0 as OnceRecord];
    if (this.#name1 !== undefined) yield [this.#name1, this.#record1 as OnceRecord];
    if (this.#more) yield* this.#more;
  }
}
