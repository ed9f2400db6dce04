/**
 * `stepflow/server`: serve workflows over HTTP, with streamed events, answers to questions,
 * and runs that survive a restart.
 * @example
 * import { WorkflowServer } from "stepflow/server";
 * const server = new WorkflowServer({ workflows: { agent } });
 * const { url } = await server.listen({ port: 8787 });
 */
export { WorkflowServer, DEFAULT_SERVER_STORE } from "./workflow-server.ts";
export type { WorkflowServerOptions } from "./workflow-server.ts";
export type { ServedWorkflow } from "./served-workflow.ts";
export { ServerRequestError } from "./refusals.ts";
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
} from "../client/types.ts";
export { webPageDirectory, WebPageError } from "../web/web-page.ts";
