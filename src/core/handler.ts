/**
 * The handle of one run: await it for the result, iterate `streamEvents()` for progress,
 * `cancel()` it, or reach its context (`handler.ctx`) to send events from outside.
 */
import type { Context } from "./context.ts";
import type { Event } from "./event.ts";
import { StopEvent } from "./event.ts";
import type { Run } from "./run.ts";

/** Options of {@link WorkflowHandler.streamEvents}. @example `handler.streamEvents({ cancelOnBreak: true })` */
export interface StreamOptions {
  /** Cancel the run when the consumer leaves the loop before the stream ends. Default `false`. */
  readonly cancelOnBreak?: boolean;
}

/**
 * @example
 * const handler = agent.run({ input: "Tell me a story" });
 * for await (const ev of handler.streamEvents()) if (ev instanceof StreamEvent) process.stdout.write(ev.delta);
 * const { response } = await handler;
 */
export class WorkflowHandler<R = unknown> implements PromiseLike<R> {
  readonly #run: Run;
  /**
   * The result, made when first asked for: `run.result` never rejects, so a caller that only
   * streams (and never awaits the handler) leaves no rejected promise behind, and a run nobody
   * awaits costs no promise chain.
   */
  #result: Promise<R> | undefined;

  constructor(run: Run) {
    this.#run = run;
  }

  get #outcome(): Promise<R> {
    return (this.#result ??= this.#run.result.then((outcome) => {
      if (!outcome.ok) throw outcome.error;
      // Exactly StopEvent → its result; a subclass is a typed result in itself.
      return (outcome.stop.constructor === StopEvent ? outcome.stop.result : outcome.stop) as R;
    }));
  }

  /**
   * The run's id: stable for the run, saved with a context saved mid-run, and kept by the run
   * that resumes it (so logs of both halves can be joined).
   * @example
   * const handler = flow.run({});
   * console.log(handler.runId); // "3f0c…"
   */
  get runId(): string {
    return this.#run.id;
  }

  /** The context of this run. */
  get ctx(): Context {
    return this.#run.ctx;
  }

  /**
   * Every event written to the stream, ending with the StopEvent; ends early if the run fails.
   * One consumer per run. Leaving the loop early (`break`, `return`, a throw) only stops the
   * streaming: the run goes on, and awaiting the handler gives its result. Pass
   * `{ cancelOnBreak: true }` to cancel the run then instead (awaiting it then rejects with
   * `WorkflowCancelledByUser`, and the context keeps the run to resume).
   * @example
   * for await (const ev of handler.streamEvents({ cancelOnBreak: true })) {
   *   if (ev instanceof InputRequiredEvent) break; // the run stops here
   * }
   */
  streamEvents(options: StreamOptions = {}): AsyncIterable<Event> {
    const events = this.#run.stream.take();
    if (!options.cancelOnBreak) return events;
    const run = this.#run;
    const iterator: AsyncIterableIterator<Event> = {
      next: () => events.next(),
      return: (value?: unknown) => {
        run.cancel();
        return events.return ? events.return(value) : Promise.resolve({ done: true, value: undefined });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** Stops the run: awaiting it rejects with `WorkflowCancelledByUser`. */
  cancel(): void {
    this.#run.cancel();
  }

  then<A = R, B = never>(
    onFulfilled?: ((value: R) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#outcome.then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<R | B> {
    return this.#outcome.catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<R> {
    return this.#outcome.finally(onFinally);
  }
}
