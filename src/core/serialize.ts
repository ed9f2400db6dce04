/**
 * Turns store values and events into plain JSON and back. JSON values pass through; other
 * values need a codec (the workflow's `codecs` option; `Date` is built in), and a value without
 * one is an error naming where it was found — never a silently dropped key.
 */
import { eventTypeName, isEvent } from "./event.ts";
import type { Event, EventClass } from "./event.ts";
import { StepflowError } from "./errors.ts";

/** A context could not be saved or restored; the message says what and where. @example `err instanceof ContextSerdeError` */
export class ContextSerdeError extends StepflowError {
  override name = "ContextSerdeError";
  /** Where in the saved context the problem is (`run.queued.slow[0].type`), when it is one field. */
  readonly path: string | undefined;
  /** The codec a `"$codec"` value names, when the problem is decoding one: the workflow lacks it, or it failed (`cause`). */
  readonly codec: string | undefined;
  constructor(message: string, options: { readonly path?: string; readonly codec?: string; readonly cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.path = options.path;
    this.codec = options.codec;
  }
}

/** Any JSON value. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** How to save and restore values of one kind that are not plain JSON. */
export interface Codec<T = unknown> {
  /** True for the values this codec handles. */
  readonly test: (value: unknown) => boolean;
  readonly encode: (value: T) => Json;
  readonly decode: (json: Json) => T;
}

const CODEC_KEY = "$codec";
/** Built in, after a workflow's own codecs: read only, shared by every `Codecs`. */
const BUILT_IN: readonly (readonly [string, Codec])[] = Object.freeze([
  Object.freeze([
    "Date",
    { test: (v: unknown) => v instanceof Date, encode: (d: unknown) => (d as Date).toISOString(), decode: (s: Json) => new Date(s as string) },
  ] as const),
]);

/**
 * Codecs registered for several workflows at once: every `Codecs` made with this registry looks
 * in it after its own and the built-in ones. {@link sharedCodecRegistry} is the one
 * {@link registerCodec} fills, which workflows use unless told otherwise.
 * @example
 * const registry = new CodecRegistry();
 * registry.register("Money", moneyCodec);
 * const codecs = new Codecs({}, registry);
 */
export class CodecRegistry {
  readonly #codecs = new Map<string, Codec>();
  #version = 0;

  /** Adds (or replaces) the codec saved under `name`. @example registry.register("Money", moneyCodec); */
  register<T>(name: string, codec: Codec<T>): void {
    this.#codecs.set(name, codec as Codec);
    this.#version++;
  }

  /** The codec registered under `name`, if any. @example registry.get("Money"); */
  get(name: string): Codec | undefined {
    return this.#codecs.get(name);
  }

  /** Counts registrations, so that each `Codecs` knows when its lookup list is stale. @example const seen = registry.version; */
  get version(): number {
    return this.#version;
  }

  /** The registered codecs, in registration order. @example [...registry.entries()] */
  entries(): IterableIterator<[string, Codec]> {
    return this.#codecs.entries();
  }
}

/**
 * The registry {@link registerCodec} fills: the workflows of the process look in it after their
 * own `codecs` and the built-in `Date`.
 * @example sharedCodecRegistry.register("Money", moneyCodec); // same as registerCodec("Money", moneyCodec)
 */
export const sharedCodecRegistry: CodecRegistry = new CodecRegistry();

/**
 * The codecs one workflow's contexts use: its own (the `codecs` option), then the built-in
 * `Date`, then those of `registry` (by default those registered with {@link registerCodec}).
 * @example
 * const codecs = new Codecs({ Money: moneyCodec });
 * codecs.get("Date"); // the built-in one
 */
export class Codecs {
  readonly #own: ReadonlyMap<string, Codec>;
  readonly #registry: CodecRegistry;
  /** Every codec in lookup order, for `find`: made again when one is registered in the registry. */
  #all: readonly (readonly [string, Codec])[] = [];
  #allVersion = -1;
  /** The encoder `encode` uses again, when no call is using it (a codec may encode values of its own meanwhile). */
  #spare: Encoder | undefined;

