/**
 * Error recovery: the event a recovery step receives when a step has failed for good, in the
 * style of Python's `@catch_error`. Plain data, so a context saved while it is queued still saves.
 */
import { Event } from "./event.ts";

/**
 * A step failed after its last attempt and a recovery step (`@step({ accepts: [StepFailedEvent],
 * catchErrors: { … } })`) takes over: `step` failed, after `attempts` attempts, on an event of
 * type `inputEvent` whose fields are `input`; `error` is what it threw.
 * @example
 * @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { forSteps: ["fetch"], maxRecoveries: 2 } })
 * async recover(_ctx: Context, ev: StepFailedEvent) {
 *   return new StopEvent({ result: `fetch failed: ${ev.error.message}` });
 * }
 */
export class StepFailedEvent extends Event<{
  readonly step: string;
  readonly attempts: number;
  readonly error: { readonly name: string; readonly message: string };
  readonly inputEvent: string;
  readonly input: Readonly<Record<string, unknown>>;
}> {}
