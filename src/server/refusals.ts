/**
 * The refusals of the server: the error a request it cannot serve answers with (its HTTP status
 * and code), and the answers it gives a handler request again and again, each saying what was
 * wrong and what the client can do. Kept here so that each reads the same wherever it is given.
 */
import { ContextSerdeError, StepflowError } from "../core/internal.ts";
import type { ServedHandler } from "./served-handler.ts";

/** A request the server cannot serve, with the HTTP status and error code it answers with. @example `throw new ServerRequestError(404, "handler_not_found", "No handler with id \"x\".")` */
export class ServerRequestError extends StepflowError {
  override name = "ServerRequestError";
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 421 | 422 | 429 | 500 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The answer to an event a run would hold beyond the limit: nothing was done with it.
 * @example `if (heldEvents(run.state, steps) >= limit) throw tooManyPending(served, limit);`
 */
export function tooManyPending(served: ServedHandler, limit: number): ServerRequestError {
  const id = served.state.id;
  return new ServerRequestError(
    429,
    "too_many_pending_events",
    `Handler ${id} holds ${limit} events sent in that it has not taken yet, the server's limit (maxPendingEvents): it takes no more until it has taken some. Nothing was done with this one. Send only the events the run waits for (GET /api/handlers/${id} lists them in waitingFor), once it asks for them.`,
  );
}

/**
 * The answer to an event whose bytes would take what the run holds untaken past the limit: nothing was done with it.
 * @example `if (held + size > limit) throw tooManyPendingBytes(served, held, size, limit);`
 */
export function tooManyPendingBytes(served: ServedHandler, held: number, size: number, limit: number): ServerRequestError {
  const id = served.state.id;
  return new ServerRequestError(
    429,
    "too_many_pending_event_bytes",
    `Handler ${id} holds ${held} bytes of events sent in that it has not taken yet; this one (${size} bytes as JSON) would take that past the server's limit of ${limit} bytes (maxPendingEventBytes), so it takes no more until it has taken some. Nothing was done with this one. Send only the events the run waits for (GET /api/handlers/${id} lists them in waitingFor), once it asks for them, and keep large data out of events a run holds.`,
  );
}

/**
 * The answer to a request that only the server running the handler can serve.
 * @example `if (!live && !served.finished) throw heldElsewhere(served);`
 */
export function heldElsewhere(served: ServedHandler): ServerRequestError {
  return new ServerRequestError(
    409,
    "held_by_another_server",
    `Handler ${served.state.id} is run by another server sharing this store (${served.heldBy ?? "unknown"}); this server did nothing. Send this request to that server, or again once it has stopped.`,
  );
}

/**
 * The answer to an event the run took but the store does not have (`why`): the client decides whether to send it again.
 * @example `if (failed) throw notSavedEvent(served, "the store refused it: disk full");`
 */
export function notSavedEvent(served: ServedHandler, why: string): ServerRequestError {
  const id = served.state.id;
  return new ServerRequestError(
    500,
    "not_saved",
    `Handler ${id} took the event, but ${why}, so a restart would lose it. The run goes on with it on this server for now. Check the store (free disk space, the database reachable); if the run asks for the event again (GET /api/handlers/${id} lists what it waits for), send it again.`,
  );
}

/**
 * The answer to an approval answer that more than one open question of the run would take: nothing was done with it.
 * @example `if (questions > 1) throw ambiguousApproval(served, event.approvalId, questions);`
 */
export function ambiguousApproval(served: ServedHandler, approvalId: unknown, questions: number): ServerRequestError {
  const id = served.state.id;
  return new ServerRequestError(
    409,
    "ambiguous_approval",
    `Handler ${id} asks ${questions} questions under approvalId ${JSON.stringify(approvalId)}, so an answer to it cannot say which it answers: none is taken. The run was given a context in which several questions share one id; cancel it (POST /api/handlers/${id}/cancel) and start it again from its input.`,
  );
}

/**
 * The answer to an event sent into a run that another server took over before the event was saved: that server's run does not have it.
 * @example `if (failed?.error instanceof SessionConflictError) throw takenBeforeSaved(served);`
 */
export function takenBeforeSaved(served: ServedHandler): ServerRequestError {
  const id = served.state.id;
  return new ServerRequestError(
    409,
    "held_by_another_server",
    `Handler ${id} was taken over by another server sharing the store before this one saved the event (this server's lease had ended): the run there does not have it. Send it again; GET /api/handlers/${id} shows what the run waits for.`,
  );
}

/**
 * The answer to a run-and-wait whose run ended but whose end could not be saved (nothing saves it again).
 * @example `const failure = refused && unsavedEnd(served, refused.error);`
 */
export function unsavedEnd(served: ServedHandler, error: unknown): ServerRequestError {
  const { id, status } = served.state;
  return new ServerRequestError(
    500,
    "not_saved",
    `Handler ${id} ended (${status}) but could not be saved to the store: ${error instanceof Error ? error.message : String(error)}. The store does not have its result or events (this server shows them at GET /api/handlers/${id} until it stops). Check the store (free disk space, the database reachable), then start the run again.`,
  );
}

/**
 * The answer to a run-and-wait whose run another server took over as this one saved its end.
 * @example `const failure = handlers.get(id) !== served ? takenAtEnd(served) : undefined;`
 */
export function takenAtEnd(served: ServedHandler): ServerRequestError {
  const { id, status } = served.state;
  return new ServerRequestError(
    409,
    "held_by_another_server",
    `Handler ${id} ended here (${status}), but another server sharing the store took it over as this one saved its end (this server's lease had ended): the store has that server's run, not this result. Read it with GET /api/handlers/${id}.`,
  );
}

/**
 * Why a value of an event's data marked `"$codec"` (the only kind that fails to decode) could
 * not be decoded, in a client's terms rather than a saved context's: from the error's fields.
 */
function codecProblem(error: ContextSerdeError): string {
  const path = error.path ?? "data";
  let reason = `${path} should be an object`; // `"$codec": "object"` with a value that is not one
  if (error.codec !== undefined && error.cause === undefined) reason = `this workflow has no codec "${error.codec}"`;
  else if (error.codec !== undefined) {
    const failure = error.cause instanceof Error ? error.cause.message.replace(/\.$/, "") : String(error.cause);
    reason = `codec "${error.codec}" failed on ${path}: ${failure}`;
  }
  return `${path} is marked "$codec", a value encoded by one of the workflow's codecs, and cannot be decoded: ${reason}. Send plain JSON there, without "$codec".`;
}

/**
 * The 400 for an event whose data could not be decoded or built: a codec's problem, or the constructor's error.
 * @example `throw notBuilt("ReviewEvent", error);`
 */
export function notBuilt(type: string, error: unknown): ServerRequestError {
  const why = error instanceof ContextSerdeError ? codecProblem(error) : error instanceof Error ? error.message : String(error);
  return new ServerRequestError(400, "invalid_event", `The ${type} could not be built from data: ${why}`);
}
