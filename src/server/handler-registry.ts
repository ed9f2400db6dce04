/**
 * The runs a server holds: starts them, records their events, answers questions sent in,
 * cancels them, saves them at each step that matters (start, a question asked, the end) and
 * brings back the unfinished ones when a server starts on the same store. A finished run leaves
 * memory once saved (it is read back from the store on request), and an unfinished one is run
 * by one server of those sharing the store: the one holding its lease.
 */
import {
  Context,
  WorkflowCancelledByUser,
  WorkflowTimeoutError,
  InputRequiredEvent,
  StepStateChangedEvent,
  WorkflowIdleEvent,
  EventReceivedEvent,
  approvalAnswerOf,
  RunEndedEvent,
  DEFAULT_CODECS,
  encodeEvent,
  eventTypeName,
  newRunId,
  runOf,
  stillAsks,
  untrustedContext,
  useJournal,
} from "../core/internal.ts";
import type { ContextJSON, Event, EventClass, WorkflowHandler, AnyWorkflow } from "../core/internal.ts";
import { contextOf } from "./context-json.ts";
import { DEFAULT_MAX_PENDING_EVENTS, DEFAULT_MAX_PENDING_EVENT_BYTES, checkSendable, decisionOf, decodeSentEvent, sendableTypes } from "./event-intake.ts";
import type { PendingLimits, Requester } from "./event-intake.ts";
import type { Checkpoint, ForkOrigin, HandlerInfo, HandlerStatus, JsonObject, StreamedEvent } from "../client/types.ts";
import { FINAL_STATUSES, ServedHandler, isoNow, stackOf } from "./served-handler.ts";
import type { HandlerState } from "./served-handler.ts";
import type { ReaderTally } from "./served-handler.ts";
import { CorruptHandlerError } from "./handler-store.ts";
import { SessionConflictError } from "../sessions/types.ts";
import type { HandlerStore, SaveOutcome, StoredCheckpoint, StoredHandler } from "./handler-store.ts";
import { LEASE_MS, leaseHeld } from "./handler-lease.ts";
import { checkStartRequest, parseInput } from "./start-request.ts";
import { ServerRequestError, heldElsewhere, notSavedEvent, takenAtEnd, takenBeforeSaved, unsavedEnd } from "./refusals.ts";
import type { ServedWorkflow } from "./served-workflow.ts";

/** Filters of {@link HandlerRegistry.list}. */
export interface HandlerFilter {
  readonly workflow?: string;
  readonly status?: readonly HandlerStatus[];
  readonly limit?: number;
}

/** What the server knows of an event it sent into a run: who sent it, and for an answer to an approval, the decision to record. */
interface Sent {
  readonly from: Requester;
  readonly decision: JsonObject | undefined;
  /** Told once the run took the event and its record was made: the save that holds both. */
  readonly taken: (saved: Taken) => void;
}

/** The save of an event the run took, with its record: how it went, or why the context could not be encoded. */
interface Taken {
  readonly save: Promise<SaveOutcome>;
  readonly unencodable?: unknown;
}

interface LiveRun {
  readonly handler: WorkflowHandler;
  readonly ctx: Context;
  readonly done: Promise<void>;
}

/** The handlers of one server. */
export class HandlerRegistry {
  readonly #workflows: ReadonlyMap<string, ServedWorkflow>;
  readonly #store: HandlerStore;
  /** The runs this server runs, and finished ones until their last save is done (or failed: then kept). */
  readonly #handlers = new Map<string, ServedHandler>();
  readonly #live = new Map<string, LiveRun>();
  /** Runs another server took over: this server stops them without saving. */
  readonly #taken = new Set<string>();
  /** Take-overs in progress, so that two requests at once take a handler over once. */
  readonly #taking = new Map<string, Promise<ServedHandler>>();
  /** Handlers `peek` read as the store has them, whose run `claim` takes over here. */
  readonly #toClaim = new WeakSet<ServedHandler>();
  readonly #tally: ReaderTally = { readers: 0, waiters: 0 };
  /** The events sent in and not yet seen on their run's stream, by identity: who sent each. */
  readonly #sent = new WeakMap<Event, Sent>();
  /** Runs this server ended whose end the store does not have, and what to answer for them (see `checkSavedEnd`). */
  readonly #unsavedEnds = new WeakMap<ServedHandler, ServerRequestError>();
  readonly #renewal: NodeJS.Timeout;
  #closing = false;

