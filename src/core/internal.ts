/**
 * The engine core as the rest of stepflow uses it: tools, LLM clients, journals, sessions, the
 * server, DBOS, OpenTelemetry, MCP, the CLI and the agent import the core through this file or
 * the public entry (src/index.ts), never a core file directly. What the core lays out in its
 * files is its own business; this list is what it promises the layers above. Not a public
 * entry point: applications import "stepflow".
 */
export type { ContextJSON } from "./context-format.ts";
export { Context } from "./context.ts";
export { runOf } from "./context-engine.ts";
export { ConfigurationError, StepflowError, WorkflowCancelledByUser, WorkflowTimeoutError } from "./errors.ts";
export { Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, eventTypeName, isEvent, isSubclassOf } from "./event.ts";
export type { EventClass } from "./event.ts";
export { checkEventFields, eventSchemaOf } from "./event-schema.ts";
export type { CheckedEventFields, EventFieldProblem, EventSchema } from "./event-schema.ts";
export { toMermaid } from "./graph.ts";
export type { WorkflowHandler } from "./handler.ts";
export { isRecord } from "./is-record.ts";
export { journalOf, processJournal, useJournal } from "./journal/context-journal.ts";
export { MemoryJournal } from "./journal/memory-journal.ts";
export { JournalError, checkJournalKey } from "./journal/types.ts";
export type { Journal, JournalClaim, JournalEntry } from "./journal/types.ts";
export { EventReceivedEvent, RunEndedEvent, RunStartedEvent, StepStateChangedEvent, WorkflowIdleEvent } from "./lifecycle.ts";
export { addRunObserver, observeOperation, observing, RunObservers, sharedRunObservers } from "./observer.ts";
export { approvalAnswerOf, eventsFromOutside } from "./outside-events.ts";
export type { ObservedAttributes, OperationObservation, RunObservation, RunObserver, StepObservation } from "./observer.ts";
export { ContextSerdeError, DEFAULT_CODECS, decodeEvent, decodeValue, encodeEvent, encodeValue, shadowingField } from "./serialize.ts";
export type { Codecs, Json, SavedEvent } from "./serialize.ts";
export type { OnceResult } from "./step-once.ts";
export { newRunId } from "./run-id.ts";
export { heldEventList, heldEvents, stillAsks, takenAtOnce, waitsAnswered } from "./run-waits.ts";
export { checkTimeout, startTimer } from "./timers.ts";
export { untrustedContext } from "./untrusted-context.ts";
export { describeValue, maskCredentials, quoteInput } from "./user-text.ts";
export type { RunChange, RunListener } from "./run-io.ts";
export { Workflow } from "./workflow.ts";
export type { AnyWorkflow, RunOptions } from "./workflow.ts";
