/** The OpenAPI 3.1 document of the HTTP API, built from the same zod schemas that check requests. */
import { z } from "zod";
import type { JsonObject } from "../client/types.ts";
import { approvalBody, forkBody, sendEventBody, startBody, statusValues } from "./api-schemas.ts";
import type { ServedWorkflow } from "./served-workflow.ts";
import { jsonSchema } from "./json-schema.ts";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ "application/json": { schema } });
const ok = (description: string, schema: object) => ({ description, content: json(schema) });
const errors = {
  "400": ok("The request is not valid (the message says what to change).", ref("Error")),
  "401": ok("A bearer token is needed, or it is not this server's.", ref("Error")),
  "404": ok("No such workflow or handler.", ref("Error")),
};
const idParam = { name: "id", in: "path", required: true, schema: { type: "string" }, description: "The handler id." };
const nameParam = { name: "name", in: "path", required: true, schema: { type: "string" }, description: "The workflow's name." };
const body = (schema: z.ZodType) => ({ required: true, content: json(jsonSchema(schema)) });

const streamedEvent = z.object({
  seq: z.number().int().describe("1 for the first event of the run; the SSE id."),
  type: z.string().describe("The event's type name."),
  data: z.record(z.string(), z.json()).describe("The event's fields."),
  at: z.string().describe("When the server saw it (ISO 8601)."),
});
const handlerInfo = z.object({
  id: z.string(),
  workflow: z.string(),
  runId: z.string(),
  status: z.enum(statusValues),
  input: z.record(z.string(), z.json()),
  createdAt: z.string(),
  updatedAt: z.string(),
  eventCount: z.number().int(),
  result: z.json().optional(),
  error: z.object({ name: z.string(), message: z.string(), stack: z.string().optional().describe("A failed run's stack: plain text.") }).optional(),
  waitingFor: z.array(streamedEvent).describe("InputRequiredEvents not answered yet."),
  forkedFrom: z.object({ handlerId: z.string(), seq: z.number().int(), label: z.string() }).optional().describe("The run and checkpoint a fork started from."),
  notSaved: z.string().optional().describe("The store's error when the run ended but its end could not be saved: only this server shows it, until it stops."),
});
const checkpoint = z.object({
  seq: z.number().int().describe("How many events the run had written (0: before its first step)."),
  at: z.string(),
  label: z.string().describe("What had just happened: start, after step <name>, asked <event type>."),
});
/** Taken by every POST: the same request sent again with its key gets the first answer. */
const idempotencyKey = {
  name: "Idempotency-Key",
  in: "header",
  schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
  description:
    "A key of the client's for this request (a UUID): sent again with the same key and body, it is not done again; the first 2xx answer comes back with Idempotent-Replayed: true. The same key with another body or route: 422 idempotency_key_reused. Kept 24 h, in the server's store when it has one (SQLite, PostgreSQL): a retry that reaches another server sharing the store gets the same answer. While another server is still answering the first request: 409 idempotency_key_in_use with Retry-After; send it again with the same key.",
};
/** The 409 of a POST whose key another server sharing the store is still answering. */
const KEY_IN_USE =
  "idempotency_key_in_use: another server sharing the store is still answering the first request with this Idempotency-Key; send it again with the same key after Retry-After seconds.";
