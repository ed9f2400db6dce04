/**
 * What a client may send into a run, and whether the run takes it: the event classes it may
 * send, the decoding of `{ type, data }` into one of them (checked against its schema), and the
 * checks an event passes before the run sees it (an approval answer that names one question,
 * the limits on what a run holds untaken). Each refusal leaves the run as it was.
 */
import {
  approvalAnswerOf,
  checkEventFields,
  decodeValue,
  eventSchemaOf,
  eventsFromOutside,
  heldEvents,
  shadowingField,
  takenAtOnce,
  waitsAnswered,
} from "../core/internal.ts";
import type { CheckedEventFields, Context, Event, EventClass, EventSchema } from "../core/internal.ts";
import type { JsonObject } from "../client/types.ts";
import { contextOf } from "./context-json.ts";
import { eventFieldsRefusal } from "./event-fields.ts";
import { eventBytes, heldBytes } from "./held-bytes.ts";
import { ServerRequestError, ambiguousApproval, notBuilt, tooManyPending, tooManyPendingBytes } from "./refusals.ts";
import type { ServedHandler } from "./served-handler.ts";
import type { ServedWorkflow } from "./served-workflow.ts";

/**
 * Who sent a request, as recorded with a human's decision: `by` the server vouches for, `label` the client gave itself.
 * @example `const from: Requester = { by: "alice@example.com", label: "review UI" };`
 */
export interface Requester {
  readonly by: string;
  readonly label?: string;
}

/**
 * How much a run may hold of the events sent into it and not taken yet: the server's
 * `maxPendingEvents` and `maxPendingEventBytes`.
 * @example `const limits: PendingLimits = { maxPendingEvents: DEFAULT_MAX_PENDING_EVENTS, maxPendingEventBytes: DEFAULT_MAX_PENDING_EVENT_BYTES };`
 */
export interface PendingLimits {
  readonly maxPendingEvents: number;
  readonly maxPendingEventBytes: number;
}

/**
 * How many events sent into a run it may hold untaken, unless the server's `maxPendingEvents` says otherwise.
 * @example `new HandlerRegistry(workflows, store, { maxPendingEvents: DEFAULT_MAX_PENDING_EVENTS * 2 })`
 */
export const DEFAULT_MAX_PENDING_EVENTS = 100;

/**
 * How many bytes of events sent into a run it may hold untaken (each counted as the JSON text a
 * save writes for it), unless the server's `maxPendingEventBytes` says otherwise: 1 MiB, the
 * default body limit, so that a run holding nothing can keep any one event a client may send,
 * and each save of a run rewrites at most 1 MiB of such events (100 events of up to 1 MiB each
 * made that 100 MiB).
 * @example `new HandlerRegistry(workflows, store, { maxPendingEventBytes: DEFAULT_MAX_PENDING_EVENT_BYTES / 4 })`
 */
export const DEFAULT_MAX_PENDING_EVENT_BYTES = 1024 * 1024;

/**
 * The event classes a client may send into a run of `wf`, by type name: what the workflow accepts from outside, and the operator's `events`.
 * @example `[...sendableTypes(wf).keys()]; // ["HumanResponseEvent", "ApprovalAnswer"]`
 */
export function sendableTypes(wf: ServedWorkflow): Map<string, EventClass> {
  return eventsFromOutside(wf.workflow, wf.events);
}

/** The steps of `wf` that take an event a client may send: their queues hold what clients sent (and not a fan-out's own events). */
const outsideSteps = new WeakMap<ServedWorkflow, ReadonlySet<string>>();
function stepsTakingFromOutside(wf: ServedWorkflow): ReadonlySet<string> {
  let steps = outsideSteps.get(wf);
  if (!steps) {
    const routes = wf.workflow.graph.routes;
    steps = new Set([...sendableTypes(wf).values()].flatMap((cls) => (routes.get(cls) ?? []).map((s) => s.name)));
    outsideSteps.set(wf, steps);
  }
  return steps;
}

/**
 * Decodes `{ type, data }` sent by a client into an event of `wf`, the workflow of `served`: one
 * it accepts from outside, else 403; data that does not fit the type, 400. `running`: the
 * context of the run when this server runs it, to tell of a type the run waits for but that
 * the server cannot know.
 * @example `const event = decodeSentEvent(wf, served, "HumanResponseEvent", { response: "yes" }, live?.ctx);`
 */
