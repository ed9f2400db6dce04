/**
 * The stream of a run: every event written with `ctx.writeEventToStream`, then the StopEvent.
 * One consumer per run; events written before it subscribes are buffered, so nothing is
 * missed by a consumer that starts late. Hand-rolled rather than an async generator because
 * it sits on the hot path of every streamed event.
 */
import type { Event } from "./event.ts";
import { WorkflowRuntimeError } from "./errors.ts";

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** @example `for await (const ev of stream) …` — stream is handed out by `handler.streamEvents()` */
export class EventStream {
  #buffer: Event[] = [];
  #head = 0;
  #waiting: ((result: IteratorResult<Event>) => void) | null = null;
  #closed = false;
  #taken = false;
  #abandoned = false;

  push(event: Event): void {
    if (this.#closed || this.#abandoned) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = null;
      waiting({ done: false, value: event });
    } else if (this.#buffer.length === 0) {
      // Most runs buffer only their StopEvent: an array of one, not the 17 slots a first push reserves.
      this.#buffer = [event];
    } else {
      this.#buffer.push(event);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const waiting = this.#waiting;
    this.#waiting = null;
    waiting?.(DONE);
  }

  /** The one consumer's iterator; a second call is an error (a silent second consumer would hang). */
  take(): AsyncIterableIterator<Event> {
    if (this.#taken) {
      throw new WorkflowRuntimeError("streamEvents() was already called for this run. A run's events go to one consumer; share them from that loop.");
    }
    this.#taken = true;
    const next = (): Promise<IteratorResult<Event>> => {
      if (this.#head < this.#buffer.length) {
        const value = this.#buffer[this.#head] as Event;
        this.#buffer[this.#head++] = undefined as unknown as Event; // let it be collected
        if (this.#head === this.#buffer.length) {
          this.#buffer.length = 0;
          this.#head = 0;
        }
        return Promise.resolve({ done: false, value });
      }
      if (this.#closed) return Promise.resolve(DONE);
      return new Promise((resolve) => (this.#waiting = resolve));
    };
    const iterator: AsyncIterableIterator<Event> = {
      next,
      return: async () => {
        this.#abandoned = true;
        this.#buffer = [];
        return DONE;
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }
}
