/**
 * Time slices for the engine's work (step executions; `Sessions` loads and saves), so that many
 * runs at once never hold the event loop for long: timers (run timeouts among them), I/O and
 * other requests get a turn every few milliseconds. A {@link TimeSlices} object is one
 * scheduler; workflows share {@link sharedTimeSlices} unless given their own (the event loop
 * they share is the process's), and `Sessions` uses its workflow's.
 *
 * Work starts at once while the current slice lasts. A slice ends after `SLICE_MS` of work
 * since the event loop last turned, or once `MAX_PENDING` pieces of work started in it are still
 * going on: runs that all wake at once start their steps within microseconds of each other, and
 * their work comes after, in their microtasks, before any clock could say the slice is over.
 * Past the end, work waits in a queue, in arrival order, and continues in a later turn of the
 * event loop: each check phase (setImmediate) begins a fresh slice, and workers take the
 * waiting work one piece per immediate (Node runs the microtasks of one immediate before the
 * next). The time of all runs counts, not of each: a thousand runs woken in one timers phase
 * are each short, but together they held the event loop for as long as their sum.
 */

/** Engine work, in milliseconds, between two turns of the event loop. */
const SLICE_MS = 4;
/**
 * Pieces of work a slice always holds, however long they take: a slice ends only when many
 * runs share the event loop, not when one does a little work in a long stretch of microtasks
 * (a test, say, that awaits a setImmediate after starting a run sees its first step started).
 */
const MIN_WORK = 256;
/** Pieces of work started in a slice and not finished, past which the slice ends. */
const MAX_PENDING = 256;
/** Immediates taking waiting work: at most this many pieces continue in one turn of the event loop. */
const MAX_WORKERS = 256;

/**
 * One scheduler of time slices: the work of every run (and `Sessions` load and save) given it
 * shares its slices. Workflows share {@link sharedTimeSlices} unless given one with their
 * `timeSlices` option: give a workflow its own only when its runs need not leave the event
 * loop to others (a test, a worker of its own).
 * @example
 * const slices = new TimeSlices();
 * if (slices.sliceSpent()) await slices.nextSlice();
 * const started = slices.currentSlice();
 * doWork();
 * slices.workDone(started);
 */
export class TimeSlices {
  /** Whether a slice is under way (opened by the first work since the event loop turned, or by a check phase with work waiting). */
  #sliceOpen = false;
  #sliceEndsAt = 0;
  /** Numbers the slices, so that work finishing in a later slice than it started in is not counted against it. */
  #slice = 0;
  /** Whether `turn` is scheduled: it is, whenever a slice is open. */
  #turnScheduled = false;
  /** Work started in the slice; past `MIN_WORK`, the clock is read every sixteenth (a clock read costs as much as a short step execution). */
  #started = 0;
  /** Work started in the slice and not finished yet. */
  #pending = 0;
  /** The slice's end was seen: all work waits until the next slice. */
  #spent = false;
  #workers = 0;
  /** Waiting work's continuations, oldest first, from `head`. */
  #waiting: (() => void)[] = [];
  #head = 0;
  /** `setImmediate` callbacks made once: a bound method per call would cost every delayed piece of work a closure. */
  readonly #turn = (): void => this.#onTurn();
  readonly #work = (): void => this.#onWork();
  readonly #inNextSlice = (resume: () => void): void => this.inNextSlice(resume);