export function decodeSentEvent(wf: ServedWorkflow, served: ServedHandler, type: string, data: JsonObject, running: Context | undefined): Event {
  const types = sendableTypes(wf);
  const cls = types.get(type);
  if (!cls) {
    throw new ServerRequestError(
      403,
      "event_not_accepted",
      `${served.state.workflow} does not accept events of type ${JSON.stringify(type)} from outside a run. It accepts: ${[...types.keys()].join(", ")}.${waitedForHint(wf, running, type)}`,
    );
  }
  const shadowing = shadowingField(data, cls);
  if (shadowing !== undefined)
    throw new ServerRequestError(
      400,
      "invalid_event",
      `The ${type} could not be built from data: data.${shadowing} is a property every event has, not a field it may be given. Leave it out (the event's type is the request's "type").`,
    );
  let checked: CheckedEventFields;
  try {
    // Checked after the codecs: a schema sees the values a step will read (a Date, not its JSON).
    // The server's own schema for the type, if it was given one, takes the place of the class's.
    checked = checkEventFields(
      cls,
      decodeValue(data, "data", wf.workflow.codecs) as object,
      (wf.eventSchemas?.[type] as EventSchema | undefined) ?? eventSchemaOf(cls),
    );
  } catch (error) {
    throw notBuilt(type, error);
  }
  // Refused before the run sees it: nothing is taken, saved or counted against the run's limits.
  if (!checked.ok) throw new ServerRequestError(400, "invalid_event", eventFieldsRefusal(type, checked.schema, checked.problems));
  try {
    // Built from the schema's output, when the class has one: its defaults and transforms are what the step reads.
    return new (cls as unknown as new (fields: object) => Event)(checked.fields);
  } catch (error) {
    throw notBuilt(type, error);
  }
}

/**
 * Why a type the run waits for is still refused, and what to do: a class a step only awaits
 * with `ctx.waitForEvent` is not in the graph, so the server cannot know it before the run
 * asks. Empty unless this server runs the handler (`running`) and one of its waits is for `type`.
 */
function waitedForHint(wf: ServedWorkflow, running: Context | undefined, type: string): string {
  const waits = running ? (contextOf(running)?.run?.waiters ?? []) : [];
  if (!waits.some((wait) => wait.type === type)) return "";
  const workflowClass = wf.workflow.constructor.name;
  const cls = /^[A-Za-z_$][\w$]*$/.test(type) ? type : "its class";
  return (
    ` The run waits for ${type} in ctx.waitForEvent, but a class only awaited there is not known to the server: list it in ${workflowClass}` +
    ` (static override readonly fromOutside: FromOutside = { events: [${cls}] }), or accept it in a step.`
  );
}

/**
 * Throws unless the run of `served` (in the state `state`) may be given `event` now: an answer
 * to an approval must name one open question, and an event the run does not take at once must
 * fit within what it may hold untaken (`limits`). Nothing is done with a refused event.
 * @example `if (run) checkSendable(served, wf, run.state, event, limits);`
 */
export function checkSendable(served: ServedHandler, wf: ServedWorkflow, state: Parameters<typeof takenAtOnce>[0], event: Event, limits: PendingLimits): void {
  const Answer = approvalAnswerOf(wf.workflow);
  // An approval is answered by its id: one that several open questions share (a context a
  // client edited can ask a DELETE under the id of a GET, and the handler shows the last
  // asked) would go to the first asked, whichever the human meant. None is taken.
  if (Answer && event instanceof Answer) {
    const questions = waitsAnswered(state, event);
    if (questions > 1) throw ambiguousApproval(served, (event as { approvalId?: unknown }).approvalId, questions);
  }
  // What the run takes now costs it nothing to hold; anything else is kept, in memory and in every save, until taken.
  if (!takenAtOnce(state, event)) {
    const steps = stepsTakingFromOutside(wf);
    if (heldEvents(state, steps) >= limits.maxPendingEvents) throw tooManyPending(served, limits.maxPendingEvents);
    const held = heldBytes(state, steps, wf.workflow.codecs);
    const size = eventBytes(event, wf.workflow.codecs);
    if (held + size > limits.maxPendingEventBytes) throw tooManyPendingBytes(served, held, size, limits.maxPendingEventBytes);
  }
}

/**
 * The record of a human's answer to an approval the run asked, or undefined for any other event.
 * @example `served.note("ApprovalDecision", decisionOf(served, answer, { by: "alice" }));`
 */
export function decisionOf(served: ServedHandler, event: Event, from: Requester): JsonObject | undefined {
  const { approvalId, approved, reason } = event as { approvalId?: unknown; approved?: unknown; reason?: unknown };
  if (typeof approvalId !== "string" || typeof approved !== "boolean") return undefined;
  const asked = served.state.waitingFor.find((w) => w.data.approvalId === approvalId)?.data;
  return {
    approvalId,
    approved,
    ...(typeof reason === "string" && reason !== "" ? { reason } : {}),
    by: from.by,
    ...(from.label !== undefined ? { label: from.label } : {}),
    ...(typeof asked?.prefix === "string" ? { question: asked.prefix } : {}),
    ...(asked?.toolCall !== undefined ? { toolCall: asked.toolCall } : {}),
  };
}
