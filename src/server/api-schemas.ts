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
      "A saved context (ctx.toJSON(), or GET /api/handlers/:id/context) to run in. One saved mid-run continues that run (then no input) only where the server allows it (acceptMidRunContexts), with its approvals asked again and its events checked against their schemas.",
    ),
  continueFrom: z
    .string()
    .optional()
    .describe("Id of a finished handler of the same workflow: the run continues in its saved context (a conversation's next turn)."),
});

/** A start's body as `startBody` parses it. */
export type StartBody = z.output<typeof startBody>;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Whether `value` is what zod's `z.json()` gives back unchanged: every number finite (a JSON
 * number too large for a double parses as `Infinity`, which zod refuses) and no object with a
 * `__proto__` key (`JSON.parse` makes it a plain key; zod leaves it out). The request body's
 * depth is bounded before it is parsed, so the recursion is too.
 */
function zodKeepsAsIs(value: unknown): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value !== "object" || value === null) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (!zodKeepsAsIs(item)) return false;
    return true;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (key === "__proto__" || !zodKeepsAsIs(record[key])) return false;
  return true;
}

/**
 * `startBody` checked by hand, for the body of every run started (zod's walk and copy of the
 * input cost as much as the rest of reading the request): the body, when `value` (what
 * `JSON.parse` made of a request's text) is plainly valid, else undefined (then zod says what is
 * wrong, or gives the body as it reads it). Keys the schema does not name are left out, as zod
 * leaves them out.
 * @example startBodyOf({ input: { n: 1 } }); // { input: { n: 1 } }
 */
export function startBodyOf(value: unknown): StartBody | undefined {
  if (!isPlainObject(value)) return undefined;
  const { input, timeout, context, continueFrom } = value;
  if (input !== undefined && !(isPlainObject(input) && zodKeepsAsIs(input))) return undefined;
  if (timeout !== undefined && timeout !== null && !(typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0)) return undefined;
  if (context !== undefined && !(isPlainObject(context) && zodKeepsAsIs(context))) return undefined;
  if (continueFrom !== undefined && typeof continueFrom !== "string") return undefined;
  return {
    ...(input !== undefined ? { input: input as StartBody["input"] } : {}),
    ...(timeout !== undefined ? { timeout } : {}),
    ...(context !== undefined ? { context: context as StartBody["context"] } : {}),
    ...(continueFrom !== undefined ? { continueFrom } : {}),
  };
}

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
