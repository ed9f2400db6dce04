import { workflowEvent } from "../../../../../../src/compat/workflow-core/index.ts";

export const messageEvent = workflowEvent({
  debugLabel: "message",
  uniqueId: "message",
});

export const haltEvent = workflowEvent({
  debugLabel: "halt",
  uniqueId: "halt",
});
