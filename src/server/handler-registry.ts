/**
 * The runs a server holds: starts them, records their events, answers questions sent in,
 * cancels them, saves them at each step that matters (start, a question asked, the end) and
 * brings back the unfinished ones when a server starts on the same store.
 */
import { randomUUID } from "node:crypto";
import {
  Context,
  StepflowError,
  WorkflowCancelledByUser,
  WorkflowTimeoutError,
  eventTypeName,
  HumanResponseEvent,
  InputRequiredEvent,
  StartEvent,
  StopEvent,
  DEFAULT_CODECS,
  decodeValue,
} from "../core/internal.ts";
import type { ContextJSON, Event, EventClass, WorkflowHandler, AnyWorkflow } from "../core/internal.ts";
import { ToolApprovalEvent } from "../../events/index.ts";
import type { HandlerInfo, HandlerStatus, JsonObject, StreamedEvent } from "../client/types.ts";
import { ServedHandler } from "./served-handler.ts";
import type { HandlerStore } from "./handler-store.ts";
import type { ServedWorkflow } from "./served-workflow.ts";

/** A request the server cannot serve, with the HTTP status and error code it answers with. @example `throw new ServerRequestError(404, "handler_not_found", "No handler with id \"x\".")` */
export class ServerRequestError extends StepflowError {
  override name = "ServerRequestError";
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 413 | 415 | 500 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Filters of {@link HandlerRegistry.list}. */
export interface HandlerFilter {
  readonly workflow?: string;
  readonly status?: readonly HandlerStatus[];
  readonly limit?: number;
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
  readonly #handlers = new Map<string, ServedHandler>();
  readonly #live = new Map<string, LiveRun>();
  #closing = false;

