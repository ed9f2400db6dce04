/**
 * One run the server holds: its numbered event log, what it waits for, how it ended, and the
 * readers following it. Persistence and HTTP live elsewhere; this is the in-memory truth.
 */
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { builtPackageDist } from "../core/built-package.ts";
import { eventTypeName, HumanResponseEvent, InputRequiredEvent, encodeEvent, encodeValue } from "../core/internal.ts";
import type { Event, EventClass, Codecs } from "../core/internal.ts";
import type { ForkOrigin, HandlerInfo, HandlerStatus, JsonObject, JsonValue, StreamedEvent } from "../client/types.ts";

/** The final statuses: a handler in one of them writes no more events. */
export const FINAL_STATUSES: ReadonlySet<HandlerStatus> = new Set(["succeeded", "failed", "cancelled", "timedOut"]);

/** What a handler's record holds besides its events (the stored snapshot minus the context). */
export interface HandlerState {
  readonly id: string;
  readonly workflow: string;
  runId: string;
  status: HandlerStatus;
  readonly input: JsonObject;
  readonly createdAt: string;
  updatedAt: string;
  result?: JsonValue;
  error?: { name: string; message: string; stack?: string };
  waitingFor: StreamedEvent[];
  /** For a fork: the run and checkpoint it started from. */
  readonly forkedFrom?: ForkOrigin;
  /** Started from its input alone (no context): a fork from its start needs only the input. */
  readonly fromInput?: boolean;
}

/** The longest stack kept: enough to find the frame that threw, bounded so that an error cannot fill the store. */
const MAX_STACK = 8_000;

/** An error's stack as text to show (bounded, without the engine's frames below the user's), or undefined when it has none. */
export function stackOf(error: unknown): string | undefined {
  const whole = error instanceof Error ? error.stack : undefined;
  if (typeof whole !== "string" || whole === "") return undefined;
  const stack = withoutEngineFrames(whole);
  return stack.length > MAX_STACK ? `${stack.slice(0, MAX_STACK)}\n…` : stack;
}

/**
 * The folder of stepflow's own modules (core/, server/, … in the sources; the installed package's
 * dist/src/, its entries and chunks), as a path and as a URL; undefined when bundled into an
 * application's file, where their frames cannot be told from the application's.
 */
const OWN_MODULES = ((): readonly string[] | undefined => {
  let file: string;
  try {
    file = fileURLToPath(import.meta.url);
  } catch {
    return undefined;
  }
  const dist = builtPackageDist(file);
  const ownFolder =
    dist !== undefined ? join(dist, "src") : /[\\/]server[\\/]served-handler\.[cm]?[jt]s$/.test(file) ? resolve(dirname(file), "..") : undefined;
  if (ownFolder === undefined) return undefined;
  const dir = `${ownFolder}${sep}`;
  return [dir, pathToFileURL(dir).href];
})();

const isFrame = (line: string) => /^\s+at /.test(line);

/**
 * `stack` without the frames at its bottom that are stepflow's engine or Node's internals: a
 * step that throws before its first `await` had the engine's calls (Run.#runAttempt, …) below
 * its own, which say how the step was called, not where it failed. The user's frames all stay
 * (those between engine frames too), and so does a stack that has no frame of the user's.
 */
function withoutEngineFrames(stack: string): string {
  if (!OWN_MODULES) return stack;
  const lines = stack.split("\n");
  const internal = (line: string) => isFrame(line) && (line.includes("node:internal/") || OWN_MODULES.some((dir) => line.includes(dir)));
  let end = lines.length;
  while (end > 0 && internal(lines[end - 1] as string)) end--;
  const hidden = lines.length - end;
  if (hidden === 0 || !lines.slice(0, end).some(isFrame)) return stack;
  return `${lines.slice(0, end).join("\n")}\n    … ${hidden} frame${hidden === 1 ? "" : "s"} of stepflow's engine and Node.js left out`;
}

let isoMs = Number.NaN;
let isoText = "";

/**
 * The time now as an ISO string, made once per millisecond: every event a run records is dated,
 * and a run of a few events records them all within a millisecond or two, where a `Date` and its
 * `toISOString()` for each cost more than the rest of recording it.
 * @example isoNow(); // "2026-11-27T21:00:00.000Z"
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoText = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoText;
}

/** Readers and waiters of every handler of one server, counted as they come and go (for health and leak checks). */
export interface ReaderTally {
  readers: number;
  waiters: number;
}

