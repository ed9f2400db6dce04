/**
 * The events a workflow accepts from outside its run: the answers a person or a program may
 * send in (through `ctx.sendEvent`, or a server's clients). Every other event is the run's own
 * business: a client that could send, say, the agent's tool calls could make it run any call.
 * `HumanResponseEvent`s the workflow knows are answers by definition; a workflow lists any
 * other with `static fromOutside`, and names there the event that answers an approval.
 */
import { eventTypeName, HumanResponseEvent, isSubclassOf } from "./event.ts";
import type { EventClass } from "./event.ts";
import type { WorkflowGraph } from "./graph.ts";

/** The fields of an answer to an approval question. @example `{ approvalId: "5f0c…", approved: false, reason: "Ask HR first." }` */
export interface ApprovalAnswerFields {
  /** The id the question carried. */
  readonly approvalId: string;
  readonly approved: boolean;
  /** Why not, for the workflow (and its model) to read. */
  readonly reason?: string | undefined;
}

/** A `HumanResponseEvent` class made from {@link ApprovalAnswerFields}. @example `const answer: ApprovalAnswerClass = ToolApprovalEvent;` */
export type ApprovalAnswerClass = new (fields: ApprovalAnswerFields) => HumanResponseEvent<object>;

/**
 * What a workflow class declares it accepts from outside a run, besides the
 * `HumanResponseEvent`s its steps name.
 * @example
 * class Review extends Workflow {
 *   static override readonly fromOutside: FromOutside = { events: [CommentEvent], approvalAnswer: ApprovalEvent };
 * }
 */
export interface FromOutside {
  /** Event classes a client may send into a run. */
  readonly events?: readonly EventClass[];
  /** The event that answers the workflow's approval questions (a server's approvals route sends it); accepted from outside too. */
  readonly approvalAnswer?: ApprovalAnswerClass;
}

/** What {@link eventsFromOutside} reads of a workflow: its graph, and its class's `fromOutside`. */
export interface WorkflowWithGraph {
  readonly graph: WorkflowGraph;
}

/**
 * The event classes a run of `workflow` accepts from outside, by type name: `HumanResponseEvent`,
 * those of its steps' events that are `HumanResponseEvent`s, its class's `fromOutside`, and
 * `extra` (what a server's operator adds).
 * @example
 * eventsFromOutside(agent).has("agent.ToolApprovalEvent"); // true
 * eventsFromOutside(agent).has("agent.ToolCallEvent"); // false: the model's calls come from the model
 */
export function eventsFromOutside(workflow: WorkflowWithGraph, extra: readonly EventClass[] = []): Map<string, EventClass> {
  const types = new Map<string, EventClass>([[eventTypeName(HumanResponseEvent), HumanResponseEvent]]);
  for (const [name, cls] of workflow.graph.eventTypes) if (isSubclassOf(cls, HumanResponseEvent)) types.set(name, cls);
  const declared = fromOutsideOf(workflow);
  const listed: EventClass[] = [...(declared.approvalAnswer ? [declared.approvalAnswer as EventClass] : []), ...(declared.events ?? []), ...extra];
  for (const cls of listed) types.set(eventTypeName(cls), cls);
  return types;
}

/**
 * The class that answers `workflow`'s approval questions, when it asks any.
 * @example
 * const Answer = approvalAnswerOf(agent);
 * if (Answer) handler.ctx.sendEvent(new Answer({ approvalId, approved: true }));
 */
export function approvalAnswerOf(workflow: WorkflowWithGraph): ApprovalAnswerClass | undefined {
  return fromOutsideOf(workflow).approvalAnswer;
}

function fromOutsideOf(workflow: WorkflowWithGraph): FromOutside {
  const declared = (workflow.constructor as { fromOutside?: FromOutside | undefined }).fromOutside;
  return declared ?? {};
}
