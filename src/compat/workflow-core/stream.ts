/**
 * `WorkflowStream`: workflow-core's event stream. Upstream builds every operator from
 * `TransformStream`s (several promises per event); here the operators (`until`,
 * `filter`, `take`, `map`, `toArray`, `forEach`, async iteration) are plain callbacks chained to
 * the source, and a real `ReadableStream` is built only when one is asked for (`getReader`,
 * `pipeTo`, `pipeThrough`, `tee`, `toResponse`), so the stream stays a `ReadableStream` to any
 * code that reads it as one.
 */
import { eventSource, isWorkflowEvent, type InferWorkflowEventData, type WorkflowEvent, type WorkflowEventData } from "./event.ts";

// The global stream classes' own shapes, not node:stream/web's: where the program's globals are
// the DOM's (tsc's default `lib`), Node's differ from them under exactOptionalPropertyTypes and
// these overrides would no longer match the ReadableStream they extend.
type ReadableWritablePair<T, W> = { readable: ReadableStream<T>; writable: WritableStream<W> };
type StreamPipeOptions = NonNullable<Parameters<ReadableStream["pipeTo"]>[1]>;

/**
 * Receives what a stream produces: items, then at most one `error` or `complete`.
 * @example
 * import type { StreamSink } from "stepflow/compat/workflow-core";
 * const log: StreamSink<number> = { next: (n) => console.log(n), error: console.error, complete: () => console.log("end") };
 */
export interface StreamSink<T> {
  next(item: T): void;
  error(reason: unknown): void;
  complete(): void;
}

/** Connects a sink to a source; returns the function that disconnects it. */
type Attach<T> = (sink: StreamSink<T>) => () => void;

/** `on(event, handler)` listeners see events as they are sent, without consuming the stream. */
type Tap = (listener: (event: WorkflowEventData<unknown>) => void) => () => void;

/**
 * The start of a context's stream. It exists before its reader: from its creation it keeps what
 * arrives until a reader attaches, then forwards. When the reader leaves (`until` matched, `take`
 * reached its count, the loop broke) it unsubscribes (`onClose`) and keeps nothing; a later
 * reader subscribes again (`onOpen`) and sees the events sent from then on, as upstream's
 * handlers expect when they read their `stream` twice.
 */
export class StreamChannel<T> {
  #buffer: T[] | null = [];
  #sink: StreamSink<T> | null = null;
  #failure: { readonly reason: unknown } | null = null;
  #subscribed = true;

  constructor(
    private readonly onOpen: () => void,
    private readonly onClose: () => void,
  ) {}

