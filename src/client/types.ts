/**
 * The JSON a stepflow server sends and receives: shared by the server and `WorkflowClient`,
 * types only, so that a browser bundle of the client carries no server code.
 */

/** A JSON value. @example `const v: JsonValue = { a: [1, "b", null] };` */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. @example `const o: JsonObject = { input: "What is 2 + 2?" };` */
export type JsonObject = { [key: string]: JsonValue };

/**
 * One event of a run as the server records it: in order, numbered from 1 (`seq`, also the SSE
 * `id`), with the event's type name and its fields as JSON.
 * @example
 * const ev: StreamedEvent = { seq: 3, type: "agent.StreamEvent", data: { delta: "Hi" }, at: "2026-01-01T00:00:00.000Z" };
 */
export interface StreamedEvent {
  readonly seq: number;
  readonly type: string;
  readonly data: JsonObject;
  /** When the server saw the event (ISO 8601). */
  readonly at: string;
}

/**
 * Where a run is: `waiting` is a running run with at least one unanswered `InputRequiredEvent`
 * (a tool call waiting for approval, say); the last four are final.
 * @example `const done = (s: HandlerStatus) => !["running", "waiting"].includes(s);`
 */
export type HandlerStatus = "running" | "waiting" | "succeeded" | "failed" | "cancelled" | "timedOut";

/**
 * A run the server holds (live, finished, or restored after a restart). `Result` is the type of
 * its `result` and `Name` of its `workflow`: `JsonValue` and `string` unless a typed client
 * (`WorkflowClient<typeof workflows>`) knows them.
 * @example
 * const info: HandlerInfo = await client.start("agent", { input: "Fire Lawson" });
 * console.log(info.id, info.status);
 */
export interface HandlerInfo<Result = JsonValue, Name extends string = string> {
  readonly id: string;
  readonly workflow: Name;
  readonly runId: string;
  readonly status: HandlerStatus;
  readonly input: JsonObject;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** How many events the run has written so far (the `seq` of the last). */
  readonly eventCount: number;
  /** The run's result (the `StopEvent`'s `result`) as JSON, once it succeeded. */
  readonly result?: Result;
  /** Why it did not succeed; `stack` (a failed run) is the error's stack as the server saw it: text, never markup. */
  readonly error?: { readonly name: string; readonly message: string; readonly stack?: string };
  /** The `InputRequiredEvent`s not answered yet, oldest first. */
  readonly waitingFor: readonly StreamedEvent[];
  /** For a fork: the run it was forked from, and the checkpoint (`seq`, `label`) it started at. */
  readonly forkedFrom?: ForkOrigin;
  /**
   * Present when the run ended but its end could not be saved (a full disk, a database out of
   * reach): the store's error. Only the server that ran it shows the run, until it stops.
   */
  readonly notSaved?: string;
}

/**
 * Where a forked run came from: the handler and the checkpoint of it the fork started at.
 * @example `if (info.forkedFrom) console.log(`forked from ${info.forkedFrom.handlerId} after event #${info.forkedFrom.seq}`);`
 */
export interface ForkOrigin {
  readonly handlerId: string;
  readonly seq: number;
  readonly label: string;
}

/**
 * A point of a run the server saved its context at, which `POST /api/handlers/:id/fork` can
 * start a new run from: `seq` is the number of events the run had written then (0: before its
 * first step), `label` says what had just happened.
 * @example
 * const points: Checkpoint[] = await client.checkpoints(id);
 * console.log(points.map((p) => `#${p.seq} ${p.label}`).join("\n"));
 */
export interface Checkpoint {
  readonly seq: number;
  readonly at: string;
  readonly label: string;
}

/**
 * A human's answer to an approval, as the server records it in the run's events (type
 * `ApprovalDecision`): who (`by`: the authenticated principal, or "local user"; `label`: what
 * the client called itself, unverified), approve or deny, and why.
 * @example
 * if (ev.type === "ApprovalDecision") console.log(`${ev.data.by} ${ev.data.approved ? "approved" : "denied"} at ${ev.at}`);
 */
export interface ApprovalDecision {
  readonly approvalId: string;
  readonly approved: boolean;
  readonly reason?: string;
  readonly by: string;
  readonly label?: string;
  /** The question answered (its `prefix`), when the run had asked it. */
  readonly question?: string;
  /** The tool call the question was about (`{ id, name, input }`), when it named one. */
  readonly toolCall?: JsonValue;
}

/**
 * An event sent into a run from outside (a human's answer, a client's event), as the server
 * records it in the run's events (type `EventReceivedEvent`) once the run has taken it, where
 * it took it: the event's `type` and its fields (`data`), and who sent it (`by`: the
 * authenticated principal, or "local user"; `label`: what the client called itself,
 * unverified). An answer to an approval is recorded as an {@link ApprovalDecision} instead.
 * @example
 * if (ev.type === "EventReceivedEvent") console.log(`${ev.data.by} sent ${ev.data.type}`, ev.data.data);
 */
export interface EventReceived {
  readonly runId: string;
  readonly type: string;
  readonly data: JsonObject;
  /** Left out when the event was not sent through the server's API. */
  readonly by?: string;
  readonly label?: string;
}

/** The role of an event type in a workflow. @example `const r: EventRole = "start";` */
export type EventRole = "start" | "stop" | "internal" | "input-required" | "human-response";

/**
 * A workflow the server runs: its graph (Mermaid text and steps) and its event types.
 * @example
 * const { workflows } = await client.listWorkflows();
 * console.log(workflows[0]?.mermaid);
 */
export interface WorkflowInfo {
  readonly name: string;
  readonly description?: string;
  readonly mermaid: string;
  readonly steps: readonly { readonly name: string; readonly accepts: readonly string[]; readonly emits: readonly string[] }[];
  /** Event types; `schema` (JSON Schema) where the server was given one. */
  readonly events: readonly { readonly type: string; readonly role: EventRole; readonly schema?: JsonObject }[];
  /** JSON Schema of the `input` a run takes, when the server was given one. */
  readonly inputSchema?: JsonObject;
}

/** An error body: every 4xx/5xx answer of the server. @example `{ error: { code: "not_found", message: "No handler …" } }` */
export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

/** The line that ends an NDJSON event stream. @example `{ end: true, status: "succeeded" }` */
export interface StreamEnd {
  readonly end: true;
  readonly status: HandlerStatus;
  /** The store's error, when the run's end could not be saved (see `HandlerInfo.notSaved`). */
  readonly notSaved?: string;
}
