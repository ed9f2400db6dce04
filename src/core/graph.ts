/**
 * The workflow graph: its steps, which step receives which event class, and the checks that
 * make a set of steps a runnable workflow; every problem is reported in one error, so a user
 * fixes them all in one pass (docs/engine-advanced.md, "What is checked before the first run").
 */
import { eventTypeName, HumanResponseEvent, InputRequiredEvent, isSubclassOf, StartEvent, StopEvent } from "./event.ts";
import type { EventClass } from "./event.ts";
import { WorkflowValidationError } from "./errors.ts";
import type { StepDefinition } from "./step.ts";
import { StepFailedEvent } from "./step-failed.ts";
import { resourceProblems } from "./resource.ts";
import type { Resource } from "./resource.ts";

/** A validated workflow graph, built once per workflow instance. */
export interface WorkflowGraph {
  readonly steps: ReadonlyMap<string, StepDefinition>;
  /** Steps receiving each event class, by exact class. */
  readonly routes: ReadonlyMap<EventClass, readonly StepDefinition[]>;
  readonly startEvent: EventClass;
  /** Every event class the steps name, by type name (for serialization). */
  readonly eventTypes: ReadonlyMap<string, EventClass>;
  /** Values of resources cached for the workflow instance (`cache: "workflow"`): the graph is built once per instance. */
  readonly resourceCache: Map<Resource<unknown>, Promise<unknown>>;
  /** Recovery steps (`catchErrors`), in declaration order. */
  readonly recoverers: readonly StepDefinition[];
}

const names = (types: Iterable<EventClass>) => [...new Set([...types].map(eventTypeName))].join(", ");

/**
 * Checks the steps and builds the routes. Throws one `WorkflowValidationError` listing every
 * problem found, each on its own line.
 * @example
 * const graph = buildGraph("Echo", steps); graph.routes.get(StartEvent);
 */
export function buildGraph(
  workflowName: string,
  steps: readonly StepDefinition[],
  options: { readonly validate?: boolean; readonly fromOutside?: readonly EventClass[] } = {},
): WorkflowGraph {
  const validate = options.validate ?? true;
  // Events sent in from outside (HumanResponseEvents, and those the workflow declares) need no step to emit them.
  const outside = (t: EventClass) => isSubclassOf(t, HumanResponseEvent) || (options.fromOutside?.includes(t) ?? false);
  // What the engine needs to run at all; the rest (`checks`) can be turned off.
  const problems: string[] = [];
  const checks: string[] = [];
  const routes = new Map<EventClass, StepDefinition[]>();
  const producers = new Map<EventClass, string[]>();
  const eventTypes = new Map<string, EventClass>();
  const remember = (type: EventClass) => {
    const name = eventTypeName(type);
    const known = eventTypes.get(name);
    if (known && known !== type) problems.push(`Two event classes share the type name "${name}"; give one a static readonly typeName.`);
    eventTypes.set(name, type);
  };
  for (const s of steps) {
    for (const type of s.accepts) {
      remember(type);
      routes.set(type, [...(routes.get(type) ?? []), s]);
      if (isSubclassOf(type, StopEvent))
        checks.push(`Step "${s.name}" accepts ${eventTypeName(type)}; a StopEvent ends the run and cannot be accepted by a step.`);
    }
    for (const type of s.emits) {
      remember(type);
      producers.set(type, [...(producers.get(type) ?? []), s.name]);
    }
  }
  const starts = [...routes.keys()].filter((t) => isSubclassOf(t, StartEvent));
  if (starts.length === 0) problems.push(`No step accepts a StartEvent. Add a step with accepts: [StartEvent].`);
  if (starts.length > 1) problems.push(`More than one StartEvent type is accepted: ${names(starts)}. A workflow has one StartEvent type.`);
  const stops = [...producers.keys()].filter((t) => isSubclassOf(t, StopEvent));
  if (stops.length === 0) checks.push(`No step emits a StopEvent, so no run could finish. Add StopEvent to the emits of the final step.`);
  // Awaiting a run gives one result type, so the steps must agree on which StopEvent ends it.
  if (stops.length > 1) checks.push(`Only one type of StopEvent is allowed per workflow, found ${stops.length}: ${names(stops)}.`);

  const unconsumed = [...producers].filter(([t]) => !routes.has(t) && !isSubclassOf(t, StopEvent) && !isSubclassOf(t, InputRequiredEvent));
  for (const [type, by] of unconsumed) checks.push(`${eventTypeName(type)} is emitted by ${by.map((n) => `"${n}"`).join(", ")} but no step accepts it.`);
  for (const s of steps) if (s.resources) problems.push(...resourceProblems(s.name, s.resources));
  for (const s of steps) {
    if (!s.catchErrors) continue;
    if (!s.accepts.includes(StepFailedEvent)) problems.push(`Step "${s.name}" has catchErrors but does not accept StepFailedEvent; add it to its accepts.`);
    const unknown = (s.catchErrors.forSteps ?? []).filter((name) => !steps.some((other) => other.name === name));
    if (unknown.length > 0)
      problems.push(
        `Step "${s.name}" catches errors of ${unknown.map((n) => `"${n}"`).join(", ")}, which ${unknown.length === 1 ? "is not a step" : "are not steps"} of this workflow.`,
      );
  }
  problems.push(...recoveryOverlaps(steps));
  // The engine sends StepFailedEvent itself, to recovery steps.
  const unproduced = [...routes].filter(([t]) => !producers.has(t) && !isSubclassOf(t, StartEvent) && !outside(t) && t !== StepFailedEvent);
  for (const [type, by] of unproduced) checks.push(`${eventTypeName(type)} is accepted by ${by.map((s) => `"${s.name}"`).join(", ")} but no step emits it.`);
  // Without a start or an end, every step would be listed again as unreachable or a dead end.
  if (starts.length > 0 && stops.length > 0) checks.push(...reachabilityProblems(steps, routes, outside));

  if (validate) problems.push(...checks);
  if (problems.length > 0) {
    throw new WorkflowValidationError(`Workflow "${workflowName}" is invalid:\n- ${problems.join("\n- ")}`);
  }
  return {
    steps: new Map(steps.map((s) => [s.name, s])),
    routes,
    startEvent: starts[0] as EventClass,
    eventTypes,
    resourceCache: new Map(),
    recoverers: steps.filter((s) => s.catchErrors !== undefined),
  };
}

