/**
 * The handle of one run: await it for the result, iterate `streamEvents()` for progress,
 * `cancel()` it, or reach its context (`handler.ctx`) to send events from outside.
 */
import type { Context } from "./context.ts";
import type { Event } from "./event.ts";
import { StopEvent } from "./event.ts";
import type { Run } from "./run.ts";

/**
 * @example
 * const handler = agent.run({ input: "Tell me a story" });
 * for await (const ev of handler.streamEvents()) if (ev instanceof StreamEvent) process.stdout.write(ev.delta);
 * const { response } = await handler;
 */
export class WorkflowHandler<R = unknown> implements PromiseLike<R> {
  readonly #run: Run;
  readonly #result: Promise<R>;

  constructor(run: Run) {
    this.#run = run;
    this.#result = run.result.then((outcome) => {
      if (!outcome.ok) throw outcome.error;
      // Exactly StopEvent → its result; a subclass is a typed result in itself.
      return (outcome.stop.constructor === StopEvent ? outcome.stop.result : outcome.stop) as R;
    });
    // A caller that only streams must not crash the process with an unhandled rejection;
    // awaiting the handler still throws.
    this.#result.catch(() => {});
  }

  /** The context of this run. */
  get ctx(): Context {
    return this.#run.ctx;
  }

  /** Every event written to the stream, ending with the StopEvent; ends early if the run fails. One consumer per run. */
  streamEvents(): AsyncIterable<Event> {
    return this.#run.stream.take();
  }

  /** Stops the run: awaiting it rejects with `WorkflowCancelledByUser`. */
  cancel(): void {
    this.#run.cancel();
  }

  then<A = R, B = never>(onFulfilled?: ((value: R) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.#result.then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<R | B> {
    return this.#result.catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<R> {
    return this.#result.finally(onFinally);
  }
}
