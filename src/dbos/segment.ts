/**
 * One part of a durable run: the run continues from its newest checkpoint until it ends or
 * waits for an answer from outside, and the part's end is recorded with its last checkpoint
 * (the run's outcome, or the checkpoint it parked on), so that a part DBOS replays ends the
 * same way at once, running nothing. Every step execution that finishes meanwhile is
 * checkpointed, so a worker that takes the part over after a crash starts from the last of
 * them; the journal keeps the side effects (`ctx.once`, the agent's tool calls) of the
 * execution that was cut short from happening twice.
 */
import { Context, InputRequiredEvent, StopEvent, checkJournalKey, useJournal, encodeEvent, encodeValue, runOf } from "../core/internal.ts";
import type { ContextJSON, Event, Journal, JournalClaim, Json, RunChange, SavedEvent, AnyWorkflow } from "../core/internal.ts";
import { failedWith } from "./checkpoints.ts";
import type { Checkpoints, RecordedOutcome } from "./checkpoints.ts";
import { DbosLeaseLostError, DbosRuntimeError } from "./errors.ts";
import { leaseLost } from "./lease.ts";
import type { Fence } from "./lease.ts";

/** How a part ended: the run finished (its result), failed, or waits for an answer. */
export type SegmentOutcome =
  | { readonly kind: "finished"; readonly result: Json }
  | { readonly kind: "failed"; readonly error: { readonly name: string; readonly message: string } }
  | { readonly kind: "waiting" };

/** What a part needs: the run, its workflow, where to record, where to stream. */
export interface SegmentInput {
  readonly runId: string;
  readonly workflow: AnyWorkflow;
  readonly input: Json;
  /** Every answer sent to the run so far, in order; those the checkpoint lacks are delivered. */
  readonly answers: readonly SavedEvent[];
  /** Where the run's checkpoints and end are recorded, each with the events streamed just before it (see `write`). */
  readonly checkpoints: Checkpoints;
  /** The part's journal, fenced like its checkpoints. */
  readonly journal: Journal;
  /** What this part's writes are fenced by: its worker's lease and DBOS's token of this execution. */
  readonly fence: Fence;
  /** Aborted when the run is cancelled (`DbosRuns.cancel`): the stepflow run is cancelled with it. */
  readonly signal?: AbortSignal | undefined;
  /** Whether an event goes to the run's stream. */
  readonly streamed: (event: Event) => boolean;
  /**
   * Writes events of the run, in order, to its stream (DBOS's, readable from any process): the
   * events streamed while an earlier write was under way come together, as one write, and those
   * streamed before a checkpoint (or the run's end) that is written before them go with it.
   */
  readonly write: (events: readonly SavedEvent[]) => Promise<void>;
  /**
   * Optional: who claims the part's side effects in `journal` (`claimant` in `lease.ts`), when
   * its claims are rows of `FencedJournal`'s table in the database of `checkpoints`: a claim
   * made while the checkpoint it waits for is not queued yet is then written with it.
   */
  readonly claimant?: string | undefined;
  /** Optional: the context a new run starts from (a session turn's: the stored conversation); `undefined` for a fresh one. */
  readonly startContext?: (() => Promise<Context | undefined>) | undefined;
  /**
   * Optional: called with the run's context and outcome once it has ended (finished or failed)
   * and its checkpoints are written (a session turn saves the conversation here). It resolves
   * with the outcome to record: `outcome`, an error that fails the run, or the outcome of an
   * earlier attempt at the part whose work is kept (a session it saved); what it throws fails
   * the part, which DBOS runs again.
   */
  readonly finished?: ((ctx: Context, outcome: RecordedOutcome) => Promise<RecordedOutcome>) | undefined;
}

/**
 * How long (ms) streamed events wait before their own write: a step that finishes meanwhile
 * writes them with its checkpoint, in one statement. A step that streams as it goes (a model's
 * tokens) has them written this much later than it could, and in fewer writes.
 */
const STREAM_LINGER_MS = 20;

/** Events streamed and not written yet: `taken` once a checkpoint (or the run's end) writes them. */
interface Batch {
  readonly events: SavedEvent[];
  taken: boolean;
  linger: ReturnType<typeof setTimeout> | undefined;
}