/** A handler's event log and status, with a wake-up for readers waiting on the next event. */
export class ServedHandler {
  readonly state: HandlerState;
  /** The server running it, when that is another server sharing the store (this one only shows it). */
  heldBy: string | undefined;
  readonly #tally: ReaderTally;
  #readers = 0;
  /** The events in memory; `undefined` until loaded for a handler restored from the store. */
  #events: StreamedEvent[] | undefined;
  #eventCount: number;
  #visible: number;
  /** Questions recorded but not shown yet. */
  #asked: StreamedEvent[] = [];
  /** The run's own question event of each question this server recorded (not of those read back from the store). */
  readonly #questions = new WeakMap<StreamedEvent, Event>();
  #wake: (() => void)[] = [];
  /** Set by `finish` until the store has the end (or failed to take it): readers see a run end once it is saved. */
  #endPending = false;
  /** Why the store does not have this run's end, when its save failed. */
  #notSaved: string | undefined;

  constructor(state: HandlerState, events: StreamedEvent[] | undefined, eventCount: number, tally: ReaderTally = { readers: 0, waiters: 0 }) {
    this.state = state;
    this.#tally = tally;
    this.#events = events;
    this.#eventCount = eventCount;
    this.#visible = eventCount;
  }

  /** Readers following the log now (for the leak check of the load benchmark). */
  get readers(): number {
    return this.#readers;
  }

  set readers(count: number) {
    this.#tally.readers += count - this.#readers;
    this.#readers = count;
  }

  get eventCount(): number {
    return this.#eventCount;
  }

  get finished(): boolean {
    return FINAL_STATUSES.has(this.state.status);
  }

  /** Ended, and readers may see it: the store has the end, or its save failed (`notSaved`). */
  get endShown(): boolean {
    return this.finished && !this.#endPending;
  }

  /** Why the store does not have this run's end (its save failed); undefined when it has it. */
  get notSaved(): string | undefined {
    return this.#notSaved;
  }

  /**
   * Shows readers the end `finish` recorded (and the run's last events, held with it), once its
   * save is over: `notSaved` says why the store does not have it.
   */
  showEnd(notSaved?: string): void {
    this.#endPending = false;
    this.#notSaved = notSaved;
    this.#visible = this.#eventCount;
    this.touch(this.state.updatedAt);
  }

  /** The events in memory, or undefined when they are only in the store. */
  get loadedEvents(): readonly StreamedEvent[] | undefined {
    return this.#events;
  }

  /** Forgets the events (they are in the store): a finished handler then costs only its record. */
  unloadEvents(): void {
    if (this.finished) this.#events = undefined;
  }

  setEvents(events: StreamedEvent[]): void {
    this.#events = events;
    this.#eventCount = events.length;
    this.#visible = events.length;
  }

  /**
   * Records one event of the run; returns it as streamed. A `held` event is in the log (and
   * saved with it) but readers see it only after `release()`: a question is shown once it is
   * saved, so an answer to it can never be lost by a crash.
   */
  record(event: Event, codecs: Codecs, held = false, extra?: JsonObject): StreamedEvent {
    const seq = this.#eventCount + 1;
    let type: string;
    let data: JsonObject;
    try {
      ({ type, data } = encodeEvent(event, `event #${seq}`, codecs) as { type: string; data: JsonObject });
    } catch (error) {
      // An event the app cannot save (a function in a field) is still shown, as what went wrong.
      type = eventTypeName(event.constructor as EventClass);
      data = { unserializable: error instanceof Error ? error.message : String(error) };
    }
    const streamed = this.#append(type, extra ? { ...data, ...extra } : data);
    if (event instanceof InputRequiredEvent) {
      this.#asked.push(streamed);
      this.#questions.set(streamed, event);
    }
    if (!held) this.release(streamed.at);
    return streamed;
  }