  readonly #acceptMidRunContexts: boolean;
  readonly #limits: PendingLimits;

  constructor(
    workflows: ReadonlyMap<string, ServedWorkflow>,
    store: HandlerStore,
    options: { readonly acceptMidRunContexts?: boolean; readonly maxPendingEvents?: number; readonly maxPendingEventBytes?: number } = {},
  ) {
    this.#workflows = workflows;
    this.#store = store;
    this.#acceptMidRunContexts = options.acceptMidRunContexts ?? false;
    this.#limits = {
      maxPendingEvents: options.maxPendingEvents ?? DEFAULT_MAX_PENDING_EVENTS,
      maxPendingEventBytes: options.maxPendingEventBytes ?? DEFAULT_MAX_PENDING_EVENT_BYTES,
    };
    // The leases of the runs this server runs are renewed well before they end.
    this.#renewal = setInterval(() => this.#renewLeases(), LEASE_MS / 6);
    this.#renewal.unref();
  }

  /** Called by the store when another server took a handler over. */
  taken(id: string): void {
    this.#taken.add(id);
    const live = this.#live.get(id);
    this.#handlers.delete(id);
    this.#store.forget(id);
    live?.handler.cancel();
  }

  #renewLeases(): void {
    const now = Date.now();
    for (const [id, served] of this.#handlers) if (!served.finished && this.#live.has(id) && this.#store.leaseDue(id, now)) void this.#store.save(served);
  }

  workflow(name: string): ServedWorkflow {
    const wf = this.#workflows.get(name);
    if (!wf)
      throw new ServerRequestError(
        404,
        "workflow_not_found",
        `No workflow named ${JSON.stringify(name)}. Workflows: ${[...this.#workflows.keys()].join(", ")}.`,
      );
    return wf;
  }

  /** Starts a run of workflow `name`; `from` continues in the saved context of a finished handler (a conversation's next turn). */
  async start(
    name: string,
    input: JsonObject | undefined,
    options: { timeout?: number | null; from?: string; context?: JsonObject } = {},
  ): Promise<ServedHandler> {
    if (this.#closing) throw new ServerRequestError(503, "closing", "The server is shutting down; start the run again once it is back.");
    const wf = this.workflow(name);
    const request = checkStartRequest(wf, input, options, this.#acceptMidRunContexts);
    let ctx = request.ctx;
    if (options.from !== undefined) {
      // Only a finished run is continued: one whose server has gone is not taken over to be refused.
      const previous = await this.peek(options.from);
      if (previous.state.workflow !== name)
        throw new ServerRequestError(409, "wrong_workflow", `Handler ${options.from} ran ${previous.state.workflow}, not ${name}.`);
      if (!previous.finished)
        throw new ServerRequestError(
          409,
          "not_finished",
          `Handler ${options.from} has not finished yet (${previous.state.status}); continue from it once it has.`,
        );
      const saved = await this.#store.context(options.from);
      if (!saved) throw new ServerRequestError(409, "no_context", `Handler ${options.from} has no saved context to continue from.`);
      // A run cancelled (or failed) while it waited saved what it was doing: not a conversation's next turn.
      if (saved.run)
        throw new ServerRequestError(
          409,
          "not_continuable",
          `Handler ${options.from} ended (${previous.state.status}) in the middle of its run: its saved context holds that unfinished run, not a conversation to go on with. Continue from the conversation's last run that succeeded, fork this one to run it again (POST /api/handlers/${options.from}/fork), or start without continueFrom.`,
        );
      ctx = Context.fromJSON(wf.workflow, saved);
    }
    return this.#launch(name, wf, request.input, ctx, { input: input ?? {}, timeout: options.timeout, notId: options.from });
  }

  /**
   * Starts `wf` on `input` (or the run saved in `ctx`) as a new handler. Its id is the run's
   * id, so that one id names the run everywhere (unless another handler has it: a run continued
   * from a context saved mid-way keeps its id).
   */
  #launch(
    name: string,
    wf: ServedWorkflow,
    input: object | undefined,
    ctx: Context | undefined,
    how: { input: JsonObject; timeout?: number | null | undefined; notId?: string | undefined; forkedFrom?: ForkOrigin },
  ): ServedHandler {
    let handler: WorkflowHandler;
    try {
      handler = wf.workflow.run(input, {
        ...(ctx ? { ctx } : {}),
        lifecycleEvents: true,
        ...(how.timeout !== undefined ? { timeout: how.timeout } : {}),
      });
    } catch (error) {
      // The engine refuses what it cannot run (a bad timeout, a context mid-run given input): the request's fault.
      throw new ServerRequestError(400, "cannot_start", error instanceof Error ? error.message : String(error));
    }
    const runId = handler.runId;
    const id = runId === how.notId || this.#handlers.has(runId) ? newRunId() : runId;
    const now = isoNow();
    const served = new ServedHandler(
      {
        id,
        workflow: name,
        runId,
        status: "running",
        input: how.input,
        createdAt: now,
        updatedAt: now,
        waitingFor: [],
        ...(how.forkedFrom ? { forkedFrom: how.forkedFrom } : {}),
        ...(ctx ? {} : { fromInput: true }),
      },
      [],
      0,
      this.#tally,
    );
    this.#handlers.set(id, served);
    // Before its first step (the run starts in a microtask): the first point a fork can start
    // from. A run started from its input alone is forked from that input: nothing to encode.
    // (`fromInput` in its record says so, which costs no write of its own).
    if (ctx) this.#checkpoint(served, handler.ctx, "start");
    void this.#store.save(served, undefined, false, true);
    this.#follow(served, wf.workflow, handler);
    return served;
  }

  /** Keeps the context as it is now as a point to fork from, labelled `label`, after the events recorded so far. */
  #checkpoint(served: ServedHandler, ctx: Context, label: string, context = contextOf(ctx)): void {
    // Only a context saved mid-run holds a run to go on with.
    if (context?.run) this.#store.checkpoint(served.state.id, { seq: served.eventCount, at: isoNow(), label, context });
  }

  /** Records a run's events until it ends, saving it when it asks a question and when it ends. */
  #follow(served: ServedHandler, workflow: AnyWorkflow, handler: WorkflowHandler): void {
    const id = served.state.id;
    const ctx = handler.ctx;
    // Tool calls are claimed in the store's journal: a run that another server also resumed runs each call once.
    const journal = this.#store.sessions.journal;
    if (journal) useJournal(ctx, journal);
    // The errors themselves come from the run's changes: its stream says only their messages. Each
    // failed attempt is one change and one StepStateChangedEvent, in the same order.
    const stacks: (string | undefined)[] = [];
    runOf(ctx)?.subscribe((change) => {
      if (change.kind === "stepFailed") stacks.push(stackOf(change.error));
    });
    const done = (async () => {
      try {
        for await (const ev of handler.streamEvents()) {
          if (this.#closing || this.#taken.has(id)) continue; // the cancel of a shutdown is not part of the run's story
          // The run waits for outside input (the inspector shows "waiting for input"): saved, so
          // that every server sharing the store shows it too. A trivial run never idles: no cost there.
          if (ev instanceof WorkflowIdleEvent) {
            served.record(ev, workflow.codecs);
            void this.#store.save(served);
            continue;
          }
          if (ev instanceof StepStateChangedEvent) {
            const stack = ev.state === "failed" ? stacks.shift() : undefined;
            served.record(ev, workflow.codecs, false, stack ? { stack } : undefined);
            // A run that has ended holds nothing to go on with: no point in encoding it.
            if (ev.state === "finished" && !runOf(ctx)?.done) this.#checkpoint(served, ctx, `after step ${ev.step}`);
            continue;
          }
          if (ev instanceof EventReceivedEvent) {
            this.#received(served, workflow, ctx, ev);
            continue;
          }
          if (!(ev instanceof InputRequiredEvent)) {
            // The run's end (its status) is shown with the stream's end, once saved (`#showEnd`).
            served.record(ev, workflow.codecs, ev instanceof RunEndedEvent);
            continue;
          }
          // Saved before anyone sees it: an answer given to a question shown is never lost to a crash.
          served.record(ev, workflow.codecs, true);
          const context = contextOf(ctx);
          this.#checkpoint(served, ctx, `asked ${eventTypeName(ev.constructor as EventClass)}`, context);
          await this.#store.save(served, context);
          served.release();
        }
      } catch {
        // The outcome below says what went wrong.
      }
      let status: HandlerStatus = "succeeded";
      let outcome: { result?: unknown; error?: unknown };
      try {
        outcome = { result: await handler };
      } catch (error) {
        outcome = { error };
        status = error instanceof WorkflowCancelledByUser ? "cancelled" : error instanceof WorkflowTimeoutError ? "timedOut" : "failed";
      }
      this.#live.delete(id);
      // Taken over by another server, which runs it from now on: nothing of this copy is saved.
      if (this.#taken.delete(id)) return;
      // Shut down mid-run: the context (kept by the cancel) lets the next server continue it.
      if (this.#closing && status === "cancelled") return void (await this.#store.save(served, contextOf(ctx), true));
      served.finish(status, outcome, workflow.codecs);
      // A failed save is recorded before it is reported, so `#showEnd` tells it even when `onError` throws.
      await this.#store.save(served, contextOf(ctx)).catch(() => {});
      // Not saved, and nothing saves it again: it stays in memory (GET answers it here), and run-and-wait says so.
      if (!this.#showEnd(served)) return;
      // Saved: read back from the store from now on, so that a server's memory does not grow with the runs it served.
      this.#store.ended(id, served.loadedEvents);
      served.unloadEvents();
      this.#handlers.delete(id);
      this.#store.forget(id);
    })();
    this.#live.set(id, { handler, ctx, done });
  }

  /**
   * Shows readers the end just saved; returns whether the store has it. When it does not, the
   * end is shown with why (`notSaved`), and run-and-wait answers that.
   */
  #showEnd(served: ServedHandler): boolean {
    const id = served.state.id;
    const refused = this.#store.saveFailure(id);
    // Another server took the run over as this one saved its end: the store has that server's run, not this result.
    const failure = this.#handlers.get(id) !== served ? takenAtEnd(served) : refused && unsavedEnd(served, refused.error);
    if (!failure) {
      served.showEnd();
      return true;
    }
    this.#unsavedEnds.set(served, failure);
    served.showEnd(failure.message);
    return false;
  }

  /**
   * Records an event the run accepted from outside, where the run took it among its events: an
   * answer to an approval as an `ApprovalDecision`, any other as an `EventReceivedEvent` with
   * the event's type and fields, and who sent it (`by`: the server's principal; `label`: the
   * client's own word).
   */
  #received(served: ServedHandler, workflow: AnyWorkflow, ctx: Context, ev: EventReceivedEvent): void {
    const sent = this.#sent.get(ev.event);
    this.#sent.delete(ev.event);
    if (sent?.decision) served.note("ApprovalDecision", sent.decision);
    else {
      let data: JsonObject;
      try {
        data = encodeEvent(ev.event, ev.eventType, workflow.codecs).data as JsonObject;
      } catch (error) {
        data = { unserializable: error instanceof Error ? error.message : String(error) };
      }
      served.note(eventTypeName(EventReceivedEvent), {
        runId: ev.runId,
        type: ev.eventType,
        data,
        ...(sent ? { by: sent.from.by, ...(sent.from.label !== undefined ? { label: sent.from.label } : {}) } : {}),
      });
    }
    // The event and its record are saved together, with a context that holds the event (queued,
    // or given back by the step that took it): a server that restarts or takes the run over has
    // both. `send` answers once this save is done.
    let context: ContextJSON | undefined;
    let unencodable: unknown;
    try {
      context = ctx.toJSON();
    } catch (error) {
      unencodable = error;
    }
    const save = this.#store.save(served, context);
    sent?.taken(context ? { save } : { save, unencodable });
  }

  /** Brings back the unfinished stored handlers that no other server runs, and continues them. */
  async restore(): Promise<void> {
    for (const stored of await this.#store.loadUnfinished()) {
      if (this.#handlers.has(stored.state.id) || leaseHeld(stored.lease)) continue;
      await this.#takeOver(stored);
    }
  }

  /** Runs a stored unfinished handler here if this server gets its lease; else answers it as another server shows it. */
  async #takeOver(stored: StoredHandler): Promise<ServedHandler> {
    const { state } = stored;
    const served = new ServedHandler({ ...state }, undefined, stored.eventCount, this.#tally);
    if (this.#closing || !(await this.#store.claim(stored))) {
      served.heldBy = (await this.#store.load(state.id).catch(() => undefined))?.lease?.holder ?? stored.lease?.holder ?? "another server";
      return served;
    }
    this.#taken.delete(state.id);
    this.#handlers.set(state.id, served);
    served.setEvents(await this.#store.loadEvents(state.id));
    const wf = this.#workflows.get(state.workflow);
    if (!wf || !stored.context) {
      const why = !wf
        ? `this server does not run the workflow ${JSON.stringify(state.workflow)} any more`
        : "the server stopped before the run saved its context";
      served.finish(
        "failed",
        { error: new ServerRequestError(500, "lost", `The run could not continue after a restart: ${why}. Start it again.`) },
        wf?.workflow.codecs ?? DEFAULT_CODECS,
      );
      await this.#store.save(served);
      this.#showEnd(served);
      return served;
    }
    try {
      const ctx = Context.fromJSON(wf.workflow, stored.context);
      const handler = wf.workflow.run(undefined, { ctx, lifecycleEvents: true });
      served.state.runId = handler.runId;
      this.#follow(served, wf.workflow, handler);
    } catch (error) {
      served.finish("failed", { error }, wf.workflow.codecs);
      await this.#store.save(served);
      this.#showEnd(served);
    }
    return served;
  }

  /**
   * The handler with this id: one this server runs, else read from the store. An unfinished one
   * whose server has gone (its lease ended or was given up) is taken over and continued here.
   * `withEvents`: a finished one read from the store comes with its events (for a reader of them).
   */
  async get(id: string, withEvents = false): Promise<ServedHandler> {
    return this.#find(id, withEvents, true);
  }

  /**
   * The handler with this id, as `get` finds it, but an unfinished one whose server has gone is
   * not taken over: it is shown as the store has it until `claim` takes it. For a request that
   * checks what a client sent first: one refused changes nothing (no lease written, no save).
   */
  peek(id: string): Promise<ServedHandler> {
    return this.#find(id, false, false);
  }

  /** The handler `peek` gave, taken over here if its server has gone (as `get` does); any other as it is. */
  async claim(served: ServedHandler): Promise<ServedHandler> {
    return this.#toClaim.has(served) ? this.get(served.state.id) : served;
  }

  async #find(id: string, withEvents: boolean, takeOver: boolean): Promise<ServedHandler> {
    const held = this.#handlers.get(id);
    if (held) return held;
    const notFound = () => new ServerRequestError(404, "handler_not_found", `No handler with id ${JSON.stringify(id)}. List them with GET /api/handlers.`);
    // Handler ids are UUIDs: anything else is not in the store (and may not even be a valid session id).
    if (!/^[0-9A-Za-z-]{1,100}$/.test(id)) throw notFound();
    let stored: (StoredHandler & { readonly events?: StreamedEvent[] }) | undefined;
    try {
      stored = await this.#store.load(id, withEvents);
    } catch (error) {
      if (error instanceof CorruptHandlerError) throw new ServerRequestError(500, "corrupt_handler", error.message);
      throw error;
    }
    if (!stored) throw notFound();
    const { state } = stored;
    if (FINAL_STATUSES.has(state.status)) {
      const served = new ServedHandler({ ...state }, undefined, stored.eventCount, this.#tally);
      // Read with the record, so of the same version: the log of a run that has ended.
      if (stored.events) served.setEvents(stored.events);
      return served;
    }
    if (leaseHeld(stored.lease) || this.#closing) {
      const served = new ServedHandler({ ...state }, undefined, stored.eventCount, this.#tally);
      served.heldBy = stored.lease?.holder ?? "another server";
      return served;
    }
    if (!takeOver) {
      const served = new ServedHandler({ ...state }, undefined, stored.eventCount, this.#tally);
      this.#toClaim.add(served);
      return served;
    }
    let taking = this.#taking.get(id);
    if (!taking) {
      taking = this.#takeOver(stored).finally(() => this.#taking.delete(id));
      this.#taking.set(id, taking);
    }
    return taking;
  }

  /**
   * For a handler another server runs: after a moment, reads it again from the store (what that
   * server has saved). False when its server has stopped: the stream ends, and the client's next
   * request takes the run over.
   */
  async refresh(served: ServedHandler, signal: AbortSignal): Promise<boolean> {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, REFRESH_MS);
      signal.addEventListener("abort", done, { once: true });
    });
    if (signal.aborted) return true;
    const id = served.state.id;
    const stored = await this.#store.load(id).catch(() => undefined);
    if (!stored) return false;
    Object.assign(served.state, stored.state);
    served.setEvents(await this.#store.loadEvents(id));
    if (FINAL_STATUSES.has(stored.state.status)) served.heldBy = undefined;
    else if (leaseHeld(stored.lease)) served.heldBy = stored.lease.holder;
    else return false;
    return true;
  }

  /** The newest handlers (by creation) that match `filter`: this server's runs, then the store's. */
  async list(filter: HandlerFilter = {}): Promise<HandlerInfo[]> {
    const statuses = filter.status ? new Set(filter.status) : undefined;
    const limit = filter.limit ?? 100;
    const keep = (s: HandlerState | HandlerInfo) => (filter.workflow === undefined || s.workflow === filter.workflow) && (!statuses || statuses.has(s.status));
    // As clients see them: a run whose end is being saved is listed as running.
    const here = [...this.#handlers.values()].map((h) => h.info()).filter(keep);
    const stored = (await this.#store.list(keep, limit, new Set(this.#handlers.keys()))).map((s) =>
      new ServedHandler({ ...s.state }, undefined, s.eventCount, this.#tally).info(),
    );
    const all = [...here, ...stored].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    return all.slice(0, limit);
  }

  /** The handler's events (loaded from the store for a finished handler of an earlier server). */
  async events(served: ServedHandler): Promise<readonly StreamedEvent[]> {
    const loaded = served.loadedEvents;
    if (loaded) return loaded;
    const events = await this.#store.loadEvents(served.state.id);
    // A finished handler's events are read from the store each time rather than held for ever.
    if (!served.loadedEvents && !served.finished) served.setEvents(events);
    return served.loadedEvents ?? events;
  }

  /** Decodes `{ type, data }` sent by a client into an event of the handler's workflow: one it accepts from outside, else 403. */
  decode(served: ServedHandler, type: string, data: JsonObject): Event {
    return decodeSentEvent(this.workflow(served.state.workflow), served, type, data, this.#live.get(served.state.id)?.ctx);
  }

  /**
   * Sends an event into a running handler. Once the run takes it, it is recorded in the run's
   * events with who sent it (`from`): an answer to an approval as an `ApprovalDecision` (approve
   * or deny, why, and what was asked), any other event as an `EventReceivedEvent`.
   */
  async send(served: ServedHandler, event: Event, from: Requester = { by: "local user" }): Promise<void> {
    const live = this.#live.get(served.state.id);
    if (!live && !served.finished) throw heldElsewhere(served);
    // A run that has just ended (its end not recorded yet) takes nothing either: the engine would refuse it.
    // How it ended is told once `GET` shows it, when the store has it: not before, here.
    if (!live || served.finished || !live.handler.ctx.running)
      throw new ServerRequestError(
        409,
        "handler_finished",
        served.endShown
          ? `Handler ${served.state.id} has ended (${served.state.status}); it takes no more events.`
          : `Handler ${served.state.id} is ending (its end is being saved); it takes no more events.`,
      );
    const wf = this.workflow(served.state.workflow);
    const run = runOf(live.ctx);
    const Answer = approvalAnswerOf(wf.workflow);
    // Refused before the run sees it: an approval answer several questions share, or more than the run may hold untaken.
    if (run) checkSendable(served, wf, run.state, event, this.#limits);
    let taken!: (saved: Taken) => void;
    const recorded = new Promise<Taken>((resolve) => (taken = resolve));
    // Only the workflow's own answer is an approval decision: another event carrying an approvalId is recorded as what it is.
    this.#sent.set(event, { from, decision: Answer && event instanceof Answer ? decisionOf(served, event, from) : undefined, taken });
    // The run notes what it takes on its stream (an EventReceivedEvent), where `#follow` records it and saves both.
    live.ctx.sendEvent(event);
    served.answered(event, (question) => run !== undefined && stillAsks(run.state, question));
    // Answered once the store has the event: a client told it was accepted never loses it to a crash.
    const saved = await Promise.race([recorded, live.done.then(() => undefined)]);
    const id = served.state.id;
    if (saved === undefined) {
      // Stopped before recording it (a shutdown, a take-over): the shutdown's save holds the run's context, event and all.
      if (this.#closing && !this.#taken.has(id) && this.#store.saveFailure(id) === undefined) return;
      throw this.#taken.has(id) || served.heldBy !== undefined ? takenBeforeSaved(served) : notSavedEvent(served, "the server stopped before it was saved");
    }
    const failed = await saved.save;
    if (failed?.error instanceof SessionConflictError) throw takenBeforeSaved(served);
    if (failed) throw notSavedEvent(served, `the store refused it: ${failed.error instanceof Error ? failed.error.message : String(failed.error)}`);
    if (saved.unencodable !== undefined)
      throw notSavedEvent(
        served,
        `the run's context cannot be saved as JSON (${saved.unencodable instanceof Error ? saved.unencodable.message : String(saved.unencodable)})`,
      );
  }

  /** The points of a handler's run that a fork can start from, oldest first. */
  async checkpoints(served: ServedHandler): Promise<Checkpoint[]> {
    return (await this.#points(served)).map(({ seq, at, label }) => ({ seq, at, label }));
  }

  /** The checkpoints saved, after the run's start when it started from its input alone. */
  async #points(served: ServedHandler): Promise<StoredCheckpoint[]> {
    const saved = await this.#store.checkpoints(served.state.id);
    return served.state.fromInput ? [{ seq: 0, at: served.state.createdAt, label: "start" }, ...saved] : saved;
  }

  /**
   * Starts a new run from a checkpoint of an ended run (`at`: its `seq`; default the last): the
   * context is the one this server saved there, restored as any context from outside is, so the
   * new run gets a new id, its steps do their work again and every approval is asked again.
   */
  async fork(served: ServedHandler, at: number | undefined): Promise<ServedHandler> {
    if (this.#closing) throw new ServerRequestError(503, "closing", "The server is shutting down; fork the run once it is back.");
    const id = served.state.id;
    if (!served.endShown)
      throw new ServerRequestError(409, "not_finished", `Handler ${id} is still ${served.info().status}; fork it once it has ended (or cancel it first).`);
    const wf = this.workflow(served.state.workflow);
    const points = await this.#points(served);
    const point = at === undefined ? points.at(-1) : points.find((p) => p.seq === at);
    if (!point)
      throw new ServerRequestError(
        404,
        "checkpoint_not_found",
        points.length === 0
          ? `Handler ${id} has no checkpoint to fork from (it was run before the server kept them, or ended before its first step).`
          : `Handler ${id} has no checkpoint at ${String(at)}. Its checkpoints are at: ${points.map((p) => p.seq).join(", ")} (GET /api/handlers/${id}/checkpoints).`,
      );
    let ctx: Context | undefined;
    try {
      // The server's own record, yet restored as untrusted: a fork must not inherit approvals given to another run.
      if (point.context) ctx = Context.fromJSON(wf.workflow, untrustedContext(point.context, { fromOutside: sendableTypes(wf).keys() }));
    } catch (error) {
      throw new ServerRequestError(409, "cannot_fork", `The checkpoint cannot be restored: ${error instanceof Error ? error.message : String(error)}`);
    }
    // No context: the run's start, from its input alone.
    const input = ctx ? undefined : wf.inputSchema ? parseInput(wf, served.state.input) : served.state.input;
    return this.#launch(served.state.workflow, wf, input, ctx, {
      input: served.state.input,
      notId: id,
      forkedFrom: { handlerId: id, seq: point.seq, label: point.label },
    });
  }

  /** Cancels a running handler; resolves once it has ended. */
  async cancel(served: ServedHandler): Promise<void> {
    const live = this.#live.get(served.state.id);
    if (!live && !served.finished) throw heldElsewhere(served);
    if (!live) return;
    live.handler.cancel();
    await live.done;
  }

  /** Resolves once the handler has ended (at once for one that has). */
  settled(served: ServedHandler): Promise<void> {
    return this.#live.get(served.state.id)?.done ?? Promise.resolve();
  }

  /**
   * Throws unless the store has the handler's end (call once `settled`): a 500 `not_saved` when
   * its last save failed, a 409 when another server took it over as it ended. A run answered as
   * finished is then a run the store has.
   */
  checkSavedEnd(served: ServedHandler): void {
    const error = this.#unsavedEnds.get(served);
    if (error) throw error;
  }

  /** The context: live for a running handler, else the last saved one. */
  async context(served: ServedHandler): Promise<ContextJSON | undefined> {
    const live = this.#live.get(served.state.id);
    return live ? contextOf(live.ctx) : await this.#store.context(served.state.id);
  }

  /** Counts for health and leak checks: runs in progress, handlers held, readers following. */
  stats(): { live: number; handlers: number; readers: number; waiters: number } {
    return { live: this.#live.size, handlers: this.#handlers.size, readers: this.#tally.readers, waiters: this.#tally.waiters };
  }

  /** Stops every run, saving its context so that the next server on this store continues it. */
  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#renewal);
    const live = [...this.#live.values()];
    for (const run of live) run.handler.cancel();
    await Promise.all(live.map((run) => run.done));
    await this.#store.flush();
    for (const h of this.#handlers.values()) h.touch(); // readers see the end of what this server has
  }

  get closing(): boolean {
    return this.#closing;
  }
}

/** How often a stream of a run another server runs reads the store for what that server saved. */
const REFRESH_MS = 1_000;