/** A claim of the journal waiting for the checkpoint it is written with: its key, and what settles it. */
interface PendingClaim {
  readonly key: string;
  readonly settle: (claim: Promise<JournalClaim>) => void;
}

const CLAIMED: JournalClaim = Object.freeze({ claimed: true });

/** Marks `batch` as written by a checkpoint's write: its own write is not made. */
function takeBatch(batch: Batch): void {
  batch.taken = true;
  clearTimeout(batch.linger);
  batch.linger = undefined;
}

/** Runs the part; see the module's comment. */
export async function runSegment(part: SegmentInput): Promise<SegmentOutcome> {
  const { runId, workflow, checkpoints, fence } = part;
  // A new run's first checkpoint goes with the look for one (one statement); a session turn's starts from its session, read first.
  const first = part.answers.length === 0 && !part.startContext ? await initialCheckpoint(part) : undefined;
  const found = await checkpoints.load(runId, fence, first);
  // The run's end is recorded (this part is delivered again after it ended): it is not run again.
  if (found.outcome) return found.outcome;
  // This part parked already, and DBOS replays it: a later part has gone on (its checkpoints hold more answers), or the run still waits.
  const newest = found.checkpoint;
  if (newest && (newest.answered > part.answers.length || (newest.parked === true && newest.answered === part.answers.length))) return { kind: "waiting" };
  const checkpoint = newest ?? (await firstCheckpoint(part));
  const context = structuredClone(checkpoint.context) as { -readonly [K in keyof ContextJSON]: ContextJSON[K] };
  // An answer goes where a `waitForEvent` finds it, decoded by the class the step waits for.
  const fresh = part.answers.slice(checkpoint.answered);
  if (fresh.length > 0 && context.run) context.run = { ...context.run, unclaimed: [...context.run.unclaimed, ...fresh] };
  const answered = Math.max(checkpoint.answered, part.answers.length);
  const ctx = Context.fromJSON(workflow, context);
  // The part's writes (checkpoints and stream events) in the order the run made them: a step's
  // checkpoint is written after the events it streamed, so a worker taking over never skips one.
  let writes: Promise<void> = Promise.resolve();
  /** Settles once the checkpoint of every step execution finished so far is written. */
  let saving: Promise<void> = writes;
  let fenced: DbosLeaseLostError | undefined;
  const noteFenced = (error: unknown) => {
    if (error instanceof DbosLeaseLostError) fenced ??= error;
    throw error;
  };
  /** The newest snapshot not queued for writing yet, what waits for its write (`saving`), and the journal keys to claim with it. */
  let due: { snapshot: ContextJSON; readonly written: (done: Promise<void>) => void; readonly claims: PendingClaim[] } | undefined;
  // Work with a side effect waits until the checkpoints of the step executions finished before
  // it are written: a worker taking over never runs again a step whose successors had effects.
  // Claimed while such a checkpoint is not queued yet (the usual case: the next step starts as
  // the one before finishes), the claim is written with it, in the same statement.
  const { claimant } = part;
  useJournal(ctx, {
    description: part.journal.description,
    begin: (key) => {
      if (!due || claimant === undefined) return saving.then(() => part.journal.begin(key)).catch(noteFenced);
      checkJournalKey(key);
      const claims = due.claims;
      return new Promise<JournalClaim>((settle) => claims.push({ key, settle })).catch(noteFenced);
    },
    finish: (key, result) => part.journal.finish(key, result),
    release: (key) => part.journal.release(key),
  });
  // The run stops when it is cancelled, and when this worker learns it lost its lease (the run is another worker's now).
  const signal = AbortSignal.any([fence.lease.signal, ...(part.signal ? [part.signal] : [])]);
  const handler = workflow.run(undefined, { ctx, signal });
  const run = runOf(ctx);
  if (!run) throw new DbosRuntimeError(`Run ${runId} did not start on its restored context.`);

  let seq = checkpoint.seq;
  let saveError: unknown;
  let unsaveable: unknown;
  let wake: (() => void) | undefined;
  /**
   * The run as it is now, kept as the next checkpoint. Taken synchronously when the engine
   * reports a step execution finished: the transition is complete (the step's output routed,
   * the steps it starts counted in flight) and none of those steps has run yet, so the
   * checkpoint holds none of their work half done.
   */
  const snapshot = (ended: "ended-not-saved" | "parked"): unknown => {
    let taken: ContextJSON;
    try {
      taken = ctx.toJSON();
    } catch (error) {
      // A run that cannot be saved cannot be durable: it ends here, and the run fails with this error.
      unsaveable ??= error;
      queueMicrotask(() => handler.cancel());
      return error;
    }
    // A snapshot taken once the run has ended holds no result to go on from: the run's end is
    // recorded with its outcome below, in one write, or (a worker dies first) the last step runs again.
    if (ended === "ended-not-saved" && !taken.running) return undefined;
    if (due) due.snapshot = taken;
    else {
      let written!: (done: Promise<void>) => void;
      saving = new Promise<void>((resolve) => (written = resolve));
      due = { snapshot: taken, written, claims: [] };
    }
    wake?.();
    return undefined;
  };
  /**
   * The events of the stream write queued last and not started yet: later events join it, and a
   * checkpoint queued before it starts takes them into its own write (one statement for both).
   */
  let batch: Batch | undefined;
  /** Queues the write of the snapshot due (after the writes before it); several taken meanwhile make one write, the newest. `parked`: the one the part ends on. */
  const queueCheckpoint = (parked = false) => {
    const pending = due;
    due = undefined;
    if (!pending) return;
    // The events streamed before this checkpoint was taken go with it; those streamed after, after it.
    const carried = batch;
    if (carried) takeBatch(carried);
    batch = undefined;
    const next = { seq: ++seq, answered, context: pending.snapshot, parked };
    const { claims } = pending;
    const keys = claims.map(({ key }) => key);
    const saved = writes.then(() => checkpoints.save(runId, next, fence, carried?.events, claimant === undefined ? undefined : { keys, claimant }));
    writes = saved.then(
      () => undefined,
      (error: unknown) => void (saveError ??= error),
    );
    pending.written(writes);
    // A key the statement did not claim (someone holds it: an earlier attempt's claim, or this one's whose reply an outage lost),
    // or a statement that failed, leaves the claim to the journal, as if it had waited for the checkpoint.
    for (const { key, settle } of claims) {
      settle(
        saved.then(
          (claimed) => (claimed.includes(key) ? CLAIMED : part.journal.begin(key)),
          () => part.journal.begin(key),
        ),
      );
    }
  };
  // Checkpoints are taken at the run's transitions, as the engine reports them, never from the events it streams.
  const unsubscribe = run.subscribe((change: RunChange) => {
    if (change.kind === "stepFinished") snapshot("ended-not-saved");
  });
  let parked = false;
  let writeError: unknown;
  const streamed = (event: Event) => {
    if (event instanceof StopEvent) return;
    if (event instanceof InputRequiredEvent && !parked) {
      // Nothing can answer in this process: the run is kept in the database until an answer comes.
      parked = true;
      handler.cancel();
    }
    // A question is always streamed: whoever answers it reads it there.
    if (!(event instanceof InputRequiredEvent) && !part.streamed(event)) return;
    try {
      const encoded = encodeEvent(event, `an event of run ${runId}`, workflow.codecs);
      // Joins the write queued last, while it waits for those before it: one write for a burst of events.
      if (batch) batch.events.push(encoded);
      else {
        const queued: Batch = { events: [encoded], taken: false, linger: undefined };
        batch = queued;
        // Held a moment first: the checkpoint of the step that streamed them, if it finishes meanwhile, writes them with it.
        queued.linger = setTimeout(() => {
          queued.linger = undefined;
          if (queued.taken) return;
          writes = writes
            .then(() => {
              if (batch === queued) batch = undefined;
              return queued.taken ? undefined : part.write(queued.events);
            })
            .catch((error: unknown) => void (writeError ??= error));
        }, STREAM_LINGER_MS);
      }
    } catch (error) {
      writeError ??= error;
    }
  };
  // Writes are queued, not awaited here: a loop that waited for each (a database write) would fall behind the run.
  const events = handler.streamEvents()[Symbol.asyncIterator]();
  let next: Promise<IteratorResult<Event>> | undefined;
  const take = () => (next ??= events.next());
  const IDLE = Symbol("idle");
  for (let ended = false; !ended;) {
    const woken = new Promise<typeof IDLE>((resolve) => (wake = () => resolve(IDLE)));
    if (due) wake?.();
    const got = await Promise.race([take(), woken]);
    if (got !== IDLE) {
      next = undefined;
      if (got.done) break;
      streamed(got.value);
      continue;
    }
    // A checkpoint is due. The events the run streamed before it was taken come first: those handed
    // over already (an already settled `next` wins the race against a settled IDLE) are queued now.
    for (;;) {
      const buffered = await Promise.race([take(), Promise.resolve(IDLE)]);
      if (buffered === IDLE) break;
      next = undefined;
      if (buffered.done) {
        ended = true;
        break;
      }
      streamed(buffered.value);
    }
    queueCheckpoint();
  }
  wake = undefined;
  unsubscribe();
  queueCheckpoint();
  // The events streamed since the last checkpoint go with the run's end, or with the checkpoint of its park.
  const tail = batch;
  if (tail) takeBatch(tail);
  batch = undefined;
  await writes;
  let outcome: SegmentOutcome;
  if (unsaveable !== undefined) {
    await handler.then(
      () => undefined,
      () => undefined,
    );
    await writes;
    outcome = failedWith(unsaveable);
  } else {
    try {
      const result: unknown = await handler;
      outcome = { kind: "finished", result: encodeValue(result ?? null, `the result of run ${runId}`, workflow.codecs) };
    } catch (error) {
      if (parked) {
        const unsaved = snapshot("parked");
        batch = tail;
        queueCheckpoint(true);
        batch = undefined;
        // The part ends on this checkpoint, marked parked: replayed, the part ends waiting again rather than running. A run that
        // cannot be saved here could not go on after the answer from where it asked: it fails, like at any other checkpoint.
        outcome = unsaved === undefined ? { kind: "waiting" } : failedWith(unsaved);
      } else {
        outcome = failedWith(error);
      }
    }
  }
  await writes;
  // Fenced: whatever this execution made of the run is not the run's; it stops here, writing nothing more.
  if (fenced) throw fenced;
  if (saveError instanceof DbosLeaseLostError) throw saveError;
  if (fence.lease.signal.aborted) throw leaseLost(fence, `the outcome of run ${runId}`);
  // A lost checkpoint or stream write fails the part: DBOS runs it again, from the last checkpoint that was written.
  if (saveError !== undefined) throw saveError;
  if (writeError !== undefined) throw writeError;
  if (outcome.kind !== "waiting" && part.finished) outcome = await part.finished(ctx, outcome);
  if (outcome.kind !== "waiting") await checkpoints.end(runId, { seq: seq + 1, answered }, outcome, fence, tail?.events);
  return outcome;
}

/**
 * The run as it is before its first step: saved before anything runs, so that a worker taking
 * over keeps the run's id (its journal keys) and never starts it a second time.
 */
async function firstCheckpoint(part: SegmentInput): Promise<{ seq: number; answered: number; context: ContextJSON }> {
  const checkpoint = await initialCheckpoint(part);
  await part.checkpoints.save(part.runId, checkpoint, part.fence);
  return checkpoint;
}

/** The run before its first step, not saved yet: from the context `startContext` gives (a session's), else a fresh one. */
async function initialCheckpoint(part: SegmentInput): Promise<{ seq: number; answered: number; context: ContextJSON }> {
  const ctx = (await part.startContext?.()) ?? new Context(part.workflow);
  const handler = part.workflow.run(part.input as object, { ctx });
  const context = ctx.toJSON(); // the StartEvent is queued; the run starts a microtask later
  handler.cancel();
  await handler.then(
    () => undefined,
    () => undefined,
  );
  return { seq: 0, answered: 0, context };
}