  /** Records what the server itself saw happen to the run (a human's decision), as an event of type `type` in its log. */
  note(type: string, data: JsonObject): StreamedEvent {
    const streamed = this.#append(type, data);
    // Behind a question not saved yet, it is shown with the question.
    if (this.#asked.length === 0) this.release(streamed.at);
    return streamed;
  }

  #append(type: string, data: JsonObject): StreamedEvent {
    const seq = this.#eventCount + 1;
    const streamed: StreamedEvent = { seq, type, data, at: isoNow() };
    (this.#events ??= []).push(streamed);
    this.#eventCount = seq;
    return streamed;
  }

  /** Shows readers every event recorded so far (`at`: the time of the last, when known). */
  release(at?: string): void {
    this.#visible = this.#eventCount;
    if (this.#asked.length > 0) {
      const { status, waitingFor } = this.savedState();
      this.#asked = [];
      this.state.status = status;
      this.state.waitingFor = waitingFor;
    } else if (this.state.status === "running" && this.state.waitingFor.length > 0) {
      // What savedState() would say with no question pending, without copying the state for each event.
      this.state.status = "waiting";
    }
    this.touch(at);
  }

  /**
   * The state as it is once every question recorded is shown: what is saved, so a restart sees
   * what readers will. With nothing pending it is `state` itself, not a copy (each save of a run
   * copied it): read it, do not change it.
   */
  savedState(): HandlerState {
    if (this.#asked.length === 0 && !(this.state.status === "running" && this.state.waitingFor.length > 0)) return this.state;
    let waitingFor = this.state.waitingFor;
    // A question asked again (a run resumed after a restart) replaces the earlier asking.
    for (const asked of this.#asked) {
      const key = waitKey(asked);
      waitingFor = [...waitingFor.filter((w) => waitKey(w) !== key), asked];
    }
    const status = this.state.status === "running" && waitingFor.length > 0 ? "waiting" : this.state.status;
    return { ...this.state, status, waitingFor };
  }

  /** How many events readers may see (all but a question not saved yet). */
  get visibleCount(): number {
    return this.#visible;
  }

  /**
   * Notes that `event` was sent in: the questions it answers are no longer waited for. The run
   * says which of the questions this server recorded it still waits on (`stillAsks`), approvals
   * too: an event that only carries a question's `approvalId` (a plain `HumanResponseEvent`, not
   * the workflow's answer) leaves it open. A question read back from the store (asked before a
   * restart) is taken as answered by a `HumanResponseEvent` with its `approvalId`, or by any
   * without one for a question without one, as the run asks it again if it still waits.
   */
  answered(event: Event, stillAsks: (question: Event) => boolean): void {
    const approvalId = (event as { approvalId?: unknown }).approvalId;
    const approval = event instanceof HumanResponseEvent && typeof approvalId === "string";
    this.state.waitingFor = this.state.waitingFor.filter((w) => {
      const question = this.#questions.get(w);
      if (question) return stillAsks(question);
      if ("approvalId" in w.data) return !approval || w.data.approvalId !== approvalId;
      return !(event instanceof HumanResponseEvent) || approval;
    });
    if (this.state.status === "waiting" && this.state.waitingFor.length === 0) this.state.status = "running";
    this.touch();
  }

  /** Ends the handler with a final status, shown to readers once saved (`showEnd`). */
  finish(status: HandlerStatus, outcome: { result?: unknown; error?: unknown }, codecs: Codecs): void {
    this.#endPending = true;
    this.state.status = status;
    this.state.waitingFor = [];
    if (status === "succeeded") {
      try {
        this.state.result = encodeValue(outcome.result, "result", codecs) as JsonValue;
      } catch (error) {
        this.state.result = { unserializable: error instanceof Error ? error.message : String(error) };
      }
    } else if (outcome.error !== undefined) {
      const error = outcome.error;
      const stack = status === "failed" ? stackOf(error) : undefined;
      this.state.error =
        error instanceof Error ? { name: error.name, message: error.message, ...(stack ? { stack } : {}) } : { name: "Error", message: String(error) };
    }
    this.state.updatedAt = isoNow();
  }

  /** Wakes every reader waiting for news; `at`: the time of the change, when known. */
  touch(at = isoNow()): void {
    this.state.updatedAt = at;
    if (this.#wake.length === 0) return;
    const wake = this.#wake;
    this.#wake = [];
    this.#tally.waiters -= wake.length;
    for (const fn of wake) fn();
  }

  /** Resolves at the next event or status change, or when `signal` aborts. */
  changed(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        signal?.removeEventListener("abort", done);
        const before = this.#wake.length;
        this.#wake = this.#wake.filter((fn) => fn !== done);
        this.#tally.waiters -= before - this.#wake.length;
        resolve();
      };
      this.#wake.push(done);
      this.#tally.waiters++;
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** How many readers wait for news (the leak check counts them). */
  get waiters(): number {
    return this.#wake.length;
  }

  /** The handler as clients see it: a run whose end is being saved is still `running`. */
  info(): HandlerInfo {
    const s = this.state;
    const shown = !this.#endPending;
    return {
      id: s.id,
      workflow: s.workflow,
      runId: s.runId,
      status: shown ? s.status : "running",
      input: s.input,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      eventCount: this.#visible,
      ...(s.result !== undefined && shown ? { result: s.result } : {}),
      ...(s.error && shown ? { error: s.error } : {}),
      waitingFor: s.waitingFor,
      ...(s.forkedFrom ? { forkedFrom: s.forkedFrom } : {}),
      ...(this.#notSaved !== undefined ? { notSaved: this.#notSaved } : {}),
    };
  }
}

/** A question's identity: its approvalId for an approval, else its place in the log. */
function waitKey(ev: StreamedEvent): string {
  return typeof ev.data.approvalId === "string" ? `approval:${ev.data.approvalId}` : `seq:${ev.seq}`;
}