  constructor(own: Readonly<Record<string, Codec>> = {}, registry: CodecRegistry = sharedCodecRegistry) {
    this.#own = new Map(Object.entries(own));
    this.#registry = registry;
  }

  /** The codec saved under `name`, if any. @example codecs.get("Date") */
  get(name: string): Codec | undefined {
    return this.#own.get(name) ?? BUILT_IN.find(([builtIn]) => builtIn === name)?.[1] ?? this.#registry.get(name);
  }

  /** The first codec, in lookup order, whose test accepts `value`. @example codecs.find(new Date()) // ["Date", …] */
  find(value: unknown): [string, Codec] | undefined {
    // Asked of every object a save encodes: a plain array, not three map iterators a call.
    const registry = this.#registry;
    if (this.#allVersion !== registry.version) {
      this.#all = [...this.#own, ...BUILT_IN, ...registry.entries()];
      this.#allVersion = registry.version;
    }
    // An index loop: `for…of` with destructuring made an array iterator for every object every save
    // encodes (8 KB of an agent turn's 70), which V8 does not always optimise away.
    const all = this.#all;
    for (let i = 0; i < all.length; i++) {
      const entry = all[i] as [string, Codec];
      if (entry[1].test(value)) return [entry[0], entry[1]]; // the caller's own copy, as before
    }
    return undefined;
  }

  /**
   * Encodes `value`, found at `where` (a path for error messages), as {@link encodeValue} does.
   * @example codecs.encode({ at: new Date(0) }, "store key \"at\"") // { at: { $codec: "Date", value: "1970-…" } }
   */
  encode(value: unknown, where: string): Json {
    return this.#withEncoder(value, where, false);
  }

  /**
   * Encodes the own fields of `fields` (an event) as a plain object's, whatever its class: what
   * `encode({ ...fields })` gives, without making that copy first.
   * @example codecs.encodeFields(new Ping({ n: 1 }), "event") // { n: 1 }
   */
  encodeFields(fields: object, where: string): Json {
    return this.#withEncoder(fields, where, true);
  }

  #withEncoder(value: unknown, where: string, fields: boolean): Json {
    // One encoder serves the calls that do not overlap: each new one grew two stacks of 16
    // slots, which was most of what encoding a step's small result allocated.
    const encoder = this.#spare ?? new Encoder();
    this.#spare = undefined;
    try {
      return encoder.run(value, where, this, fields);
    } finally {
      encoder.clear();
      this.#spare = encoder;
    }
  }
}

/**
 * The codecs of a context whose workflow gives none: Date and those of {@link sharedCodecRegistry}.
 * @example encodeValue(new Date(0), "at", DEFAULT_CODECS)
 */
export const DEFAULT_CODECS: Codecs = new Codecs();

/**
 * Teaches every workflow in this process a kind of value ({@link sharedCodecRegistry}). Prefer
 * the workflow's `codecs` option, which keeps what a workflow can save next to the workflow:
 * this registry is process-wide, kept for code written for stepflow 0.1 and for a library's
 * values that every workflow of an application stores. The name is saved with the value, so keep
 * it stable.
 * @example
 * registerCodec("Money", { test: (v) => v instanceof Money, encode: (m) => m.cents, decode: (c) => new Money(c as number) });
 */
export function registerCodec<T>(name: string, codec: Codec<T>): void {
  sharedCodecRegistry.register(name, codec);
}

const typeOf = (value: unknown): string =>
  value === null ? "null" : typeof value === "object" ? `${(value as object).constructor?.name ?? "Object"} object` : typeof value;

/**
 * Encodes a value found at `where` (a path for error messages), reporting a cycle rather than
 * overflowing the stack.
 * @example encodeValue({ n: 1 }, "store key \"n\"") // { n: 1 }
 */
export function encodeValue(value: unknown, where: string, codecs: Codecs = DEFAULT_CODECS): Json {
  // A number, string, boolean or null is its own JSON: no walk, no encoder.
  if (value === null || typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) return value;
  return codecs.encode(value, where);
}

/**
 * One `encodeValue` call at a time. The path of the value being encoded is kept as a stack of
 * keys, and spelt out only for an error message: a save encodes every value of the store, and
 * building a path string for each was most of what saving a context allocated.
 */