/**
 * Recovery steps that would compete for one failure, as Python Workflows refuses them: two
 * catching every step (no `forSteps`), or two naming the same step. Which of them got the
 * failure would depend on the order of the class's methods.
 */
function recoveryOverlaps(steps: readonly StepDefinition[]): string[] {
  const recoverers = steps.filter((s) => s.catchErrors !== undefined);
  const problems: string[] = [];
  const wildcards = recoverers.filter((s) => s.catchErrors?.forSteps === undefined);
  if (wildcards.length > 1)
    problems.push(
      `Steps ${wildcards.map((s) => `"${s.name}"`).join(" and ")} both catch the errors of every step (catchErrors without forSteps); only one recovery step may. Give the others forSteps.`,
    );
  const claimedBy = new Map<string, string[]>();
  for (const s of recoverers) for (const name of new Set(s.catchErrors?.forSteps ?? [])) claimedBy.set(name, [...(claimedBy.get(name) ?? []), s.name]);
  for (const [name, by] of claimedBy)
    if (by.length > 1)
      problems.push(
        `Step "${name}" is claimed by more than one recovery step: ${by.map((n) => `"${n}"`).join(" and ")}. Name each step in the forSteps of one recovery step only.`,
      );
  return problems;
}

/**
 * Steps no event can reach (from the StartEvent, or a HumanResponseEvent sent from outside),
 * and steps that emit events but have no path to an end (a StopEvent, or an
 * InputRequiredEvent for a human): a run entering them could only time out.
 */
function reachabilityProblems(
  steps: readonly StepDefinition[],
  routes: ReadonlyMap<EventClass, readonly StepDefinition[]>,
  outside: (type: EventClass) => boolean,
): string[] {
  const seeds = [...routes.keys()].filter((t) => isSubclassOf(t, StartEvent) || outside(t) || t === StepFailedEvent);
  const reached = new Set<StepDefinition>();
  const seen = new Set<EventClass>(seeds);
  for (const pending = [...seeds]; pending.length > 0;) {
    for (const s of routes.get(pending.pop() as EventClass) ?? []) {
      if (reached.has(s)) continue;
      reached.add(s);
      for (const t of s.emits) {
        if (!seen.has(t)) {
          seen.add(t);
          pending.push(t);
        }
      }
    }
  }
  // Backwards from the ends: a step reaches an end if one of its emits is an end or is accepted by a step that does.
  const ending = new Set<StepDefinition>();
  for (let changed = true; changed;) {
    changed = false;
    for (const s of steps) {
      if (ending.has(s)) continue;
      const ends = s.emits.some(
        (t) => isSubclassOf(t, StopEvent) || isSubclassOf(t, InputRequiredEvent) || (routes.get(t) ?? []).some((next) => ending.has(next)),
      );
      if (ends) {
        ending.add(s);
        changed = true;
      }
    }
  }
  const problems: string[] = [];
  const unreachable = steps
    .filter((s) => !reached.has(s))
    .map((s) => s.name)
    .sort();
  if (unreachable.length > 0)
    problems.push(`Unreachable steps: ${unreachable.join(", ")}. Steps must be reachable from the StartEvent or a HumanResponseEvent.`);
  const deadEnds = steps
    .filter((s) => s.emits.length > 0 && !ending.has(s))
    .map((s) => s.name)
    .sort();
  if (deadEnds.length > 0) problems.push(`Dead-end steps: ${deadEnds.join(", ")}. Steps must have a path to a StopEvent or an InputRequiredEvent.`);
  return problems;
}

/**
 * A Mermaid flowchart of the graph: steps as boxes, events as rounded nodes between them.
 * @example
 * console.log(toMermaid(graph)); // flowchart TD …
 */
export function toMermaid(graph: WorkflowGraph): string {
  const lines = ["flowchart TD"];
  const eventId = (t: EventClass) => `event_${eventTypeName(t).replace(/\W/g, "_")}`;
  const seen = new Set<string>();
  const node = (t: EventClass) => {
    const id = eventId(t);
    if (!seen.has(id)) {
      seen.add(id);
      const name = eventTypeName(t);
      lines.push(isSubclassOf(t, StopEvent) || isSubclassOf(t, StartEvent) ? `  ${id}([${name}])` : `  ${id}[/${name}/]`);
    }
    return id;
  };
  const stepIds = new Set<string>();
  for (const s of graph.steps.values()) {
    // Mermaid ids are word characters; labels are quoted, so quotes in a name are escaped.
    let id = `step_${s.name.replace(/\W/g, "_")}`;
    while (stepIds.has(id)) id += "_";
    stepIds.add(id);
    lines.push(`  ${id}["${s.name.replaceAll('"', "#quot;")}"]`);
    for (const t of s.accepts) lines.push(`  ${node(t)} --> ${id}`);
    for (const t of s.emits) lines.push(`  ${id} --> ${node(t)}`);
  }
  return lines.join("\n");
}
