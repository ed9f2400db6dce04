/**
 * Each recorded event as JSON text, made once: the store appends it, and every SSE and NDJSON
 * reader writes it, where each used to encode the event again (three encodings of a 100-event
 * run, and a decode, between the run and one reader). An event read back from the store keeps
 * the text it was read from.
 */
import type { StreamedEvent } from "../client/types.ts";

/** The text of each event, for events recorded or read back (never changed once made: see ServedHandler). */
const texts = new WeakMap<StreamedEvent, string>();

/**
 * The event as one line of JSON: the text it was read from, or `JSON.stringify(ev)` (kept).
 * @example
 * eventJson({ seq: 1, type: "Tick", data: {}, at: "2026-01-01T00:00:00.000Z" }); // '{"seq":1,"type":"Tick",…}'
 */
export function eventJson(ev: StreamedEvent): string {
  let text = texts.get(ev);
  if (text === undefined) texts.set(ev, (text = JSON.stringify(ev)));
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
  if (typeof ev === "object" && ev !== null && !/[\r\n]/.test(text)) texts.set(ev, text);
  return ev;
}
