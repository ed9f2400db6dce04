/**
 * How many bytes of events a run holds untaken: each event counted as the JSON text a save of
 * the run's context writes for it (`{"type":…,"data":…}`), since it is in every save until a
 * step or a wait takes it. The server bounds this sum (`maxPendingEventBytes`) as well as the
 * count, so that a client cannot park large events in a run and have each save rewrite them.
 */
import { encodeEvent, heldEventList, isEvent } from "../core/internal.ts";
import type { Codecs, Event, SavedEvent } from "../core/internal.ts";

/**
 * Each event's size, measured once: a run holds up to `maxPendingEvents` of them, and every
 * event sent in that it does not take at once adds them up again. Keyed by the event itself, so
 * an entry goes when the run lets the event go.
 */
const sizes = new WeakMap<object, number>();

/**
 * The bytes of `event`'s JSON text as a save of the run writes it (0 for one that cannot be
 * encoded: the run's saves fail on it already, and what it would cost cannot be told).
 * @example eventBytes(new HumanResponseEvent({ response: "yes" }), DEFAULT_CODECS); // 52
 */
export function eventBytes(event: Event | SavedEvent, codecs: Codecs): number {
  let size = sizes.get(event);
  if (size === undefined) {
    try {
      size = Buffer.byteLength(JSON.stringify(isEvent(event) ? encodeEvent(event, "event", codecs) : event), "utf8");
    } catch {
      size = 0;
    }
    sizes.set(event, size);
  }
  return size;
}

/**
 * The bytes of the events a run holds untaken: those kept for a later wait, and those queued
 * for the steps named in `steps` (what `heldEvents` counts).
 * @example heldBytes(runOf(ctx).state, new Set(["review"]), workflow.codecs); // 1843
 */
export function heldBytes(state: Parameters<typeof heldEventList>[0], steps: ReadonlySet<string>, codecs: Codecs): number {
  let bytes = 0;
  for (const event of heldEventList(state, steps)) bytes += eventBytes(event, codecs);
  return bytes;
}
