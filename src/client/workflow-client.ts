/**
 * `WorkflowClient`: a stepflow server's API from another program, over `fetch` only, so the
 * same code runs in Node, Deno, Bun and browsers. Event streams read NDJSON and pick up where
 * they left off when the connection drops.
 */
import { StepflowError } from "../core/errors.ts";
import { ndjsonLines } from "./ndjson-lines.ts";
import type { Checkpoint, ErrorBody, HandlerInfo, HandlerStatus, JsonObject, JsonValue, StreamEnd, StreamedEvent, WorkflowInfo } from "./types.ts";
import type { EventClassType, EventData, EventTypeName, HandlerOf, RunInput, ServedWorkflows, WorkflowName } from "./typed.ts";

/**
 * The server answered with an error (`status` and `code` from its JSON body), or could not be
 * reached (`status` 0, `code` "network").
 * @example
 * try { await client.getHandler("nope"); } catch (e) { if (e instanceof WorkflowClientError && e.status === 404) console.log("gone"); }
 */
export class WorkflowClientError extends StepflowError {
  override name = "WorkflowClientError";
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options of {@link WorkflowClient}. @example `new WorkflowClient({ baseUrl: "http://127.0.0.1:8787", token: process.env.STEPFLOW_SERVER_TOKEN })` */
export interface WorkflowClientOptions {
  /** The server's URL, e.g. `http://127.0.0.1:8787`; empty for the page's own origin in a browser. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** A `fetch` of your own (default: the global one). */
  readonly fetch?: typeof fetch;
  /**
   * How many times a dropped event stream reconnects before `streamEvents` throws, and how many
   * times any other call is sent again after a network failure or a 502, 503 or 504 (a server
   * restarting behind a proxy) before it throws (default 5). A POST is sent again with the
   * same `Idempotency-Key`, so the server does it once; one whose key another server sharing
   * the store is still answering (409 `idempotency_key_in_use`) is sent again each second until
   * that answer comes, not counted here.
   */
  readonly reconnects?: number;
  /**
   * Seconds an event stream may send nothing before the client takes the connection for dead
   * and reconnects (a dropped connection does not always say so); `null` for no limit. The
   * server sends a heartbeat every 15 s while a run is quiet. Default 60.
   */
  readonly idleTimeout?: number | null;
  /** Characters one event of an event stream may take before `streamEvents` fails with code `line_too_long`. Default 16,777,216 (16 Mi). */
  readonly maxLineChars?: number;
}

/** Options of a run started by the client. @example `await client.run("agent", { input: "What is my name?" }, { continueFrom: previous.id })` */
export interface StartOptions {
  /** Seconds the run may take; `null` for no limit (default: the workflow's). */
  readonly timeout?: number | null;
  /** A finished handler of the same workflow whose context the run continues in (a conversation's next turn). */
  readonly continueFrom?: string;
  /** A saved context to run in (`getContext` of a handler, or `ctx.toJSON()`); one saved mid-run continues that run: pass `undefined` as input. */
  readonly context?: JsonObject;
  readonly signal?: AbortSignal;
  /** The request's `Idempotency-Key` (default: a new random one per call): one of yours, to send the same start again later, from another process even, and get the same run. */
  readonly idempotencyKey?: string;
}

/**
 * Options of a call that changes a run: `idempotencyKey` as in {@link StartOptions}.
 * @example `await client.sendEvent(id, "HumanResponseEvent", { response: "yes" }, { idempotencyKey: messageId })`
 */
export interface SendOptions {
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
}

/** Filters of {@link WorkflowClient.listHandlers}; `Name`: the workflow names a typed client knows. @example `await client.listHandlers({ status: ["waiting"], limit: 10 })` */
export interface HandlerQuery<Name extends string = string> {
  readonly workflow?: Name;
  readonly status?: readonly HandlerStatus[];
  readonly limit?: number;
}

/** A finished run's status. @example `FINISHED.has(info.status)` */
const FINISHED: ReadonlySet<HandlerStatus> = new Set(["succeeded", "failed", "cancelled", "timedOut"]);

/**
 * A stepflow server's API. Given the server's record of workflows as its type argument
 * (`WorkflowClient<typeof workflows>`, imported with `import type`: no server code comes with
 * it), it knows their names, the input each takes and the result each gives; without one, any
 * name, any JSON input and a `JsonValue` result.
 * @example
 * import { WorkflowClient } from "stepflow/client";
 * const client = new WorkflowClient({ baseUrl: "http://127.0.0.1:8787" });
 * const handler = await client.start("agent", { input: "What is (2123 + 2321) * 312?" });
 * for await (const ev of client.streamEvents(handler.id)) if (ev.type === "agent.StreamEvent") console.log(ev.data.delta);
 * console.log((await client.getHandler(handler.id)).result);
 * @example
 * import type { workflows } from "./workflows.ts"; // the record given to new WorkflowServer({ workflows })
 * const typed = new WorkflowClient<typeof workflows>({ baseUrl: "http://127.0.0.1:8787" });
 * const done = await typed.run("agent", { input: "What is 6 * 7?" });
 * console.log(done.result?.response.content); // typed as the agent's result
 */
export class WorkflowClient<W extends ServedWorkflows = never> {
  readonly #base: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #reconnects: number;
  readonly #idleMs: number | null;
  readonly #maxLineChars: number;