class Encoder {
  /** The arrays and objects being encoded around the current value, outermost first. */
  readonly #ancestors: (object | undefined)[] = [];
  /** `#keys[d]`: where the value at depth `d + 1` sits in `#ancestors[d]` (an index or a key). */
  readonly #keys: (string | number)[] = [];
  where = "";
  codecs: Codecs = DEFAULT_CODECS;

  /** `fields`: encode `value`'s own fields as a plain object's, whatever its class (an event's). */
  run(value: unknown, where: string, codecs: Codecs, fields: boolean): Json {
    this.where = where;
    this.codecs = codecs;
    if (!fields) return this.encode(value, 0);
    // Not an ancestor: a field holding the event itself is reported as a value of its class, as
    // it was when a copy of the fields was encoded.
    this.#ancestors[0] = undefined;
    return this.#record(value as Record<string, unknown>, 0);
  }

  /** Lets go of the values encoded, so that a spare encoder keeps none of them alive. */
  clear(): void {
    this.#ancestors.fill(undefined);
    this.codecs = DEFAULT_CODECS;
  }

  encode(value: unknown, depth: number): Json {
    if (value === null || typeof value === "string" || typeof value === "boolean") return value;
    if (typeof value === "number") {
      if (Number.isFinite(value)) return value;
      throw new ContextSerdeError(`Cannot save the context: ${this.#path(depth)} is ${value}, which JSON cannot hold. Store a finite number or null.`);
    }
    if (typeof value === "object") {
      const ancestors = this.#ancestors;
      // Arrays are only as deep as the value is: a linear search allocates nothing.
      const cycle = depth > 0 ? ancestors.lastIndexOf(value, depth - 1) : -1;
      if (cycle >= 0) {
        throw new ContextSerdeError(
          `Cannot save the context: ${this.#path(depth)} refers back to ${this.#path(cycle)} (a cycle), which JSON cannot hold. Store plain data without cycles.`,
        );
      }
      if (Array.isArray(value)) {
        ancestors[depth] = value;
        // Filled in order, so that V8 keeps it a packed array (a hole only where the value has one).
        const out: Json[] = [];
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (item === undefined && !(i in value)) {
            out.length = i + 1; // a hole stays a hole (JSON.stringify writes null)
            continue;
          }
          this.#keys[depth] = i;
          out.push(this.encode(item, depth + 1));
        }
        return out;
      }
      const found = this.codecs.find(value);
      if (found) {
        const [name, codec] = found;
        try {
          return { [CODEC_KEY]: name, value: codec.encode(value) };
        } catch (error) {
          throw new ContextSerdeError(`Cannot save the context: codec "${name}" failed on ${this.#path(depth)}: ${(error as Error).message}`, { cause: error });
        }
      }
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) {
        ancestors[depth] = value;
        return this.#record(value as Record<string, unknown>, depth);
      }
    }
    throw new ContextSerdeError(
      `Cannot save the context: ${this.#path(depth)} holds a ${typeOf(value)}, which is not JSON. Store plain data there, or give the workflow a codec for it: new MyWorkflow({ codecs: { "${typeOf(value).replace(/ object$/, "")}": { test, encode, decode } } }).`,
    );
  }

  /** The own enumerable fields of `record`, at `depth`, as a plain object. */
  #record(record: Record<string, unknown>, depth: number): Json {
    const out: Record<string, Json> = {};
    // for-in walks the object's cached key list; Object.keys made a new array for every object of every save.
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue; // an enumerable property of its prototype (someone added one to Object.prototype)
      const item = record[key];
      if (item === undefined) continue;
      this.#keys[depth] = key;
      // An own "__proto__" field (JSON.parse makes them) is a field of the copy, not its prototype.
      if (key === "__proto__") Object.defineProperty(out, key, { value: this.encode(item, depth + 1), enumerable: true, writable: true, configurable: true });
      else out[key] = this.encode(item, depth + 1);
    }
    // A user's own "$codec" key must not be mistaken for a codec on the way back.
    return CODEC_KEY in out ? { [CODEC_KEY]: "object", value: out } : out;
  }

  /** The path of the value at `depth`: `where`, then `[i]` for an array item, `.key` for a field. */
  #path(depth: number): string {
    let path = this.where;
    for (let d = 0; d < depth; d++) {
      const key = this.#keys[d] as string | number;
      path += typeof key === "number" ? `[${key}]` : `.${key}`;
    }
    return path;
  }
}

