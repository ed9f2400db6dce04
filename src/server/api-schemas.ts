/** The request bodies and queries of the HTTP API, as zod schemas: validation and the OpenAPI document share them. */
import { z } from "zod";

const jsonObject = z.record(z.string(), z.json());

/** `POST /api/workflows/:name/run` and `/start`. */
export const startBody = z.object({
  input: jsonObject.optional().describe('The StartEvent\'s fields, e.g. { input: "What is 2 + 2?" } for the agent.'),
  timeout: z.number().positive().nullable().optional().describe("Seconds the run may take (null: no limit); default: the workflow's."),
  context: jsonObject
    .optional()
    .describe(
      "A saved context (ctx.toJSON(), or GET /api/handlers/:id/context) to run in. One saved mid-run continues that run (then no input) only where the server allows it (acceptMidRunContexts), with its approvals asked again.",
    ),
  continueFrom: z
    .string()
    .optional()
    .describe("Id of a finished handler of the same workflow: the run continues in its saved context (a conversation's next turn)."),
});

/** `POST /api/handlers/:id/events`. */
export const sendEventBody = z.object({
  type: z.string().min(1).describe("The event's type name, e.g. agent.ToolApprovalEvent or HumanResponseEvent."),
  data: jsonObject.default({}).describe("The event's fields."),
});

/** `POST /api/handlers/:id/approvals`. */
export const approvalBody = z.object({
  approvalId: z.string().min(1),
  approved: z.boolean(),
  reason: z.string().optional(),
});

/** `POST /api/handlers/:id/fork`. */
export const forkBody = z.object({
  at: z.number().int().min(0).optional().describe("The seq of the checkpoint to start from (GET /api/handlers/:id/checkpoints); default: the last one."),
});

export const statusValues = ["running", "waiting", "succeeded", "failed", "cancelled", "timedOut"] as const;

/** `GET /api/handlers` query. */
export const listQuery = z.object({
  workflow: z.string().optional(),
  status: z
    .string()
    .optional()
    .transform((s) => (s ? s.split(",").map((x) => x.trim()) : undefined))
    .pipe(z.array(z.enum(statusValues)).optional()),
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
});

/** `GET /api/handlers/:id/events` query. */
export const eventsQuery = z.object({
  after: z.coerce.number().int().min(0).optional(),
  format: z.enum(["sse", "ndjson", "json"]).optional(),
});
