/**
 * The context a process would have saved had it stopped at an event: runs `handler` until its
 * first event of class `type`, saves the run's context as JSON text, and cancels the run.
 * @example const saved = await saveOnEvent(agent.run({ input: "Fire Lawson" }), ToolApprovalRequestEvent);
 */
import type { EventClass } from "../../src/index.ts";

/** What of a run's handler this needs. */
interface RunningHandler {
  streamEvents(): AsyncIterable<unknown>;
  readonly ctx: { toJSON(): unknown };
  cancel(): void;
  catch(onRejected: () => undefined): Promise<unknown>;
}

export async function saveOnEvent(handler: RunningHandler, type: EventClass): Promise<string> {
  let saved = "";
  for await (const ev of handler.streamEvents()) {
    if (ev instanceof type) {
      saved = JSON.stringify(handler.ctx.toJSON());
      handler.cancel();
    }
  }
  await handler.catch(() => undefined);
  return saved;
}
