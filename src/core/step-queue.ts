/**
 * A step's executions waiting for a worker, oldest first. An event queued with a numbered id is
 * kept as the event, and its execution is made when it leaves the queue, still with the id it
 * was given when queued (ids are numbered in the order events are queued, as ever): a fan-out
 * queues thousands at once, and executions made then lived through every scavenge that fell
 * within the fan-out, each copying them, until promoted to the old generation, which only a full
 * GC frees (a 100,000-event fan-out spent 40–50% of its time in scavenges). Made when it starts,
 * an execution dies young.
 */
import type { Event } from "./event.ts";
import { isExecution, newExecution } from "./run-state.ts";
import type { StepExecution, StepSlot } from "./run-state.ts";

/** Entries of the first chunk: most queues hold one or a few at a time, and keep their first chunk while the run lasts. */
const FIRST_CHUNK = 4;
/** Entries of the largest chunk (8 KB): a long queue grows by chunks of this size, never by copying what it holds. */
const LARGEST_CHUNK = 1023;

/**
 * A chunk: a fixed array of slots, its last slot the next chunk. A slot holds an event, an
 * execution made already, or a number: the id of the event after it, where that is not one more
 * than the id of the event queued before it.
 */
type Chunk = unknown[];

/**
 * The queue of one step. An execution made already (a restored one, with its saved id and its
 * `ctx.once` records; one whose id is made from a restored execution's; one a save gave) is
 * queued as it is. Slots are held in chunks linked in order, so that a queue of 10,000 is never
 * copied as it grows (an array grown by `push` is, and was compacted by `slice` as it emptied).
 * Ids queued in a row are consecutive (a fan-out's whole burst is), so an event takes one slot,
 * and two where its id skips some.
 * @example
 * const queue = (slot.queue ??= new StepQueue(slot));
 * queue.push(event, ++state.executions);
 * const next = queue.shift(); // the execution of `event`, with that id
 */
export class StepQueue {
  /** Entries queued: events and executions, not the ids between them. */
  size = 0;
  #first: Chunk | undefined;
  /** The first slot taken next, in `#first`. */
  #head = 0;
  #last: Chunk | undefined;
  /** The next free slot in `#last`. */
  #tail = 0;
  /** The id of the next event to leave; while none is queued, one more than `#lastId`. */
  #nextId = 1;
  /** The id of the event queued last. */
  #lastId = 0;

  constructor(readonly slot: StepSlot) {}

  /**
   * Queues `event`, whose execution, numbered `id` (greater than any queued before), is made
   * when it leaves the queue; one with a string id (made from a restored execution's) is made now.
   */
  push(event: Event, id: number | string): void {
    if (typeof id === "string") return this.pushExecution(newExecution(this.slot, event, id, undefined));
    if (id !== this.#lastId + 1) this.#put(id);
    this.#lastId = id;
    this.#put(event);
    this.size++;
  }

  /** Queues an execution made already. */
  pushExecution(execution: StepExecution): void {
    this.#put(execution);
    this.size++;
  }

  /** The oldest entry's execution (made now if it was queued as an event), out of the queue. */
  shift(): StepExecution | undefined {
    if (this.size === 0) return undefined;
    let entry = this.#take();
    if (typeof entry === "number") {
      this.#nextId = entry;
      entry = this.#take();
    }
    if (--this.size === 0) {
      // Empty: its chunk is used again from the start.
      this.#first = this.#last;
      this.#head = this.#tail = 0;
    }
    if (isExecution(entry)) return entry;
    return newExecution(this.slot, entry as Event, this.#nextId++, undefined);
  }

  /**
   * The queued executions, oldest first, each made now if it was queued as an event: a save
   * needs them as executions (it marks each shared, which a later `ctx.once` in it reads), and
   * they stay in the queue as made.
   */
  executions(): StepExecution[] {
    const executions: StepExecution[] = [];
    for (const [chunk, at] of this.#entries()) {
      const entry = chunk[at];
      if (typeof entry === "number") {
        this.#nextId = entry;
        chunk[at] = this.#lastId + 1; // what the id after the last queued event will be, when this is read again
        continue;
      }
      const execution = isExecution(entry) ? entry : newExecution(this.slot, entry as Event, this.#nextId++, undefined);
      chunk[at] = execution;
      executions.push(execution);
    }
    return executions;
  }

  /**
   * The events queued, oldest first, read without making their executions (unlike
   * `executions()`, this changes nothing: a server measures what a run holds between its steps).
   * @example let bytes = 0; for (const ev of queue.events()) bytes += JSON.stringify(ev).length;
   */
  *events(): Generator<Event> {
    for (const [chunk, at] of this.#entries()) {
      const entry = chunk[at];
      if (typeof entry !== "number") yield isExecution(entry) ? entry.event : (entry as Event);
    }
  }

  /**
   * Where each queued entry is, oldest first (its chunk and index): the events and executions,
   * and the id marks between them. The caller may replace an entry with one of its kind (a mark
   * with a mark, an event with its execution) while walking.
   */
  *#entries(): Generator<readonly [Chunk, number]> {
    let chunk = this.#first as Chunk;
    let at = this.#head;
    for (let left = this.size; left > 0; at++) {
      if (at === chunk.length - 1) {
        chunk = chunk[at] as Chunk;
        at = 0;
      }
      yield [chunk, at];
      if (typeof chunk[at] !== "number") left--;
    }
  }

  #put(slot: unknown): void {
    let last = this.#last;
    if (last === undefined) this.#first = this.#last = last = new Array<unknown>(FIRST_CHUNK + 1);
    else if (this.#tail === last.length - 1) {
      last = last[this.#tail] = new Array<unknown>(Math.min(last.length * 2, LARGEST_CHUNK) + 1);
      this.#last = last;
      this.#tail = 0;
    }
    last[this.#tail++] = slot;
  }

  /** The first slot, out of the queue (and no longer kept alive by it). */
  #take(): unknown {
    let first = this.#first as Chunk;
    if (this.#head === first.length - 1) {
      this.#first = first = first[this.#head] as Chunk;
      this.#head = 0;
    }
    const slot = first[this.#head];
    first[this.#head++] = undefined;
    return slot;
  }
}
