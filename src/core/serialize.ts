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
  constructor(message: string, options: { readonly path?: string; readonly cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.path = options.path;
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
const BUILT_IN = new Map<string, Codec>([
  ["Date", { test: (v) => v instanceof Date, encode: (d) => (d as Date).toISOString(), decode: (s) => new Date(s as string) }],
]);
const processWide = new Map<string, Codec>();

/**
 * The codecs one workflow's contexts use: its own (the `codecs` option), then the built-in
 * `Date`, then those registered process-wide with {@link registerCodec}.
 * @example
 * const codecs = new Codecs({ Money: moneyCodec });
 * codecs.get("Date"); // the built-in one
 */
export class Codecs {
  readonly #own: ReadonlyMap<string, Codec>;

  constructor(own: Readonly<Record<string, Codec>> = {}) {
    this.#own = new Map(Object.entries(own));
  }

  /** The codec saved under `name`, if any. */
  get(name: string): Codec | undefined {
    return this.#own.get(name) ?? BUILT_IN.get(name) ?? processWide.get(name);
  }

  /** The first codec, in lookup order, whose test accepts `value`. */
  find(value: unknown): [string, Codec] | undefined {
    for (const group of [this.#own, BUILT_IN, processWide]) {
      for (const entry of group) if (entry[1].test(value)) return entry;
    }
    return undefined;
  }
}

/** The codecs of a context whose workflow gives none: Date and the process-wide ones. */
export const DEFAULT_CODECS = new Codecs();

/**
 * Teaches every workflow in this process a kind of value. Prefer the workflow's `codecs`
 * option, which keeps what a workflow can save next to the workflow: this registry is
 * process-wide state, kept for code written for stepflow 0.1 and for a library's values that
 * every workflow of an application stores. The name is saved with the value, so keep it stable.
 * @example
 * registerCodec("Money", { test: (v) => v instanceof Money, encode: (m) => m.cents, decode: (c) => new Money(c as number) });
 */
export function registerCodec<T>(name: string, codec: Codec<T>): void {
  processWide.set(name, codec as Codec);
}

const typeOf = (value: unknown): string =>
  value === null ? "null" : typeof value === "object" ? `${(value as object).constructor?.name ?? "Object"} object` : typeof value;

/**
 * Encodes a value found at `where` (a path for error messages). `ancestors`: the arrays and
 * objects being encoded around it, with their paths, so that a cycle is reported, not a stack overflow.
 */
export function encodeValue(value: unknown, where: string, codecs: Codecs = DEFAULT_CODECS, ancestors: Map<object, string> = new Map()): Json {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
    throw new ContextSerdeError(`Cannot save the context: ${where} is ${value}, which JSON cannot hold. Store a finite number or null.`);
  }
  if (typeof value === "object" && ancestors.has(value)) {
    throw new ContextSerdeError(
      `Cannot save the context: ${where} refers back to ${ancestors.get(value)} (a cycle), which JSON cannot hold. Store plain data without cycles.`,
    );
  }
  if (Array.isArray(value)) return within(value, where, ancestors, () => value.map((item, i) => encodeValue(item, `${where}[${i}]`, codecs, ancestors)));
  if (typeof value === "object") {
    const found = codecs.find(value);
    if (found) {
      const [name, codec] = found;
      try {
        return { [CODEC_KEY]: name, value: codec.encode(value) };
      } catch (error) {
        throw new ContextSerdeError(`Cannot save the context: codec "${name}" failed on ${where}: ${(error as Error).message}`, { cause: error });
      }
    }
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null) {
      return within(value, where, ancestors, () => {
        const out: Record<string, Json> = {};
        for (const [key, item] of Object.entries(value)) {
          if (item !== undefined) out[key] = encodeValue(item, `${where}.${key}`, codecs, ancestors);
        }
        // A user's own "$codec" key must not be mistaken for a codec on the way back.
        return CODEC_KEY in out ? { [CODEC_KEY]: "object", value: out } : out;
      });
    }
  }
  throw new ContextSerdeError(
    `Cannot save the context: ${where} holds a ${typeOf(value)}, which is not JSON. Store plain data there, or give the workflow a codec for it: new MyWorkflow({ codecs: { "${typeOf(value).replace(/ object$/, "")}": { test, encode, decode } } }).`,
  );
}

/** Encodes `value`'s contents with `value` among the ancestors; the same object may appear twice side by side, just not inside itself. */
function within(value: object, where: string, ancestors: Map<object, string>, encode: () => Json): Json {
  ancestors.set(value, where);
  try {
    return encode();
  } finally {
    ancestors.delete(value);
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
        { path: where },
      );
    try {
      return codec.decode(record.value as Json);
    } catch (error) {
      throw new ContextSerdeError(`Cannot restore the context: codec "${name}" failed on ${where}: ${(error as Error).message}`, { path: where, cause: error });
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
  return { type: eventTypeName(event.constructor as EventClass), data: encodeValue({ ...event }, where, codecs) };
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
  const event = new (cls as unknown as new (fields: object) => Event)(decodeEntries(data, `${where}.data`, codecs));
  if (!isEvent(event)) throw new ContextSerdeError(`Cannot restore the context: ${where} did not decode to an event.`);
  return event;
}