  push(item: T): void {
    if (this.#sink !== null) this.#sink.next(item);
    else if (this.#buffer !== null) this.#buffer.push(item);
  }

  /** Fails the current reader, and any later one, with `reason`. */
  fail(reason: unknown): void {
    if (this.#failure !== null) return;
    this.#failure = { reason };
    this.#buffer = null;
    const sink = this.#sink;
    if (sink !== null) {
      this.#detach();
      sink.error(reason);
    }
  }

  readonly attach: Attach<T> = (sink) => {
    if (this.#sink !== null) throw new TypeError(LOCKED);
    if (this.#failure !== null) {
      sink.error(this.#failure.reason);
      return () => {};
    }
    if (!this.#subscribed) {
      this.#subscribed = true;
      this.onOpen();
    }
    this.#sink = sink;
    const buffered = this.#buffer;
    this.#buffer = null;
    if (buffered !== null) {
      for (const item of buffered) {
        if (this.#sink !== sink) break;
        sink.next(item);
      }
    }
    return () => {
      if (this.#sink === sink) this.#detach();
    };
  };

  #detach(): void {
    this.#sink = null;
    this.#buffer = null;
    if (this.#subscribed) {
      this.#subscribed = false;
      this.onClose();
    }
  }
}

const LOCKED =
  "This stream is locked: it already has a reader. Read a stream once at a time (for example with stream.until(stop).toArray()), or split it first with stream.tee().";

type Predicate<R> = (item: R) => boolean;

function matcher<R>(predicate: unknown): Predicate<R> {
  if (typeof predicate === "function") return predicate as Predicate<R>;
  if (isWorkflowEvent(predicate)) return (item) => predicate.include(item);
  return (item) => item === predicate;
}

/** Makes a disconnect function safe to call before it exists and more than once. */
function link<T>(source: Attach<T>, sink: StreamSink<T>, state: { done: boolean }): () => void {
  let disconnect: (() => void) | null = null;
  let pending = false;
  const stop = () => {
    if (disconnect !== null) {
      const d = disconnect;
      disconnect = () => {};
      d();
    } else pending = true;
  };
  disconnect = source(sink);
  if (pending || state.done) stop();
  return stop;
}

/**
 * A stream of workflow events (or of what `map` makes of them), readable once. It is a
 * `ReadableStream` and async iterable; its own methods filter, cut and collect it.
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * const Start = workflowEvent<number>();
 * const Stop = workflowEvent<number>();
 * const workflow = createWorkflow();
 * workflow.handle([Start], (_ctx, start) => Stop.with(start.data * 2));
 * const { stream, sendEvent } = workflow.createContext();
 * sendEvent(Start.with(21));
 * const events = await stream.until(Stop).toArray();
 * console.log(events.at(-1)?.data); // 42
 */
export class WorkflowStream<R = WorkflowEventData<unknown>> extends ReadableStream<R> implements AsyncIterable<R> {
  readonly #source: Attach<R>;
  readonly #tap: Tap | null;
  #consumed = false;
  #readable: ReadableStream<R> | null = null;

  readonly #reusable: boolean;

  /**
   * @internal Use a workflow context's `stream`, or {@link WorkflowStream.fromReadableStream}.
   * A `reusable` source (a context's) may be read again once its reader has left.
   */
  constructor(source: Attach<R>, tap: Tap | null = null, reusable = false) {
    super();
    this.#source = source;
    this.#tap = tap;
    this.#reusable = reusable;
  }

  /**
   * Wraps a `ReadableStream` of events.
   * @example
   * import { WorkflowStream, workflowEvent } from "stepflow/compat/workflow-core";
   * const Tick = workflowEvent<number>();
   * const stream = WorkflowStream.fromReadableStream(ReadableStream.from([Tick.with(1), Tick.with(2)]));
   * console.log((await stream.toArray()).length); // 2
   */
  static fromReadableStream<T = WorkflowEventData<unknown>>(stream: ReadableStream<T>): WorkflowStream<T> {
    return new WorkflowStream<T>((sink) => {
      const reader = stream.getReader();
      let stopped = false;
      const pump = async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (stopped) return;
            if (done) return sink.complete();
            sink.next(value);
          }
        } catch (error) {
          if (!stopped) sink.error(error);
        }
      };
      void pump();
      return () => {
        if (stopped) return;
        stopped = true;
        reader.cancel().catch(() => {});
      };
    });
  }

  /**
   * Reads the newline-delimited JSON that {@link WorkflowStream.toResponse} writes, turning each
   * line back into an event of the type whose `uniqueId` it names.
   * @example
   * import { WorkflowStream, workflowEvent } from "stepflow/compat/workflow-core";
   * const Message = workflowEvent<string>({ uniqueId: "message" });
   * const response = new Response('{"uniqueId":"message","data":"hi"}\n');
   * const [ev] = await WorkflowStream.fromResponse(response, { message: Message }).toArray();
   * console.log(Message.include(ev) && ev.data); // "hi"
   */
  static fromResponse(response: Response, eventMap: Record<string, WorkflowEvent<unknown>>): WorkflowStream<WorkflowEventData<unknown>> {
    const body = response.body;
    if (!body) throw new TypeError("The response has no body to read events from.");
    const types = new Map(Object.values(eventMap).map((e) => [e.uniqueId, e] as const));
    let rest = "";
    const decode = new TransformStream<string, WorkflowEventData<unknown>>({
      transform(chunk, controller) {
        const lines = (rest + chunk).split("\n");
        rest = lines.pop() ?? "";
        for (const line of lines) emitLine(line, types, controller);
      },
      flush(controller) {
        emitLine(rest, types, controller);
      },
    });
    return WorkflowStream.fromReadableStream(body.pipeThrough(new TextDecoderStream()).pipeThrough(decode));
  }

  /**
   * Calls `handler` for each event of type `event` as it is sent, without reading the stream.
   * @example
   * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
   * const Message = workflowEvent<string>();
   * const { stream, sendEvent } = createWorkflow().createContext();
   * const stop = stream.on(Message, (ev) => console.log(ev.data));
   * sendEvent(Message.with("hello")); // logs "hello"
   * stop();
   */
  on<T>(event: WorkflowEvent<T>, handler: (event: WorkflowEventData<T>) => void): () => void {
    if (this.#tap === null) throw new TypeError("stream.on() listens to a workflow context's stream; this stream was not made from one.");
    return this.#tap((ev) => {
      if (event.include(ev)) handler(ev);
    });
  }

  #take(): Attach<R> {
    if (this.#reusable) return this.#source;
    if (this.#consumed || this.#readable !== null) throw new TypeError(LOCKED);
    this.#consumed = true;
    return this.#source;
  }

  #derive<T>(make: (sink: StreamSink<T>, source: Attach<R>) => () => void): WorkflowStream<T> {
    // Taking the source now makes a second operator on a one-time stream fail at once.
    const taken = this.#take();
    return new WorkflowStream<T>((sink) => make(sink, taken), this.#tap);
  }

  /** The stream as a real `ReadableStream`, made once, on first need. */
  #asReadable(): ReadableStream<R> {
    if (this.#readable !== null) return this.#readable;
    const source = this.#take();
    let stop: (() => void) | null = null;
    const state = { done: false };
    this.#readable = new ReadableStream<R>(
      {
        start: (controller) => {
          stop = link(
            source,
            {
              next: (item) => controller.enqueue(item),
              error: (reason) => {
                state.done = true;
                controller.error(reason);
              },
              complete: () => {
                state.done = true;
                controller.close();
              },
            },
            state,
          );
        },
        cancel: () => {
          stop?.();
        },
      },
      { highWaterMark: 0 },
    );
    return this.#readable;
  }

  override get locked(): boolean {
    return this.#readable !== null ? this.#readable.locked : this.#consumed;
  }

  override getReader(): ReadableStreamDefaultReader<R>;
  override getReader(options: { mode: "byob" }): never;
  override getReader(): ReadableStreamDefaultReader<R> {
    return this.#asReadable().getReader();
  }

  override cancel(reason?: unknown): Promise<void> {
    return this.#asReadable().cancel(reason);
  }

  override pipeThrough<T>(transform: ReadableWritablePair<T, R>, options?: StreamPipeOptions): WorkflowStream<T> {
    return WorkflowStream.fromReadableStream(this.#asReadable().pipeThrough(transform, options));
  }

  override pipeTo(destination: WritableStream<R>, options?: StreamPipeOptions): Promise<void> {
    return this.#asReadable().pipeTo(destination, options);
  }

  override tee(): [WorkflowStream<R>, WorkflowStream<R>] {
    const [left, right] = this.#asReadable().tee();
    return [WorkflowStream.fromReadableStream(left), WorkflowStream.fromReadableStream(right)];
  }

  override values(options?: { preventCancel?: boolean }): AsyncIterableIterator<R> {
    return this.#iterate(options?.preventCancel ?? false);
  }

  override [Symbol.asyncIterator](): AsyncIterableIterator<R> {
    return this.#iterate(false);
  }

  #iterate(_preventCancel: boolean): AsyncIterableIterator<R> {
    const source = this.#take();
    const queue: R[] = [];
    let head = 0;
    let end: { failed: boolean; reason?: unknown } | null = null;
    let waiting: { resolve: (r: IteratorResult<R>) => void; reject: (e: unknown) => void } | null = null;
    const state = { done: false };
    const stop = link(
      source,
      {
        next: (item) => {
          if (waiting !== null) {
            const w = waiting;
            waiting = null;
            w.resolve({ done: false, value: item });
          } else queue.push(item);
        },
        error: (reason) => {
          state.done = true;
          end = { failed: true, reason };
          if (waiting !== null) {
            const w = waiting;
            waiting = null;
            w.reject(reason);
          }
        },
        complete: () => {
          state.done = true;
          end = { failed: false };
          if (waiting !== null) {
            const w = waiting;
            waiting = null;
            w.resolve({ done: true, value: undefined });
          }
        },
      },
      state,
    );
    const iterator: AsyncIterableIterator<R> = {
      next: () => {
        if (head < queue.length) {
          const value = queue[head++] as R;
          if (head > 1024 && head * 2 > queue.length) {
            queue.splice(0, head);
            head = 0;
          }
          return Promise.resolve({ done: false, value });
        }
        if (end !== null) {
          const e: { failed: boolean; reason?: unknown } = end;
          if (e.failed) {
            end = { failed: false };
            return Promise.reject(e.reason);
          }
          return Promise.resolve({ done: true, value: undefined });
        }
        return new Promise<IteratorResult<R>>((resolve, reject) => {
          waiting = { resolve, reject };
        });
      },
      return: (value?: unknown) => {
        stop();
        end = { failed: false };
        queue.length = 0;
        head = 0;
        return Promise.resolve({ done: true, value: value as R });
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  /**
   * Calls `callback` for each item; resolves when the stream ends, rejects if it fails or
   * `callback` throws.
   * @example
   * import { WorkflowStream } from "stepflow/compat/workflow-core";
   * await WorkflowStream.fromReadableStream(ReadableStream.from([1, 2])).forEach((n) => console.log(n));
   */
  forEach(callback: (item: R) => void): Promise<void> {
    const source = this.#take();
    return new Promise<void>((resolve, reject) => {
      const state = { done: false };
      let stop: () => void = () => {};
      stop = link(
        source,
        {
          next: (item) => {
            if (state.done) return;
            try {
              callback(item);
            } catch (error) {
              state.done = true;
              stop();
              reject(error);
            }
          },
          error: (reason) => {
            state.done = true;
            reject(reason);
          },
          complete: () => {
            state.done = true;
            resolve();
          },
        },
        state,
      );
    });
  }

  /**
   * Collects every item until the stream ends.
   * @example
   * import { WorkflowStream } from "stepflow/compat/workflow-core";
   * console.log(await WorkflowStream.fromReadableStream(ReadableStream.from([1, 2])).toArray()); // [1, 2]
   */
  toArray(): Promise<R[]> {
    const items: R[] = [];
    return this.forEach((item) => {
      items.push(item);
    }).then(() => items);
  }

  /**
   * Transforms each item.
   * @example
   * import { WorkflowStream } from "stepflow/compat/workflow-core";
   * console.log(await WorkflowStream.fromReadableStream(ReadableStream.from([1, 2])).map((n) => n * 10).toArray()); // [10, 20]
   */
  map<T>(callback: (item: R) => T): WorkflowStream<T> {
    return this.#derive<T>((sink, source) => {
      const state = { done: false };
      let stop: () => void = () => {};
      stop = link(
        source,
        {
          next: (item) => {
            if (state.done) return;
            let mapped: T;
            try {
              mapped = callback(item);
            } catch (error) {
              state.done = true;
              stop();
              return sink.error(error);
            }
            sink.next(mapped);
          },
          error: (reason) => sink.error(reason),
          complete: () => sink.complete(),
        },
        state,
      );
      return stop;
    });
  }

  /**
   * The first `limit` items, then the end (which lets go of the source).
   * @example
   * import { WorkflowStream } from "stepflow/compat/workflow-core";
   * console.log(await WorkflowStream.fromReadableStream(ReadableStream.from([1, 2, 3])).take(2).toArray()); // [1, 2]
   */
  take(limit: number): WorkflowStream<R> {
    let count = 0;
    return this.#cut(() => {
      count++;
      return { emit: true, end: count >= limit };
    }, limit <= 0);
  }

  /**
   * Only the items matching `predicate`: an event type, a function, or one item.
   * @example
   * import { WorkflowStream } from "stepflow/compat/workflow-core";
   * console.log(await WorkflowStream.fromReadableStream(ReadableStream.from([1, 2, 3])).filter((n) => n !== 2).toArray()); // [1, 3]
   */
  filter(predicate: R extends WorkflowEventData<unknown> ? WorkflowEvent<InferWorkflowEventData<R>> : never): WorkflowStream<R>;
  filter(predicate: R): WorkflowStream<R>;
  filter(predicate: (event: R) => boolean): WorkflowStream<R>;
  filter(predicate: unknown): WorkflowStream<R> {
    const matches = matcher<R>(predicate);
    return this.#cut((item) => ({ emit: matches(item), end: false }), false);
  }

  /**
   * The items up to and including the first that matches `predicate`, then the end (which lets
   * go of the source).
   * @example
   * import { WorkflowStream } from "stepflow/compat/workflow-core";
   * console.log(await WorkflowStream.fromReadableStream(ReadableStream.from([1, 2, 3])).until((n) => n === 2).toArray()); // [1, 2]
   */
  until(predicate: R extends WorkflowEventData<unknown> ? WorkflowEvent<InferWorkflowEventData<R>> : never): WorkflowStream<R>;
  until(predicate: (item: R) => boolean): WorkflowStream<R>;
  until(item: R): WorkflowStream<R>;
  until(predicate: unknown): WorkflowStream<R> {
    const matches = matcher<R>(predicate);
    return this.#cut((item) => ({ emit: true, end: matches(item) }), false);
  }

  /**
   * Reads until the first item matching `predicate` and returns it; rejects if the stream ends
   * first.
   * @example
   * import { WorkflowStream } from "stepflow/compat/workflow-core";
   * console.log(await WorkflowStream.fromReadableStream(ReadableStream.from([1, 2, 3])).untilEvent((n) => n > 1)); // 2
   */
  untilEvent(predicate: R extends WorkflowEventData<unknown> ? WorkflowEvent<InferWorkflowEventData<R>> : never): Promise<R>;
  untilEvent(predicate: (item: R) => boolean): Promise<R>;
  untilEvent(item: R): Promise<R>;
  async untilEvent(predicate: unknown): Promise<R> {
    const matches = matcher<R>(predicate);
    const found: { item?: R; hit: boolean } = { hit: false };
    await this.#cut((item) => {
      const hit = matches(item);
      if (hit) {
        found.item = item;
        found.hit = true;
      }
      return { emit: false, end: hit };
    }, false).forEach(() => {});
    if (!found.hit) throw new Error("Stream ended without matching event");
    return found.item as R;
  }

  /**
   * Writes the events as newline-delimited JSON (`{"data":…,"uniqueId":…}`) into a `Response`,
   * for a client to read with {@link WorkflowStream.fromResponse}.
   * @example
   * import { WorkflowStream, workflowEvent } from "stepflow/compat/workflow-core";
   * const Message = workflowEvent<string>({ uniqueId: "message" });
   * const response = WorkflowStream.fromReadableStream(ReadableStream.from([Message.with("hi")])).toResponse();
   * console.log(await response.text()); // {"data":"hi","uniqueId":"message"}
   */
  toResponse(init?: ResponseInit, transformer: TransformStream<R, string> = jsonEncoder<R>()): Response {
    return new Response(this.#asReadable().pipeThrough(transformer).pipeThrough(new TextEncoderStream()), init);
  }

  /** One operator: per item, whether to pass it on and whether to end after it. */
  #cut(step: (item: R) => { emit: boolean; end: boolean }, endAtOnce: boolean): WorkflowStream<R> {
    return this.#derive<R>((sink, source) => {
      const state = { done: endAtOnce };
      if (endAtOnce) {
        sink.complete();
        return () => {};
      }
      let stop: () => void = () => {};
      stop = link(
        source,
        {
          next: (item) => {
            if (state.done) return;
            let decision: { emit: boolean; end: boolean };
            try {
              decision = step(item);
            } catch (error) {
              state.done = true;
              stop();
              return sink.error(error);
            }
            if (decision.emit) sink.next(item);
            if (decision.end && !state.done) {
              state.done = true;
              stop();
              sink.complete();
            }
          },
          error: (reason) => {
            if (state.done) return;
            state.done = true;
            sink.error(reason);
          },
          complete: () => {
            if (state.done) return;
            state.done = true;
            sink.complete();
          },
        },
        state,
      );
      return stop;
    });
  }
}

function jsonEncoder<R>(): TransformStream<R, string> {
  return new TransformStream<R, string>({
    transform(event, controller) {
      const type = eventSource(event);
      if (type) controller.enqueue(`${JSON.stringify({ data: (event as WorkflowEventData<unknown>).data, uniqueId: type.uniqueId })}\n`);
    },
  });
}

function emitLine(line: string, types: Map<string, WorkflowEvent<unknown>>, controller: TransformStreamDefaultController<WorkflowEventData<unknown>>): void {
  const text = line.trim();
  if (text.length === 0) return;
  const parsed = JSON.parse(text) as { uniqueId?: unknown; data?: unknown };
  const type = typeof parsed.uniqueId === "string" ? types.get(parsed.uniqueId) : undefined;
  if (!type)
    throw new Error(
      `The response holds an event of unknown type "${String(parsed.uniqueId)}": add its event type to the map passed to WorkflowStream.fromResponse().`,
    );
  controller.enqueue(type.with(parsed.data));
}
