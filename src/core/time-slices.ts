/**
 * Process-wide time slices for the engine's work (step executions; `Sessions` loads and saves),
 * so that many runs at once never hold the event loop for long: timers (run timeouts among
 * them), I/O and other requests get a turn every few milliseconds.
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

/** Whether a slice is under way (opened by the first work since the event loop turned, or by a check phase with work waiting). */
let sliceOpen = false;
let sliceEndsAt = 0;
/** Numbers the slices, so that work finishing in a later slice than it started in is not counted against it. */
let slice = 0;
/** Whether `turn` is scheduled: it is, whenever a slice is open. */
let turnScheduled = false;
/** Work started in the slice; past `MIN_WORK`, the clock is read every sixteenth (a clock read costs as much as a short step execution). */
let started = 0;
/** Work started in the slice and not finished yet. */
let pending = 0;
/** The slice's end was seen: all work waits until the next slice. */
let spent = false;
let workers = 0;
/** Waiting work's continuations, oldest first, from `head`. */
let waiting: (() => void)[] = [];
let head = 0;

/**
 * Whether the current slice is spent, so that the caller, about to start a piece of work, must
 * `await nextSlice()` first; if not, the work is counted as started in it (give the number of
 * `currentSlice()` to `workDone` when it is). Opens a slice if none is open.
 * @example
 * if (sliceSpent()) await nextSlice();
 * const started = currentSlice();
 * doWork();
 * workDone(started);
 */
export function sliceSpent(): boolean {
  if (!sliceOpen) openSlice();
  else if (spent) return true;
  else if (++started >= MIN_WORK && (pending >= MAX_PENDING || ((started & 15) === 0 && performance.now() >= sliceEndsAt))) return (spent = true);
  pending++;
  return false;
}

/**
 * Resolves in a later turn of the event loop, after the work that waited before, with the work
 * counted as started in that turn's slice.
 * @example if (sliceSpent()) await nextSlice();
 */
export function nextSlice(): Promise<void> {
  return new Promise(inNextSlice);
}

/**
 * Calls `resume` in a later turn of the event loop, after the work that waited before, with the
 * work counted as started in that turn's slice: `nextSlice` without a promise, for the engine's
 * hot path (a promise and its reaction cost more than the rest of a delayed step's start).
 * @example if (sliceSpent()) return inNextSlice(() => start(currentSlice()));
 */
export function inNextSlice(resume: () => void): void {
  waiting.push(resume);
  // One worker per waiting piece at most: a worker stays until the queue is empty.
  if (workers < MAX_WORKERS && workers < waiting.length - head) {
    workers++;
    setImmediate(work);
  }
}

/** The number of the current slice, for `workDone`. @example const started = currentSlice(); */
export function currentSlice(): number {
  return slice;
}

/** Work started in slice `started` is finished. @example workDone(started); */
export function workDone(started: number): void {
  if (started === slice && pending > 0) pending--;
}

function openSlice(): void {
  sliceOpen = true;
  spent = false;
  started = 0;
  pending = 0;
  slice++;
  sliceEndsAt = performance.now() + SLICE_MS;
  if (!turnScheduled) {
    turnScheduled = true;
    setImmediate(turn);
  }
}

/**
 * The start of a check phase (it is scheduled before the workers that run after it): the slice
 * ends with the turn of the event loop, and a new one begins for the work still waiting.
 */
function turn(): void {
  turnScheduled = false;
  sliceOpen = false;
  if (head < waiting.length) openSlice();
}

/** One worker: continues the oldest waiting work if the slice allows, then waits for the next turn. */
function work(): void {
  if (head === waiting.length) {
    workers--;
    return;
  }
  if (!spent && pending < MAX_PENDING && performance.now() < sliceEndsAt) {
    const resume = waiting[head] as () => void;
    waiting[head++] = undefined as unknown as () => void;
    if (head === waiting.length) {
      waiting = [];
      head = 0;
    } else if (head > 1024 && head * 2 > waiting.length) {
      waiting = waiting.slice(head);
      head = 0;
    }
    started++;
    pending++;
    // Before `resume`, which may be the work itself (`inNextSlice`): a throw there must not stop the worker.
    setImmediate(work);
    return resume();
  }
  setImmediate(work);
}
