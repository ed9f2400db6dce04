/**
 * Each recorded event as JSON text, made once: the store appends it, and every SSE and NDJSON
 * reader writes it, where each used to encode the event again (three encodings of a 100-event
 * run, and a decode, between the run and one reader). An event read back from the store keeps
 * the text it was read from.
 */
import type { StreamedEvent } from "../client/types.ts";

/**
 * Where an event keeps its text: a property no one else sees (not enumerable, a symbol: left
 * out of JSON, of copies and of comparisons), rather than a WeakMap from event to text, which
 * would make every event of every run a weak entry for the garbage collector to trace.
 */
const TEXT = Symbol("stepflow.eventJson");

type WithText = StreamedEvent & { [TEXT]?: string };

function keep(ev: StreamedEvent, text: string): void {
  if (Object.isExtensible(ev)) Object.defineProperty(ev, TEXT, { value: text });
}

/**
 * The event as one line of JSON: the text it was read from, or `JSON.stringify(ev)` (kept).
 * @example
 * eventJson({ seq: 1, type: "Tick", data: {}, at: "2026-01-01T00:00:00.000Z" }); // '{"seq":1,"type":"Tick",…}'
 */
export function eventJson(ev: StreamedEvent): string {
  let text = (ev as WithText)[TEXT];
  if (text === undefined) keep(ev, (text = JSON.stringify(ev)));
  return text;
}

/**
 * Decodes an event stored as `text`, which then is its text: written as it is to readers,
 * unless it spans lines (a store that reformats JSON), which NDJSON cannot carry.
 * @example
 * const ev = parseEventJson('{"seq":1,"type":"Tick","data":{},"at":"2026-01-01T00:00:00.000Z"}');
 */
export function parseEventJson(text: string): StreamedEvent {
  const ev = JSON.parse(text) as StreamedEvent;
  if (typeof ev === "object" && ev !== null && !/[\r\n]/.test(text)) keep(ev, text);
  return ev;
}