  /**
   * Whether the current slice is spent, so that the caller, about to start a piece of work, must
   * `await nextSlice()` first; if not, the work is counted as started in it (give the number of
   * `currentSlice()` to `workDone` when it is). Opens a slice if none is open.
   * @example
   * if (slices.sliceSpent()) await slices.nextSlice();
   */
  sliceSpent(): boolean {
    if (!this.#sliceOpen) this.#openSlice();
    else if (this.#spent) return true;
    else if (++this.#started >= MIN_WORK && (this.#pending >= MAX_PENDING || ((this.#started & 15) === 0 && performance.now() >= this.#sliceEndsAt)))
      return (this.#spent = true);
    this.#pending++;
    return false;
  }

  /**
   * Resolves in a later turn of the event loop, after the work that waited before, with the work
   * counted as started in that turn's slice.
   * @example if (slices.sliceSpent()) await slices.nextSlice();
   */
  nextSlice(): Promise<void> {
    return new Promise(this.#inNextSlice);
  }

  /**
   * Calls `resume` in a later turn of the event loop, after the work that waited before, with the
   * work counted as started in that turn's slice: `nextSlice` without a promise, for the engine's
   * hot path (a promise and its reaction cost more than the rest of a delayed step's start).
   * @example if (slices.sliceSpent()) return slices.inNextSlice(() => start(slices.currentSlice()));
   */
  inNextSlice(resume: () => void): void {
    const waiting = this.#waiting;
    waiting.push(resume);
    // One worker per waiting piece at most: a worker stays until the queue is empty.
    if (this.#workers < MAX_WORKERS && this.#workers < waiting.length - this.#head) {
      this.#workers++;
      setImmediate(this.#work);
    }
  }

  /** The number of the current slice, for `workDone`. @example const started = slices.currentSlice(); */
  currentSlice(): number {
    return this.#slice;
  }

  /** Work started in slice `started` is finished. @example slices.workDone(started); */
  workDone(started: number): void {
    if (started === this.#slice && this.#pending > 0) this.#pending--;
  }

  #openSlice(): void {
    this.#sliceOpen = true;
    this.#spent = false;
    this.#started = 0;
    this.#pending = 0;
    this.#slice++;
    this.#sliceEndsAt = performance.now() + SLICE_MS;
    if (!this.#turnScheduled) {
      this.#turnScheduled = true;
      setImmediate(this.#turn);
    }
  }

  /**
   * The start of a check phase (it is scheduled before the workers that run after it): the slice
   * ends with the turn of the event loop, and a new one begins for the work still waiting.
   */
  #onTurn(): void {
    this.#turnScheduled = false;
    this.#sliceOpen = false;
    if (this.#head < this.#waiting.length) this.#openSlice();
  }

  /** One worker: continues the oldest waiting work if the slice allows, then waits for the next turn. */
  #onWork(): void {
    let waiting = this.#waiting;
    let head = this.#head;
    if (head === waiting.length) {
      this.#workers--;
      return;
    }
    if (!this.#spent && this.#pending < MAX_PENDING && performance.now() < this.#sliceEndsAt) {
      const resume = waiting[head] as () => void;
      waiting[head++] = undefined as unknown as () => void;
      if (head === waiting.length) {
        waiting = [];
        head = 0;
      } else if (head > 1024 && head * 2 > waiting.length) {
        waiting = waiting.slice(head);
        head = 0;
      }
      this.#waiting = waiting;
      this.#head = head;
      this.#started++;
      this.#pending++;
      // Before `resume`, which may be the work itself (`inNextSlice`): a throw there must not stop the worker.
      setImmediate(this.#work);
      return resume();
    }
    setImmediate(this.#work);
  }
}

/**
 * The scheduler workflows share unless given their own (`timeSlices` option): the event loop is
 * the process's, so by default the time of all runs counts together, not each run's alone.
 * @example const slices = new MyWorkflow().timeSlices; // sharedTimeSlices, unless given one
 */
export const sharedTimeSlices: TimeSlices = new TimeSlices();

/**
 * {@link TimeSlices.sliceSpent} of {@link sharedTimeSlices}.
 * @example
 * if (sliceSpent()) await nextSlice();
 * const started = currentSlice();
 * doWork();
 * workDone(started);
 */
export function sliceSpent(): boolean {
  return sharedTimeSlices.sliceSpent();
}

/** {@link TimeSlices.nextSlice} of {@link sharedTimeSlices}. @example if (sliceSpent()) await nextSlice(); */
export function nextSlice(): Promise<void> {
  return sharedTimeSlices.nextSlice();
}

/** {@link TimeSlices.inNextSlice} of {@link sharedTimeSlices}. @example inNextSlice(() => start(currentSlice())); */
export function inNextSlice(resume: () => void): void {
  sharedTimeSlices.inNextSlice(resume);
}

/** {@link TimeSlices.currentSlice} of {@link sharedTimeSlices}. @example const started = currentSlice(); */
export function currentSlice(): number {
  return sharedTimeSlices.currentSlice();
}

/** {@link TimeSlices.workDone} of {@link sharedTimeSlices}. @example workDone(started); */
export function workDone(started: number): void {
  sharedTimeSlices.workDone(started);
}
