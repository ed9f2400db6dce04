/**
 * stepflow: event-driven workflows in TypeScript, in the style of LlamaIndex Workflows.
 * @example
 * import { Workflow, step, StartEvent, StopEvent, type Context } from "stepflow";
 */
export { Event, StartEvent, StopEvent, InputRequiredEvent, HumanResponseEvent, eventTypeName, isEvent } from "./event.ts";
export type { EventArgs, EventClass, EventOf, FieldEventClass, StopEventWithFields } from "./event.ts";
export { step } from "./step.ts";
export type { RetryPolicy, StepConfig, StepDecorator, StepFunction } from "./step.ts";
export { exponentialBackoff } from "./retry.ts";
export type { BackoffOptions, ErrorClass } from "./retry.ts";
export { StepFailedEvent } from "./step-failed.ts";
export { RunStartedEvent, StepStateChangedEvent, RunEndedEvent } from "./lifecycle.ts";
export type { RunStatus, StepState } from "./lifecycle.ts";
export { resource, isResource } from "./resource.ts";
export type { Resource, ResourceCache, ResourceMap, ResourceValues } from "./resource.ts";
export { Workflow } from "./workflow.ts";
export type { AnyWorkflow, RunOptions, WorkflowOptions } from "./workflow.ts";
export { Context } from "./context.ts";
export type { ContextJSON, WaitForEventOptions } from "./context.ts";
export type { OnceOptions, OnceResult } from "./step-once.ts";
export { RunLocal } from "./run-local.ts";
export { Codecs, ContextSerdeError, registerCodec } from "./serialize.ts";
export type { Codec, Json } from "./serialize.ts";
export { ContextStore } from "./store.ts";
export type { StateEditor, StateKey, StateSchema, UntypedKey } from "./store.ts";
export { WorkflowHandler } from "./handler.ts";
export type { StreamOptions } from "./handler.ts";
export {
  StepflowError,
  WorkflowValidationError,
  WorkflowTimeoutError,
  WorkflowRuntimeError,
  WorkflowCancelledByUser,
  UnhandledEventError,
  NonErrorThrownError,
  ContextStateError,
  StoreKeyError,
  StateValidationError,
} from "./errors.ts";