  constructor(options: WorkflowClientOptions) {
    if (typeof options?.baseUrl !== "string")
      throw new WorkflowClientError('WorkflowClient needs { baseUrl }, like { baseUrl: "http://127.0.0.1:8787" }.', 0, "config");
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#reconnects = options.reconnects ?? 5;
    const idle = options.idleTimeout === undefined ? DEFAULT_IDLE_SECONDS : options.idleTimeout;
    if (idle !== null && !(typeof idle === "number" && idle > 0 && idle <= MAX_TIMER_SECONDS))
      throw new WorkflowClientError(
        `WorkflowClient: idleTimeout is in seconds, a number > 0 (the default is ${DEFAULT_IDLE_SECONDS}), or null for none; got ${String(idle)}.`,
        0,
        "config",
      );
    this.#idleMs = idle === null ? null : idle * 1000;
    this.#maxLineChars = options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
    if (!(Number.isSafeInteger(this.#maxLineChars) && this.#maxLineChars > 0))
      throw new WorkflowClientError(
        `WorkflowClient: maxLineChars is a whole number of characters > 0 (the default is ${DEFAULT_MAX_LINE_CHARS}); got ${String(options.maxLineChars)}.`,
        0,
        "config",
      );
  }

  /** The workflows the server runs, with their graphs and event types. */
  async listWorkflows(): Promise<WorkflowInfo[]> {
    return (await this.#json<{ workflows: WorkflowInfo[] }>("GET", "/api/workflows")).workflows;
  }

  /** One workflow. */
  getWorkflow(name: string): Promise<WorkflowInfo> {
    return this.#json("GET", `/api/workflows/${encodeURIComponent(name)}`);
  }

  /** Runs a workflow and waits for it to end; the handler says how it ended (`status`, `result`, `error`). */
  run<K extends WorkflowName<W>>(workflow: K, input: RunInput<W, K> | undefined, options: StartOptions = {}): Promise<HandlerOf<W, K>> {
    return this.#json("POST", `/api/workflows/${encodeURIComponent(workflow)}/run`, startBody(input as JsonObject | undefined, options), options);
  }

  /** Starts a run; follow it with `streamEvents(handler.id)`. */
  start<K extends WorkflowName<W>>(workflow: K, input: RunInput<W, K> | undefined, options: StartOptions = {}): Promise<HandlerOf<W, K>> {
    return this.#json("POST", `/api/workflows/${encodeURIComponent(workflow)}/start`, startBody(input as JsonObject | undefined, options), options);
  }

  /**
   * A handler's status, result or error, and what it waits for. A typed client's answer is
   * told apart by `workflow`; `K` names the workflow when you know it (the server does not check that it is).
   * @example
   * const info = await client.getHandler(id); // a client of { double: Workflow<{ n: number }, number>, … }
   * if (info.workflow === "double") console.log(info.result); // number | undefined
   */
  getHandler<K extends WorkflowName<W> = WorkflowName<W>>(id: string, options: { signal?: AbortSignal } = {}): Promise<HandlerOf<W, K>> {
    return this.#json("GET", `/api/handlers/${encodeURIComponent(id)}`, undefined, options);
  }

  /** Handlers, newest first. */
  async listHandlers<K extends WorkflowName<W> = WorkflowName<W>>(query: HandlerQuery<K> = {}): Promise<HandlerOf<W, K>[]> {
    const params = new URLSearchParams();
    if (query.workflow !== undefined) params.set("workflow", query.workflow);
    if (query.status !== undefined) params.set("status", query.status.join(","));
    if (query.limit !== undefined) params.set("limit", String(query.limit));
    const qs = params.size > 0 ? `?${params.toString()}` : "";
    return (await this.#json<{ handlers: HandlerOf<W, K>[] }>("GET", `/api/handlers${qs}`)).handlers;
  }

  /**
   * Sends an event into a running handler (`type` is its type name, e.g. `HumanResponseEvent`).
   * Once the run takes it, the server records it in the run's events as an `EventReceivedEvent`
   * naming who sent it (an answer to an approval: as an `ApprovalDecision`). Sent again after
   * a network failure with the same `Idempotency-Key`: the run takes it once.
   * @example await client.sendEvent(id, "HumanResponseEvent", { response: "yes" });
   */
  sendEvent(id: string, type: string, data?: JsonObject, options?: SendOptions): Promise<void>;
  /**
   * Sends an event of class `E` (a type argument: `typeof Answer`, imported with `import type`)
   * into a running handler: `data` is checked against the class's fields, and `type` against its
   * `static readonly typeName` when it declares one (else it is the class's name). The class
   * itself is never needed at run time, so a browser bundle does not take in the engine.
   * @example
   * import type { ToolApprovalEvent } from "stepflow/events";
   * await client.sendEvent<typeof ToolApprovalEvent>(id, "agent.ToolApprovalEvent", { approvalId, approved: true });
   */
  sendEvent<E extends EventClassType>(id: string, type: EventTypeName<E>, data: EventData<E>, options?: SendOptions): Promise<void>;
  async sendEvent(id: string, type: string, data: unknown = {}, options: SendOptions = {}): Promise<void> {
    await this.#json("POST", `/api/handlers/${encodeURIComponent(id)}/events`, { type, data: data as JsonObject }, options);
  }

  /**
   * Answers a tool approval request (`agent.ToolApprovalRequestEvent`'s `approvalId`).
   * @example await client.approve(id, String(request.data.approvalId), true, "HR signed off.");
   */
  approve(id: string, approvalId: string, approved: boolean, reason?: string, options: SendOptions = {}): Promise<HandlerInfo> {
    return this.#json(
      "POST",
      `/api/handlers/${encodeURIComponent(id)}/approvals`,
      { approvalId, approved, ...(reason !== undefined ? { reason } : {}) },
      options,
    );
  }

  /** Cancels a run; resolves with the handler once it has ended. */
  cancel<K extends WorkflowName<W> = WorkflowName<W>>(id: string, options: SendOptions = {}): Promise<HandlerOf<W, K>> {
    return this.#json("POST", `/api/handlers/${encodeURIComponent(id)}/cancel`, undefined, options);
  }

  /**
   * The points of an ended run that `fork` can start from, oldest first.
   * @example
   * const points = await client.checkpoints(id);
   * console.log(points.map((p) => `#${p.seq} ${p.label}`));
   */
  async checkpoints(id: string): Promise<Checkpoint[]> {
    return (await this.#json<{ checkpoints: Checkpoint[] }>("GET", `/api/handlers/${encodeURIComponent(id)}/checkpoints`)).checkpoints;
  }

  /**
   * Starts a new run from a checkpoint of an ended run (`at`: its `seq`; default the last): a
   * new id, `forkedFrom` naming where it came from; its steps work again and approvals are asked again.
   * @example
   * const fork = await client.fork(id, { at: 0 });
   * console.log(fork.forkedFrom); // { handlerId: id, seq: 0, label: "start" }
   */
  fork<K extends WorkflowName<W> = WorkflowName<W>>(id: string, options: { at?: number } & SendOptions = {}): Promise<HandlerOf<W, K>> {
    return this.#json("POST", `/api/handlers/${encodeURIComponent(id)}/fork`, options.at !== undefined ? { at: options.at } : {}, options);
  }

  /** The run's saved context (`ctx.toJSON()`): live for a running handler. */
  getContext(id: string): Promise<JsonObject> {
    return this.#json("GET", `/api/handlers/${encodeURIComponent(id)}/context`);
  }

  /**
   * The handler's events after `after` (default: from the first), following the run until it
   * ends. A dropped connection is picked up after the last event received, so none is missed or
   * repeated: the server is asked from that event on, and it must still be the one received (its
   * seq, type and time), else the log was rewritten (a server that crashed before saving it, and
   * a run gone on from its last save) and the stream fails with code `events_lost`; so it does
   * when the server answers 409 `events_lost` (`after` is beyond the events the run has now).
   * Leaving the loop closes the connection; the run goes on.
   */
  async *streamEvents(id: string, options: { after?: number; signal?: AbortSignal } = {}): AsyncGenerator<StreamedEvent, HandlerStatus | undefined> {
    let after = options.after ?? 0;
    let failures = 0;
    let last: StreamedEvent | undefined;
    for (;;) {
      // Asked again from the last event received, which must come first and the same.
      let check = last;
      let response: Response;
      try {
        response = await this.#request(
          "GET",
          `/api/handlers/${encodeURIComponent(id)}/events?after=${check ? check.seq - 1 : after}`,
          undefined,
          options.signal,
          "application/x-ndjson",
        );
      } catch (error) {
        // An HTTP error (404, 401…) is an answer; only an unreachable server (or a gateway saying so) is tried again.
        const unreachable = error instanceof WorkflowClientError && RETRIED.has(error.status);
        if (options.signal?.aborted || !unreachable || ++failures > this.#reconnects) throw error;
        await pause(failures, options.signal);
        continue;
      }
      const body = response.body;
      if (!body) throw new WorkflowClientError("The server sent an event stream with no body.", response.status, "no_body");
      // Something else answered (a proxy's or a web server's page): reading it again would not make it an event stream.
      const type = response.headers.get("Content-Type") ?? "";
      if (!/^application\/x-ndjson\b/i.test(type)) throw await notOurs(response, `GET events of handler ${id}`, "an event stream (application/x-ndjson)");
      const reader = body.pipeThrough(new TextDecoderStream()).getReader();
      const lines = ndjsonLines(
        this.#maxLineChars,
        (max) =>
          new WorkflowClientError(
            `An event of handler ${id} after event ${after} is longer than ${max} characters (maxLineChars); raise maxLineChars of the WorkflowClient to read it.`,
            0,
            "line_too_long",
          ),
      );
      try {
        for (;;) {
          const { value, done } = await readWithin(reader, this.#idleMs);
          if (done) break;
          for (const text of lines(value)) {
            const line = text.trim();
            if (!line) continue; // a heartbeat
            let item: StreamedEvent | StreamEnd;
            try {
              item = JSON.parse(line) as StreamedEvent | StreamEnd;
            } catch (error) {
              throw new WorkflowClientError(
                `The event stream of handler ${id} after event ${after} holds a line that is not JSON: ${JSON.stringify(line.slice(0, 200))}.`,
                response.status,
                "not_json",
                { cause: error },
              );
            }
            if (check) {
              const seen = check;
              check = undefined;
              if (!("end" in item) && item.seq === seen.seq && item.type === seen.type && item.at === seen.at) continue;
              throw eventsLost(id, seen, item);
            }
            if ("end" in item) return item.status;
            after = item.seq;
            failures = 0;
            last = item;
            yield item;
          }
        }
      } catch (error) {
        if (options.signal?.aborted || (error instanceof WorkflowClientError && ["line_too_long", "not_json", "events_lost"].includes(error.code))) throw error;
        if (++failures > this.#reconnects) {
          if (error instanceof IdleStreamError)
            throw new WorkflowClientError(
              `The event stream of handler ${id} sent nothing for ${(this.#idleMs ?? 0) / 1000} s (idleTimeout)${failures > 1 ? `, ${failures} times in a row` : ""}: the server or the network in between stopped answering (the server sends a heartbeat every 15 s). Raise idleTimeout if a proxy holds the stream back.`,
              0,
              "idle_timeout",
              { cause: error },
            );
          throw new WorkflowClientError(`The event stream of handler ${id} kept dropping: ${describe(error)}`, 0, "network", { cause: error });
        }
        await pause(failures, options.signal);
        continue;
      } finally {
        reader.cancel().catch(() => {});
      }
      // The stream ended without its end line: the server stopped. Ask again (a restarted server continues the run).
      if (++failures > this.#reconnects) throw new WorkflowClientError(`The event stream of handler ${id} ended before the run did.`, 0, "network");
      await pause(failures, options.signal);
    }
  }

  /**
   * Waits for the handler to end (following its events) and returns it; `signal` aborts every
   * request it makes. `K`, as for `getHandler`, names the workflow when you know it.
   * @example
   * const started = await client.start("double", { n: 21 });
   * const done = await client.wait<"double">(started.id);
   * console.log(done.result); // 42, typed number | undefined
   */
  async wait<K extends WorkflowName<W> = WorkflowName<W>>(id: string, options: { signal?: AbortSignal } = {}): Promise<HandlerOf<W, K>> {
    const current = await this.getHandler<K>(id, options);
    if (FINISHED.has(current.status)) return current;
    for await (const _ of this.streamEvents(id, { after: current.eventCount, ...(options.signal ? { signal: options.signal } : {}) })) {
      // only the end matters
    }
    return this.getHandler<K>(id, options);
  }

  /**
   * A call's JSON answer. A network failure or a gateway's 502/503/504 is tried again (after
   * 0.1 s, 0.2 s… as a stream reconnects); a POST carries one `Idempotency-Key` over its tries,
   * so that the server does it once.
   */
  async #json<T>(
    method: string,
    path: string,
    body?: JsonValue,
    options: { signal?: AbortSignal | undefined; idempotencyKey?: string | undefined } = {},
  ): Promise<T> {
    const { signal } = options;
    const key = method === "POST" ? (options.idempotencyKey ?? newKey()) : undefined;
    for (let failures = 0; ;) {
      try {
        const response = await this.#request(method, path, body, signal, "application/json", key);
        let text: string;
        try {
          text = await response.text();
        } catch (error) {
          if (signal?.aborted) throw error;
          throw new WorkflowClientError(`The answer to ${method} ${path} broke off: ${describe(error)}`, 0, "network", { cause: error });
        }
        try {
          return JSON.parse(text) as T;
        } catch {
          throw notOurs(response, `${method} ${path}`, "JSON", text);
        }
      } catch (error) {
        // Another server of a shared store is still answering this key: its answer comes once it has one (or its claim lapses, if it died).
        if (error instanceof WorkflowClientError && error.code === "idempotency_key_in_use" && !signal?.aborted) {
          await pause(0, signal, IN_USE_WAIT_MS);
          continue;
        }
        if (signal?.aborted || !(error instanceof WorkflowClientError && RETRIED.has(error.status)) || ++failures > this.#reconnects) throw error;
        await pause(failures, signal);
      }
    }
  }

  async #request(method: string, path: string, body: JsonValue | undefined, signal: AbortSignal | undefined, accept: string, key?: string): Promise<Response> {
    const headers: Record<string, string> = { Accept: accept };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (key !== undefined) headers["Idempotency-Key"] = key;
    if (this.#token !== undefined) headers.Authorization = `Bearer ${this.#token}`;
    let response: Response;
    try {
      response = await this.#fetch(`${this.#base}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new WorkflowClientError(`Could not reach the stepflow server at ${this.#base || "this origin"}: ${describe(error)}`, 0, "network", {
        cause: error,
      });
    }
    if (response.ok) return response;
    let text = "";
    let parsed: Partial<ErrorBody> | null = null;
    try {
      text = await response.text();
      parsed = JSON.parse(text) as Partial<ErrorBody> | null;
    } catch {
      // Not our JSON (a proxy's or a web server's page), or cut off: said below.
    }
    const error = parsed?.error;
    if (typeof error?.message === "string" && typeof error.code === "string") throw new WorkflowClientError(error.message, response.status, error.code);
    throw notOurs(response, `${method} ${path}`, "a stepflow error", text);
  }
}

const DEFAULT_IDLE_SECONDS = 60;
/** Statuses a call is sent again after: no answer (0), and a gateway's while the server is away or restarting. */
const RETRIED: ReadonlySet<number> = new Set([0, 502, 503, 504]);
/** Milliseconds between the tries of a POST whose key another server is answering (the server's `Retry-After`). */
const IN_USE_WAIT_MS = 1000;
const DEFAULT_MAX_LINE_CHARS = 16 * 1024 * 1024;
const MAX_TIMER_SECONDS = 2_147_483; // setTimeout's limit, 2^31 - 1 ms

/** Nothing came on an event stream for the idle timeout. */
class IdleStreamError extends Error {
  override name = "IdleStreamError";
}

/** The next chunk of `reader`, or an `IdleStreamError` when none comes within `ms` (`null`: wait for ever). */
function readWithin<T>(reader: ReadableStreamDefaultReader<T>, ms: number | null): ReturnType<ReadableStreamDefaultReader<T>["read"]> {
  if (ms === null) return reader.read();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new IdleStreamError(`no data for ${ms} ms`)), ms);
  });
  return Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
}

/** A new `Idempotency-Key`: a random UUID (`crypto.randomUUID` is missing on a page served over plain http). */
function newKey(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === "function") return c.randomUUID();
  const bytes = c.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function startBody(input: JsonObject | undefined, options: StartOptions): JsonObject {
  return {
    ...(input !== undefined ? { input } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.continueFrom !== undefined ? { continueFrom: options.continueFrom } : {}),
  };
}

/** Waits before reconnect number `attempt`: 0.1 s, 0.2 s, 0.4 s… up to 2 s, or until `signal` aborts. */
function pause(attempt: number, signal: AbortSignal | undefined, ms = Math.min(2000, 100 * 2 ** (attempt - 1))): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * The error for an answer that is not the stepflow server's (a proxy's 502 page, a web server's
 * index.html): its status, its type and how it begins, so that the caller sees who answered.
 * `text`: the body, when already read (else read here, up to what arrives).
 */
function notOurs(response: Response, call: string, expected: string, text: string): WorkflowClientError;
function notOurs(response: Response, call: string, expected: string): Promise<WorkflowClientError>;
function notOurs(response: Response, call: string, expected: string, text?: string): WorkflowClientError | Promise<WorkflowClientError> {
  if (text === undefined)
    return response.text().then(
      (read) => notOurs(response, call, expected, read),
      () => notOurs(response, call, expected, ""),
    );
  const type = response.headers.get("Content-Type") ?? "no Content-Type";
  const begins = text.replace(/\s+/g, " ").trim().slice(0, 200);
  const message =
    `${call} got HTTP ${response.status} with ${type}, not ${expected}: something other than the stepflow server answered ` +
    `(a proxy, or a baseUrl that is not the server's)${begins ? `. It begins: ${JSON.stringify(begins)}` : ""}.`;
  return new WorkflowClientError(message, response.status, response.ok ? "not_json" : "http_error");
}

/** The error for a log that no longer has the event `seen` where it was: `instead` is what is there now. */
function eventsLost(id: string, seen: StreamedEvent, instead: StreamedEvent | StreamEnd): WorkflowClientError {
  const now = "end" in instead ? `the log ends before it (${instead.status})` : `event ${instead.seq} is now ${instead.type} at ${instead.at}`;
  return new WorkflowClientError(
    `The events of handler ${id} are no longer the ones read: event ${seen.seq} was ${seen.type} at ${seen.at}, ${now}. ` +
      "The server running it stopped before it saved its last events, and the run went on from its last save. " +
      "Read its events again from the start to see what it did.",
    0,
    "events_lost",
  );
}

function describe(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return `${error instanceof Error ? error.message : String(error)}${cause}`;
}