  constructor(workflows: ReadonlyMap<string, ServedWorkflow>, store: HandlerStore) {
    this.#workflows = workflows;
    this.#store = store;
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
  start(name: string, input: JsonObject | undefined, options: { timeout?: number | null; from?: string; context?: JsonObject } = {}): ServedHandler {
    if (this.#closing) throw new ServerRequestError(503, "closing", "The server is shutting down; start the run again once it is back.");
    const wf = this.workflow(name);
    let ctx: Context | undefined;
    if (options.context !== undefined) {
      if (options.from !== undefined) throw new ServerRequestError(400, "invalid_request", "Give context or continueFrom, not both.");
      try {
        ctx = Context.fromJSON(wf.workflow, options.context as unknown as ContextJSON);
      } catch (error) {
        throw new ServerRequestError(400, "invalid_context", error instanceof Error ? error.message : String(error));
      }
    }
    // A context saved mid-run continues that run, which takes no new input.
    if (input === undefined && !ctx?.hasSavedRun)
      throw new ServerRequestError(
        400,
        "invalid_request",
        "The request is not valid: body.input: the StartEvent's fields are needed, unless context holds a run saved mid-way.",
      );
    if (input !== undefined && ctx?.hasSavedRun)
      throw new ServerRequestError(400, "invalid_request", "This context was saved in the middle of a run: send it without input to continue that run.");
    const checked = input === undefined ? undefined : wf.inputSchema ? parseInput(wf, input) : input;
    if (options.from !== undefined) {
      const previous = this.get(options.from);
      if (previous.state.workflow !== name)
        throw new ServerRequestError(409, "wrong_workflow", `Handler ${options.from} ran ${previous.state.workflow}, not ${name}.`);
      if (!previous.finished)
        throw new ServerRequestError(
          409,
          "not_finished",
          `Handler ${options.from} has not finished yet (${previous.state.status}); continue from it once it has.`,
        );
      const saved = this.#store.context(options.from);
      if (!saved) throw new ServerRequestError(409, "no_context", `Handler ${options.from} has no saved context to continue from.`);
      ctx = Context.fromJSON(wf.workflow, saved);
    }
    const now = new Date().toISOString();
    const id = randomUUID();
    const served = new ServedHandler(
      { id, workflow: name, runId: "", status: "running", input: input ?? {}, createdAt: now, updatedAt: now, waitingFor: [] },
      [],
      0,
    );
    let handler: WorkflowHandler;
    try {
      handler = wf.workflow.run(checked, {
        ...(ctx ? { ctx } : {}),
        lifecycleEvents: true,
        ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
      });
    } catch (error) {
      // The engine refuses what it cannot run (a bad timeout, a context mid-run given input): the request's fault.
      throw new ServerRequestError(400, "cannot_start", error instanceof Error ? error.message : String(error));
    }
    served.state.runId = handler.runId;
    this.#handlers.set(id, served);
    void this.#store.save(served);
    this.#follow(served, wf.workflow, handler);
    return served;
  }

  /** Records a run's events until it ends, saving it when it asks a question and when it ends. */
  #follow(served: ServedHandler, workflow: AnyWorkflow, handler: WorkflowHandler): void {
    const id = served.state.id;
    const ctx = handler.ctx;
    const done = (async () => {
      try {
        for await (const ev of handler.streamEvents()) {
          if (this.#closing) continue; // the cancel of a shutdown is not part of the run's story
          if (!(ev instanceof InputRequiredEvent)) {
            served.record(ev, workflow.codecs);
            continue;
          }
          // Saved before anyone sees it: an answer given to a question shown is never lost to a crash.
          served.record(ev, workflow.codecs, true);
          await this.#store.save(served, contextOf(ctx));
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
      // Shut down mid-run: the context (kept by the cancel) lets the next server continue it.
      if (this.#closing && status === "cancelled") return void (await this.#store.save(served, contextOf(ctx)));
      served.finish(status, outcome, workflow.codecs);
      await this.#store.save(served, contextOf(ctx));
      if (this.#store.holdsEvents) served.unloadEvents();
    })();
    this.#live.set(id, { handler, ctx, done });
  }

  /** Brings back the stored handlers: finished ones to read, unfinished ones resumed from their saved context. */
  async restore(): Promise<void> {
    for (const stored of (await this.#store.loadAll()).reverse()) {
      const { state } = stored;
      if (this.#handlers.has(state.id)) continue;
      const wf = this.#workflows.get(state.workflow);
      const served = new ServedHandler({ ...state }, undefined, stored.eventCount);
      this.#handlers.set(state.id, served);
      if (served.finished) continue;
      served.setEvents(await this.#store.loadEvents(state.id));
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
        continue;
      }
      try {
        const ctx = Context.fromJSON(wf.workflow, stored.context);
        const handler = wf.workflow.run(undefined, { ctx, lifecycleEvents: true });
        served.state.runId = handler.runId;
        this.#follow(served, wf.workflow, handler);
      } catch (error) {
        served.finish("failed", { error }, wf.workflow.codecs);
        await this.#store.save(served);
      }
    }
  }

  get(id: string): ServedHandler {
    const served = this.#handlers.get(id);
    if (!served) throw new ServerRequestError(404, "handler_not_found", `No handler with id ${JSON.stringify(id)}. List them with GET /api/handlers.`);
    return served;
  }

  list(filter: HandlerFilter = {}): HandlerInfo[] {
    const statuses = filter.status ? new Set(filter.status) : undefined;
    const all = [...this.#handlers.values()]
      .filter((h) => (filter.workflow === undefined || h.state.workflow === filter.workflow) && (!statuses || statuses.has(h.state.status)))
      .sort((a, b) => (a.state.createdAt < b.state.createdAt ? 1 : a.state.createdAt > b.state.createdAt ? -1 : 0));
    return all.slice(0, filter.limit ?? 100).map((h) => h.info());
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

  /** Decodes `{ type, data }` sent by a client into an event of the handler's workflow. */
  decode(served: ServedHandler, type: string, data: JsonObject): Event {
    const wf = this.workflow(served.state.workflow);
    const types = sendableTypes(wf);
    const cls = types.get(type);
    if (!cls) {
      throw new ServerRequestError(
        400,
        "unknown_event_type",
        `${served.state.workflow} takes no event of type ${JSON.stringify(type)}. It takes: ${[...types.keys()].join(", ")}.`,
      );
    }
    try {
      const fields = decodeValue(data, "data", wf.workflow.codecs) as object;
      return new (cls as unknown as new (fields: object) => Event)(fields);
    } catch (error) {
      throw new ServerRequestError(400, "invalid_event", `The ${type} could not be built from data: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Sends an event into a running handler. */
  send(served: ServedHandler, event: Event): void {
    const live = this.#live.get(served.state.id);
    if (!live || served.finished)
      throw new ServerRequestError(409, "handler_finished", `Handler ${served.state.id} has ended (${served.state.status}); it takes no more events.`);
    live.ctx.sendEvent(event);
    served.answered(event);
    void this.#store.save(served);
  }

  /** Cancels a running handler; resolves once it has ended. */
  async cancel(served: ServedHandler): Promise<void> {
    const live = this.#live.get(served.state.id);
    if (!live) return;
    live.handler.cancel();
    await live.done;
  }

  /** Resolves once the handler has ended (at once for one that has). */
  async settled(served: ServedHandler): Promise<void> {
    await this.#live.get(served.state.id)?.done;
  }

  /** The context: live for a running handler, else the last saved one. */
  context(served: ServedHandler): ContextJSON | undefined {
    const live = this.#live.get(served.state.id);
    return live ? contextOf(live.ctx) : this.#store.context(served.state.id);
  }

  /** Counts for health and leak checks: runs in progress, handlers held, readers following. */
  stats(): { live: number; handlers: number; readers: number; waiters: number } {
    let readers = 0;
    let waiters = 0;
    for (const h of this.#handlers.values()) {
      readers += h.readers;
      waiters += h.waiters;
    }
    return { live: this.#live.size, handlers: this.#handlers.size, readers, waiters };
  }

  /** Stops every run, saving its context so that the next server on this store continues it. */
  async close(): Promise<void> {
    this.#closing = true;
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

/** The event classes a client may send into a run of `wf`, by type name. */
export function sendableTypes(wf: ServedWorkflow): Map<string, EventClass> {
  const types = new Map<string, EventClass>();
  for (const cls of [HumanResponseEvent, ToolApprovalEvent, ...(wf.events ?? [])] as EventClass[]) types.set(eventTypeName(cls), cls);
  for (const [name, cls] of wf.workflow.graph.eventTypes) {
    if (cls === StartEvent || cls === StopEvent || cls.prototype instanceof StopEvent || cls.prototype instanceof StartEvent) continue;
    types.set(name, cls);
  }
  return types;
}

function parseInput(wf: ServedWorkflow, input: JsonObject): object {
  const parsed = wf.inputSchema?.safeParse(input);
  if (parsed && !parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "input"}: ${i.message}`).join("; ");
    throw new ServerRequestError(400, "invalid_input", `The input does not fit this workflow: ${issues}.`);
  }
  return (parsed?.data ?? input) as object;
}

/** The context as JSON, or undefined when a value in it cannot be saved (the run goes on; it just cannot be restored). */
function contextOf(ctx: Context): ContextJSON | undefined {
  try {
    return ctx.toJSON();
  } catch {
    return undefined;
  }
}
