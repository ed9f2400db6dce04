/**
 * The workflow graph: its steps, which step receives which event class, and the checks that
 * make a set of steps a runnable workflow (DESIGN.md, "Steps and validation").
 */
import { eventTypeName, HumanResponseEvent, InputRequiredEvent, isSubclassOf, StartEvent, StopEvent } from "./event.ts";
import type { EventClass } from "./event.ts";
import { WorkflowValidationError } from "./errors.ts";
import type { StepDefinition } from "./step.ts";

/** A validated workflow graph, built once per workflow instance. */
export interface WorkflowGraph {
  readonly steps: ReadonlyMap<string, StepDefinition>;
  /** Steps receiving each event class, by exact class. */
  readonly routes: ReadonlyMap<EventClass, readonly StepDefinition[]>;
  readonly startEvent: EventClass;
  /** Every event class the steps name, by type name (for serialization). */
  readonly eventTypes: ReadonlyMap<string, EventClass>;
}

const names = (types: Iterable<EventClass>) => [...new Set([...types].map(eventTypeName))].join(", ");

/**
 * Checks the steps and builds the routes. Throws one `WorkflowValidationError` listing every
 * problem found, each on its own line.
 * @example
 * const graph = buildGraph("Echo", steps); graph.routes.get(StartEvent);
 */
export function buildGraph(workflowName: string, steps: readonly StepDefinition[]): WorkflowGraph {
  const problems: string[] = [];
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
      if (isSubclassOf(type, StopEvent)) problems.push(`Step "${s.name}" accepts ${eventTypeName(type)}; a StopEvent ends the run and cannot be accepted by a step.`);
    }
    for (const type of s.emits) {
      remember(type);
      producers.set(type, [...(producers.get(type) ?? []), s.name]);
    }
  }
  const starts = [...routes.keys()].filter((t) => isSubclassOf(t, StartEvent));
  if (starts.length === 0) problems.push(`No step accepts a StartEvent. Add a step with accepts: [StartEvent].`);
  if (starts.length > 1) problems.push(`More than one StartEvent type is accepted: ${names(starts)}. A workflow has one StartEvent type.`);
  if (![...producers.keys()].some((t) => isSubclassOf(t, StopEvent))) problems.push(`No step emits a StopEvent, so no run could finish. Add StopEvent to the emits of the final step.`);

  const unconsumed = [...producers].filter(([t]) => !routes.has(t) && !isSubclassOf(t, StopEvent) && !isSubclassOf(t, InputRequiredEvent));
  for (const [type, by] of unconsumed) problems.push(`${eventTypeName(type)} is emitted by ${by.map((n) => `"${n}"`).join(", ")} but no step accepts it.`);
  const unproduced = [...routes].filter(([t]) => !producers.has(t) && !isSubclassOf(t, StartEvent) && !isSubclassOf(t, HumanResponseEvent));
  for (const [type, by] of unproduced) problems.push(`${eventTypeName(type)} is accepted by ${by.map((s) => `"${s.name}"`).join(", ")} but no step emits it.`);

  if (problems.length > 0) {
    throw new WorkflowValidationError(`Workflow "${workflowName}" is invalid:\n- ${problems.join("\n- ")}`);
  }
  return {
    steps: new Map(steps.map((s) => [s.name, s])),
    routes,
    startEvent: starts[0] as EventClass,
    eventTypes,
  };
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
