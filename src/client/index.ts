/**
 * `stepflow/client`: talk to a stepflow server from another program or a browser (fetch only).
 * @example
 * import { WorkflowClient } from "stepflow/client";
 * const client = new WorkflowClient({ baseUrl: "http://127.0.0.1:8787" });
 * const done = await client.run("agent", { input: "What is 2 + 2?" });
 */
export { WorkflowClient, WorkflowClientError } from "./workflow-client.ts";
export type { WorkflowClientOptions, StartOptions, SendOptions, HandlerQuery } from "./workflow-client.ts";
export type {
  EventClassType,
  EventData,
  EventTypeName,
  HandlerOf,
  RunInput,
  RunResult,
  Serialized,
  ServedWorkflows,
  WorkflowName,
  WorkflowShape,
} from "./typed.ts";
export type {
  ApprovalDecision,
  Checkpoint,
  ErrorBody,
  EventReceived,
  EventRole,
  ForkOrigin,
  HandlerInfo,
  HandlerStatus,
  JsonObject,
  JsonValue,
  StreamEnd,
  StreamedEvent,
  WorkflowInfo,
} from "./types.ts";
