/** What the server tells clients about a workflow: its graph and its event types, as JSON. */
import { z } from "zod";
import {
  approvalAnswerOf,
  eventSchemaOf,
  eventTypeName,
  HumanResponseEvent,
  InputRequiredEvent,
  isSubclassOf,
  StartEvent,
  StopEvent,
  toMermaid,
} from "../core/internal.ts";
import type { EventClass } from "../core/internal.ts";
import type { EventRole, JsonObject, WorkflowInfo } from "../client/types.ts";
import type { ServedWorkflow } from "./served-workflow.ts";
import { jsonSchema } from "./json-schema.ts";
import { sendableTypes } from "./event-intake.ts";

/** The schema of the answer clients send most: an approval (the agent's `agent.ToolApprovalEvent`). */
export const toolApprovalSchema = z.object({
  approvalId: z.string().min(1).describe("The approvalId of the ToolApprovalRequestEvent answered."),
  approved: z.boolean().describe("true runs the call; false does not, and the model is told so."),
  reason: z.string().optional().describe("Why not, for the model to read."),
});

/** Describes a registered workflow. */
export function describeWorkflow(name: string, wf: ServedWorkflow): WorkflowInfo {
  const graph = wf.workflow.graph;
  const classes = new Map<string, EventClass>(graph.eventTypes);
  for (const [type, cls] of sendableTypes(wf)) classes.set(type, cls);
  const answer = approvalAnswerOf(wf.workflow);
  const schemas: Record<string, JsonObject> = {
    ...(answer ? { [eventTypeName(answer as EventClass)]: jsonSchema(toolApprovalSchema) } : {}),
    ...Object.fromEntries(Object.entries(wf.eventSchemas ?? {}).map(([type, schema]) => [type, jsonSchema(schema)])),
  };
  const events = [...classes].map(([type, cls]) => {
    const shown = schemas[type] ?? classSchema(cls);
    return { type, role: roleOf(cls), ...(shown ? { schema: shown } : {}) };
  });
  return {
    name,
    ...(wf.description ? { description: wf.description } : {}),
    mermaid: toMermaid(graph),
    steps: [...graph.steps.values()].map((s) => ({ name: s.name, accepts: s.accepts.map(eventTypeName), emits: s.emits.map(eventTypeName) })),
    events,
    ...(wf.inputSchema ? { inputSchema: jsonSchema(wf.inputSchema) } : {}),
  };
}

/** The JSON Schema of an event class's own `schema`, when it has one zod 4 can describe. */
function classSchema(cls: EventClass): JsonObject | undefined {
  const schema = eventSchemaOf(cls);
  if (!schema) return undefined;
  try {
    return jsonSchema(schema as unknown as z.ZodType);
  } catch {
    return undefined; // a zod 3 schema checks events all the same; it is just not shown
  }
}

function roleOf(cls: EventClass): EventRole {
  if (isSubclassOf(cls, StartEvent)) return "start";
  if (isSubclassOf(cls, StopEvent)) return "stop";
  if (isSubclassOf(cls, InputRequiredEvent)) return "input-required";
  if (isSubclassOf(cls, HumanResponseEvent)) return "human-response";
  return "internal";
}