const keyInUse = { "409": ok(`The request's key is in use (${KEY_IN_USE})`, ref("Error")) };
const errorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** The document for the registered workflows (their input schemas name the run bodies). */
export function openApiDocument(workflows: ReadonlyMap<string, ServedWorkflow>): JsonObject {
  const workflowNames = [...workflows.keys()];
  const document: object = {
    openapi: "3.1.0",
    info: {
      title: "stepflow workflow server",
      version: "1",
      description: "Run stepflow workflows over HTTP: start runs, stream their events (SSE or NDJSON), answer their questions.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { HandlerInfo: jsonSchema(handlerInfo), StreamedEvent: jsonSchema(streamedEvent), Error: jsonSchema(errorSchema) },
    },
    security: [{ bearer: [] }],
    paths: {
      "/api/health": { get: { summary: "Whether the server is up", security: [], responses: { "200": ok("Up.", { type: "object" }) } } },
      "/api/workflows": {
        get: {
          summary: `The workflows (${workflowNames.join(", ")}) with their graph and event types`,
          responses: { "200": ok("The list.", { type: "object" }) },
        },
      },
      "/api/workflows/{name}": {
        get: { summary: "One workflow", parameters: [nameParam], responses: { "200": ok("The workflow.", { type: "object" }), ...errors } },
      },
      "/api/workflows/{name}/run": {
        post: {
          summary: "Run a workflow and wait for it to end",
          parameters: [nameParam, idempotencyKey],
          requestBody: body(startBody),
          responses: {
            "200": ok("The ended handler.", ref("HandlerInfo")),
            "503": ok("The server shut down before the run ended (closing); the message names the handler, which the store keeps.", ref("Error")),
            ...keyInUse,
            ...errors,
          },
        },
      },
      "/api/workflows/{name}/start": {
        post: {
          summary: "Start a run; follow it with /api/handlers/{id}/events",
          parameters: [nameParam, idempotencyKey],
          requestBody: body(startBody),
          responses: { "202": ok("The handler.", ref("HandlerInfo")), ...keyInUse, ...errors },
        },
      },
      "/api/handlers": {
        get: {
          summary: "Handlers, newest first",
          parameters: [
            { name: "workflow", in: "query", schema: { type: "string" } },
            { name: "status", in: "query", schema: { type: "string" }, description: `Comma-separated: ${statusValues.join(", ")}.` },
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 10000, default: 100 } },
          ],
          responses: { "200": ok("The handlers.", { type: "object", properties: { handlers: { type: "array", items: ref("HandlerInfo") } } }), ...errors },
        },
      },
      "/api/handlers/{id}": {
        get: { summary: "A handler's status and result", parameters: [idParam], responses: { "200": ok("The handler.", ref("HandlerInfo")), ...errors } },
      },
      "/api/handlers/{id}/events": {
        get: {
          summary: "A handler's events, followed until the run ends",
          description:
            'Accept: text/event-stream (default) gives SSE frames `id: seq`, `event: type`, `data: StreamedEvent`, then `event: end` once the end of the run is saved ({"end":true,"status":…}, with notSaved when the store refused it). Accept: application/x-ndjson gives one StreamedEvent per line, then {"end":true,"status":…}. Resume with Last-Event-ID or ?after=seq. ?format=json returns the events so far at once.',
          parameters: [
            idParam,
            { name: "after", in: "query", schema: { type: "integer", minimum: 0 }, description: "Only events with a greater seq." },
            { name: "format", in: "query", schema: { type: "string", enum: ["sse", "ndjson", "json"] } },
            { name: "Last-Event-ID", in: "header", schema: { type: "string" } },
          ],
          responses: {
            "200": {
              description: "The events.",
              content: {
                "text/event-stream": { schema: { type: "string" } },
                "application/x-ndjson": { schema: ref("StreamedEvent") },
                "application/json": { schema: { type: "object", properties: { events: { type: "array", items: ref("StreamedEvent") } } } },
              },
            },
            "204": { description: "An EventSource reconnecting after the end: nothing more." },
            "409": ok(
              "events_lost: after (or Last-Event-ID) is beyond the run's events (a server stopped before saving them); read them again from the start.",
              ref("Error"),
            ),
            ...errors,
          },
        },
        post: {
          summary: "Send an event into a running handler: one its workflow accepts from outside (GET /api/workflows/{name} lists them)",
          parameters: [idParam, idempotencyKey],
          requestBody: body(sendEventBody),
          responses: {
            "202": ok("Sent, and saved: a restart or another server taking the run over has it.", { type: "object" }),
            "403": ok("The workflow does not accept this event type from outside a run.", ref("Error")),
            "409": ok(
              `The handler has ended, or another server runs it; or the event is an approval answer that more than one open question of the run would take (ambiguous_approval: nothing taken); or ${KEY_IN_USE}`,
              ref("Error"),
            ),
            "429": ok(
              "The run holds as many events sent in as it may, by count (too_many_pending_events: maxPendingEvents) or by bytes of JSON (too_many_pending_event_bytes: maxPendingEventBytes), and would not take this one now; nothing was done with it.",
              ref("Error"),
            ),
            "500": ok("The run took the event but the store did not save it (not_saved).", ref("Error")),
            ...errors,
          },
        },
      },
      "/api/handlers/{id}/approvals": {
        post: {
          summary: "Answer an approval request the run waits for (sends the workflow's approval answer, e.g. agent.ToolApprovalEvent)",
          parameters: [idParam, idempotencyKey],
          requestBody: body(approvalBody),
          responses: {
            "202": ok("Sent, and saved: a restart or another server taking the run over has it.", ref("HandlerInfo")),
            "409": ok(
              `The handler has ended, or another server runs it; or more than one open question of the run has this approvalId (ambiguous_approval: nothing taken); or ${KEY_IN_USE}`,
              ref("Error"),
            ),
            "500": ok("The run took the answer but the store did not save it (not_saved).", ref("Error")),
            ...errors,
          },
        },
      },
      "/api/handlers/{id}/checkpoints": {
        get: {
          summary: "The points of the run a fork can start from, oldest first",
          parameters: [idParam],
          responses: {
            "200": ok("The checkpoints.", { type: "object", properties: { checkpoints: { type: "array", items: jsonSchema(checkpoint) } } }),
            ...errors,
          },
        },
      },
      "/api/handlers/{id}/fork": {
        post: {
          summary: "Start a new run from a checkpoint of an ended run (steps work again, approvals are asked again)",
          parameters: [idParam, idempotencyKey],
          requestBody: body(forkBody),
          responses: {
            "202": ok("The new run, with forkedFrom.", ref("HandlerInfo")),
            "409": ok(`The run has not ended, or the checkpoint cannot be restored; or ${KEY_IN_USE}`, ref("Error")),
            ...errors,
          },
        },
      },
      "/api/handlers/{id}/cancel": {
        post: {
          summary: "Cancel a run",
          parameters: [idParam, idempotencyKey],
          responses: { "200": ok("The cancelled handler.", ref("HandlerInfo")), ...keyInUse, ...errors },
        },
      },
      "/api/handlers/{id}/context": {
        get: {
          summary: "The run's saved context (ctx.toJSON())",
          parameters: [idParam],
          responses: { "200": ok("The context.", { type: "object" }), ...errors },
        },
      },
    },
  };
  return document as JsonObject;
}
