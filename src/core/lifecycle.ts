/**
 * Run lifecycle events: what a stream consumer (a UI, a server) needs to follow a run, see
 * when it waits for input, and learn how it ended without awaiting the handler. Written to the
 * stream only when the run is started with `{ lifecycleEvents: true }`, so runs that do not ask
 * pay nothing.
 */
import { Event } from "./event.ts";

/**
 * The run has started (or a saved run has resumed): the first event on the stream.
 * @example
 * if (ev instanceof RunStartedEvent) console.log(`run ${ev.runId} of ${ev.workflow}`);
 */
export class RunStartedEvent extends Event<{ readonly runId: string; readonly workflow: string; readonly resumed: boolean }> {}

/**
 * What a step execution is doing: `started` an attempt, `finished` it, `failed` it (`willRetry`
 * says whether another attempt follows), or `cancelled`: the run ended (another step failed, a
 * timeout, a cancel) while it was still executing, and its result will be ignored.
 * @example `if (ev.state === "failed" && !ev.willRetry) alert(ev.step)`
 */
export type StepState = "started" | "finished" | "failed" | "cancelled";

/**
 * A step execution changed state. `attempt` counts from 1; `inputEvent` is the type name of
 * the event it runs on, `outputEvent` that of the event it returned (finished), `error` the
 * message of what it threw (failed).
 * @example
 * if (ev instanceof StepStateChangedEvent && ev.state === "failed") console.log(`${ev.step} attempt ${ev.attempt}: ${ev.error}`);
 */
export class StepStateChangedEvent extends Event<{
  readonly runId: string;
  readonly step: string;
  readonly state: StepState;
  readonly attempt: number;
  readonly inputEvent: string;
  readonly outputEvent?: string;
  readonly error?: string;
  readonly willRetry?: boolean;
}> {}

/**
 * The run is idle: nothing is queued and no step is executing, so it can go on only when an
 * event comes from outside (the answer to a `waitForEvent`, or an event a step accepts, such
 * as a `HumanResponseEvent`). Python's `WorkflowIdleEvent`. Written once per idle period,
 * after what was under way when it became idle has had its turn (an answer sent at once
 * leaves no idle period): again only after a step has run and the run is idle once more.
 * @example
 * if (ev instanceof WorkflowIdleEvent) console.log(`run ${ev.runId} is waiting for input`);
 */
export class WorkflowIdleEvent extends Event<{ readonly runId: string }> {}

/**
 * An event sent into the run from outside it (through `handler.ctx.sendEvent`: a human's answer,
 * a client's event) that the run accepted, written where it arrived among the run's other
 * events. `event` is the accepted event itself; `eventType` its type name. An event sent by a
 * step is the run's own doing and gets none; a send the run refused (it had ended, a step
 * name that does not exist) gets none either.
 * @example
 * if (ev instanceof EventReceivedEvent) console.log(`${ev.eventType} arrived`, ev.event);
 */
export class EventReceivedEvent extends Event<{ readonly runId: string; readonly eventType: string; readonly event: Event }> {}

/** How a run ended. @example `const ok = (status: RunStatus) => status === "succeeded";` */
export type RunStatus = "succeeded" | "failed" | "timedOut" | "cancelled";

/**
 * The last event on the stream: how the run ended, and for a run that did not succeed the
 * error's class name and message (the handler rejects with the error itself).
 * @example
 * if (ev instanceof RunEndedEvent && ev.status !== "succeeded") console.log(`${ev.status}: ${ev.error?.message}`);
 */
export class RunEndedEvent extends Event<{
  readonly runId: string;
  readonly status: RunStatus;
  readonly error?: { readonly name: string; readonly message: string };
}> {}
