/**
 * stepflow: event-driven workflows in TypeScript, in the style of LlamaIndex Workflows.
 * @example
 * import { Workflow, step, StartEvent, StopEvent, type Context } from "stepflow";
 */
export { Event, StartEvent, StopEvent, InputRequiredEvent, HumanResponseEvent, eventTypeName, isEvent } from "./core/event.ts";
export type { EventArgs, EventClass, EventOf, FieldEventClass, ReceivedEvent, StopEventWithFields } from "./core/event.ts";
export { checkEventFields, eventSchemaOf } from "./core/event-schema.ts";
export type { CheckedEventFields, EventFieldProblem, EventSchema } from "./core/event-schema.ts";
export { step } from "./core/step.ts";
export type { RetryPolicy, StepConfig, StepDecorator, StepFunction } from "./core/step.ts";
export { exponentialBackoff } from "./core/retry.ts";
export type { BackoffOptions, ErrorClass } from "./core/retry.ts";
export { StepFailedEvent } from "./core/step-failed.ts";
export { RunStartedEvent, StepStateChangedEvent, EventReceivedEvent, WorkflowIdleEvent, RunEndedEvent } from "./core/lifecycle.ts";
export type { RunStatus, StepState } from "./core/lifecycle.ts";
export { addRunObserver, RunObservers, sharedRunObservers } from "./core/observer.ts";
export type {
  ObservedAttributes,
  ObservedOperation,
  ObservedRun,
  ObservedStep,
  OperationObservation,
  RunEnd,
  RunObservation,
  RunObserver,
  StepObservation,
  StepOutcome,
} from "./core/observer.ts";
export { resource, isResource } from "./core/resource.ts";
export type { Resource, ResourceCache, ResourceMap, ResourceValues } from "./core/resource.ts";
export { resourceConfig } from "./core/resource-config.ts";
export type { ConfigSchema, ResourceConfigOptions } from "./core/resource-config.ts";
export { Workflow } from "./core/workflow.ts";
export type { AnyWorkflow, RunOptions, WorkflowOptions } from "./core/workflow.ts";
export { approvalAnswerOf, eventsFromOutside } from "./core/outside-events.ts";
export type { ApprovalAnswerClass, ApprovalAnswerFields, FromOutside } from "./core/outside-events.ts";
export { Context } from "./core/context.ts";
export { untrustedContext } from "./core/untrusted-context.ts";
export type { UntrustedContextOptions } from "./core/untrusted-context.ts";
export type { ContextJSON, StepExecutionInfo, WaitForEventOptions } from "./core/context.ts";
export type { HandlerContext, SavedContext, StepContext } from "./core/context-faces.ts";
export type { OnceOptions, OnceResult } from "./core/step-once.ts";
export { RunLocal } from "./core/run-local.ts";
export { CodecRegistry, Codecs, ContextSerdeError, registerCodec, sharedCodecRegistry } from "./core/serialize.ts";
export { TimeSlices, sharedTimeSlices } from "./core/time-slices.ts";
export type { Codec, Json } from "./core/serialize.ts";
export { ContextStore } from "./core/store.ts";
export type { StateEditor, StateKey, StateSchema, UntypedKey } from "./core/store.ts";
export { WorkflowHandler } from "./core/handler.ts";
export type { StreamOptions } from "./core/handler.ts";
export {
  StepflowError,
  ConfigurationError,
  WorkflowValidationError,
  WorkflowTimeoutError,
  WorkflowRuntimeError,
  WorkflowCancelledByUser,
  UnhandledEventError,
  NonErrorThrownError,
  ContextStateError,
  StoreKeyError,
  StateValidationError,
} from "./core/errors.ts";