/** Decodes what {@link encodeValue} produced. */
export function decodeValue(json: unknown, where: string, codecs: Codecs = DEFAULT_CODECS): unknown {
  if (json === null || typeof json !== "object") return json;
  if (Array.isArray(json)) return json.map((item, i) => decodeValue(item, `${where}[${i}]`, codecs));
  const record = json as Record<string, unknown>;
  if (typeof record[CODEC_KEY] === "string") {
    const name = record[CODEC_KEY];
    if (name === "object") return decodeEntries(record.value, where, codecs);
    const codec = codecs.get(name);
    if (!codec)
      throw new ContextSerdeError(
        `Cannot restore the context: ${where} was saved with codec "${name}", which this workflow does not have. Give the workflow that codec: new MyWorkflow({ codecs: { "${name}": … } }).`,
        { path: where, codec: name },
      );
    try {
      return codec.decode(record.value as Json);
    } catch (error) {
      throw new ContextSerdeError(`Cannot restore the context: codec "${name}" failed on ${where}: ${(error as Error).message}`, {
        path: where,
        codec: name,
        cause: error,
      });
    }
  }
  return decodeEntries(record, where, codecs);
}

function decodeEntries(record: unknown, where: string, codecs: Codecs): Record<string, unknown> {
  if (typeof record !== "object" || record === null) throw new ContextSerdeError(`Cannot restore the context: ${where} should be an object.`, { path: where });
  return Object.fromEntries(Object.entries(record).map(([key, item]) => [key, decodeValue(item, `${where}.${key}`, codecs)]));
}

/** A saved event: its type name and its fields. */
export interface SavedEvent {
  readonly type: string;
  readonly data: Json;
}

/** Encodes an event as `{ type, data }`. */
export function encodeEvent(event: Event, where: string, codecs: Codecs = DEFAULT_CODECS): SavedEvent {
  return { type: eventTypeName(event.constructor as EventClass), data: codecs.encodeFields(event, where) };
}

/**
 * A key of `fields` that names a property of every `cls` event (`constructor`, `toString`): as an
 * own field it would shadow it, and `constructor` names an event's type and routes it.
 * @example shadowingField({ constructor: "StopEvent" }, StartEvent); // "constructor"
 */
export function shadowingField(fields: object, cls: EventClass): string | undefined {
  return Object.keys(fields).find((key) => key in cls.prototype);
}

/** Decodes a saved event with the classes the workflow knows, by type name. */
export function decodeEvent(saved: unknown, types: ReadonlyMap<string, EventClass>, where: string, codecs: Codecs = DEFAULT_CODECS): Event {
  if (typeof saved !== "object" || saved === null || typeof (saved as SavedEvent).type !== "string") {
    throw new ContextSerdeError(`Cannot restore the context: ${where} is not a saved event ({ type, data }).`);
  }
  const { type, data } = saved as SavedEvent;
  const cls = types.get(type);
  if (!cls) {
    throw new ContextSerdeError(
      `Cannot restore the context: ${where} is an event of type "${type}", which this workflow does not know. Known types: ${[...types.keys()].join(", ")}.`,
    );
  }
  const fields = decodeEntries(data, `${where}.data`, codecs);
  // Events are made with Object.assign(this, fields): a "constructor" field would hide the class
  // that names and routes the event. No saved event has one; an edited context can.
  const shadowing = shadowingField(fields, cls);
  if (shadowing !== undefined) {
    throw new ContextSerdeError(
      `Cannot restore the context: ${where}.data has a field "${shadowing}", which would hide the property of that name every ${type} has (the event's class, for "constructor"). Saved events have no such field: remove it.`,
      { path: `${where}.data.${shadowing}` },
    );
  }
  const event = new (cls as unknown as new (fields: object) => Event)(fields);
  if (!isEvent(event)) throw new ContextSerdeError(`Cannot restore the context: ${where} did not decode to an event.`);
  return event;
}
