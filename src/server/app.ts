/**
 * The HTTP API as a Hono app: routes, JSON errors, body limit, bearer auth, CORS and the
 * static web page. Runs are the registry's business; this file only speaks HTTP.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { serveStatic } from "@hono/node-server/serve-static";
import type { z } from "zod";
import { approvalAnswerOf } from "../core/internal.ts";
import type { ErrorBody, JsonObject } from "../client/types.ts";
import { approvalBody, eventsQuery, forkBody, listQuery, sendEventBody, startBody, startBodyOf } from "./api-schemas.ts";
import { ndjsonResponse, sseResponse } from "./event-streams.ts";
import { ServerRequestError } from "./refusals.ts";
import type { HandlerRegistry } from "./handler-registry.ts";
import type { Requester } from "./event-intake.ts";
import type { ServedHandler } from "./served-handler.ts";
import { openApiDocument } from "./openapi.ts";
import { parseJsonText, readBodyText } from "./request-body.ts";
import type { ServedWorkflow } from "./served-workflow.ts";
import { describeWorkflow } from "./workflow-info.ts";
import { hostCheck } from "./host-check.ts";
import { originCheck } from "./origin-check.ts";
import { IDEMPOTENCY_KEY_HEADER, IdempotencyKeys, REPLAYED_HEADER, keyedRequest } from "./idempotency.ts";
import type { HostRule } from "./host-check.ts";
import { KeyInUseError } from "./stored-idempotency.ts";
import type { KeyClaim, StoredIdempotencyKeys } from "./stored-idempotency.ts";

/** The HTTP settings of {@link createApp}. */
export interface AppOptions {
  readonly token?: string | undefined;
  readonly cors?: { readonly origin: string | readonly string[] } | undefined;
  readonly bodyLimit: number;
  readonly webRoot?: string | undefined;
  /** The `Host`s answered (see host-check.ts); `undefined`: any. */
  readonly hosts?: HostRule | undefined;
  /** Milliseconds between the heartbeats of a quiet event stream. */
  readonly heartbeatMs: number;
  /** Who sent a request, as the server vouches for it (recorded with approval decisions and the events sent in). */
  readonly principal: (request: Request) => string;
  /** Where keyed POSTs' answers are kept for the other servers of a shared store; `undefined`: this server's memory only. */
  readonly storedKeys?: StoredIdempotencyKeys | undefined;
}

/** The header a client names itself in (recorded with its approval decisions and the events it sends in, as its own word). */
export const CLIENT_LABEL_HEADER = "X-Stepflow-Client";

const errorBody = (code: string, message: string): ErrorBody => ({ error: { code, message } });

/** Builds the app over a registry of handlers and the registered workflows. */
export function createApp(registry: HandlerRegistry, workflows: ReadonlyMap<string, ServedWorkflow>, options: AppOptions): Hono {
  const app = new Hono();

  app.onError((error, c) => {
    if (error instanceof KeyInUseError) c.header("Retry-After", String(error.retryAfter));
    if (error instanceof ServerRequestError) return c.json(errorBody(error.code, error.message), error.status);
    if (error instanceof HTTPException) return error.getResponse();
    return c.json(errorBody("internal", `The server failed: ${error instanceof Error ? error.message : String(error)}`), 500);
  });
  app.notFound((c) => c.json(errorBody("not_found", `No route ${c.req.method} ${c.req.path}. The API is described at /api/openapi.json.`), 404));

  // First: a request for a name the server does not answer learns nothing, not even a 404.
  if (options.hosts) app.use("*", hostCheck(options.hosts));
  if (options.cors) {
    const origin = options.cors.origin;
    app.use(
      "/api/*",
      cors({
        origin: typeof origin === "string" ? origin : [...origin],
        allowHeaders: ["Authorization", "Content-Type", "Last-Event-ID", CLIENT_LABEL_HEADER, IDEMPOTENCY_KEY_HEADER],
        exposeHeaders: ["Content-Type", REPLAYED_HEADER],
      }),
    );
  }
  if (options.token) {
    const auth = bearerAuth({
      token: options.token,
      noAuthenticationHeader: { message: errorBody("unauthorized", "This server needs a bearer token: send Authorization: Bearer <token>.") },
      invalidAuthenticationHeader: { message: errorBody("bad_authorization", "The Authorization header must be: Bearer <token>.") },
      invalidToken: { message: errorBody("unauthorized", "The bearer token is not this server's.") },
    });
    app.use("/api/*", async (c, next) => {
      // Health and the API's description are public, and so is a CORS preflight.
      if (c.req.path === "/api/health" || c.req.path === "/api/openapi.json" || c.req.method === "OPTIONS") return next();
      return auth(c, next);
    });
  } else {
    // Without a token the browser's own requests are all a page needs: one of another site must not change anything.
    const origin = options.cors?.origin;
    app.use("/api/*", originCheck({ corsOrigins: typeof origin === "string" ? [origin] : origin, allowedHosts: options.hosts?.allowedHosts }));
  }

  // A POST sent again with its Idempotency-Key gets the first answer, not a second run or event:
  // from this server's memory, else from the store it shares with other servers.
  const keys = new IdempotencyKeys();
  const stored = options.storedKeys;
  app.use("/api/*", async (c, next) => {
    const key = c.req.header(IDEMPOTENCY_KEY_HEADER);
    if (c.req.method !== "POST" || key === undefined) return next();
    const body = await readBodyText(c, options.bodyLimit);
    // Checked and hashed once, for this server's memory and the shared store alike.
    const request = keyedRequest(options.principal(c.req.raw), `${c.req.method} ${c.req.path}`, key, body);
    const respond = async () => {
      await next();
      return { status: c.res.status, body: await c.res.clone().text() };
    };
    const answer = await keys.answer(
      request,
      stored
        ? () =>
            stored.answer(request, (claim) => {
              claims.set(c.req.raw, claim);
              return respond();
            })
        : respond,
    );
    if (!answer.replayed) return;
    return c.body(answer.body, answer.status as 200, { "Content-Type": "application/json", [REPLAYED_HEADER]: "true" });
  });

  // The counts let a monitor (and the load benchmark) see runs in progress and readers left behind.
  app.get("/api/health", (c) => c.json({ status: "ok", ...registry.stats() }));
  app.get("/api/openapi.json", (c) => c.json(openApiDocument(workflows)));

  app.get("/api/workflows", (c) => c.json({ workflows: [...workflows].map(([name, wf]) => describeWorkflow(name, wf)) }));
  app.get("/api/workflows/:name", (c) => c.json(describeWorkflow(c.req.param("name"), registry.workflow(c.req.param("name")))));

  app.post("/api/workflows/:name/start", async (c) => {
    const body = await readBody(c, startBody, options.bodyLimit, startBodyOf);
    const served = await registry.start(c.req.param("name"), body.input as JsonObject | undefined, startOptions(body));
    return c.json(served.info(), 202);
  });
  app.post("/api/workflows/:name/run", async (c) => {
    const body = await readBody(c, startBody, options.bodyLimit, startBodyOf);
    const claim = claims.get(c.req.raw);
    const resumed = claim?.handlerId !== undefined ? await resume(registry, claim, claim.handlerId, c.req.header(IDEMPOTENCY_KEY_HEADER) ?? "") : undefined;
    const served = resumed ?? (await registry.start(c.req.param("name"), body.input as JsonObject | undefined, startOptions(body)));
    // Known to the other servers while the run runs: a retry after this server dies waits on it.
    // A run that ends at once (before the next turn of the event loop) is not written: its answer is.
    if (claim && !resumed)
      setImmediate(() => {
        if (!served.finished) void claim.noteHandler(served.state.id);
      });
    await registry.settled(served);
    if (!served.finished) {
      // This server stopped (or lost the run to another) before the run ended. A 200 would be
      // taken for the run's end (the route answers when the run ends), and an answer kept for a
      // key would say "waiting" for a day: the claim is let go with its run instead, so that the
      // client's retry waits on that run wherever it goes on.
      claim?.keep();
      const id = served.state.id;
      throw new ServerRequestError(
        503,
        "closing",
        claim
          ? `The server stopped waiting before handler ${id} ended. Send the request again with the same Idempotency-Key: it waits on that run, on the server that continues it.`
          : `The server stopped waiting before handler ${id} ended; the run is kept in the store and goes on where the store is served. Follow it with GET /api/handlers/${id}, or send the run with an Idempotency-Key to have a retry wait on it.`,
      );
    }
    // A run answered is a run the store has.
    registry.checkSavedEnd(served);
    return c.json(served.info(), 200);
  });

  app.get("/api/handlers", async (c) => {
    const query = parse(listQuery, c.req.query(), "query");
    return c.json({ handlers: await registry.list({ ...query, ...(query.status ? { status: query.status } : {}) } as Parameters<HandlerRegistry["list"]>[0]) });
  });
  app.get("/api/handlers/:id", async (c) => c.json((await registry.get(c.req.param("id"))).info()));
  app.get("/api/handlers/:id/context", async (c) => {
    const served = await registry.get(c.req.param("id"));
    const context = await registry.context(served);
    if (!context)
      throw new ServerRequestError(404, "no_context", `Handler ${served.state.id} has no saved context (a value in its state could not be saved as JSON).`);
    return c.json(context);
  });
  app.get("/api/handlers/:id/events", async (c) => {
    const served = await registry.get(c.req.param("id"), true);
    const query = parse(eventsQuery, c.req.query(), "query");
    const lastEventId = c.req.header("Last-Event-ID");
    if (lastEventId !== undefined && !/^\d+$/.test(lastEventId.trim()))
      throw new ServerRequestError(
        400,
        "invalid_last_event_id",
        `Last-Event-ID must be the seq of the last event received (a whole number); got ${JSON.stringify(lastEventId)}.`,
      );
    const after = query.after ?? (lastEventId !== undefined ? Number(lastEventId) : 0);
    // A reader that has seen more than the run has now read a server that stopped before saving
    // them (the run went on from its last save): following would only give it heartbeats. A run
    // held by another server is not judged: this server's read of the store may lag behind it.
    if (served.heldBy === undefined && after > served.visibleCount)
      throw new ServerRequestError(
        409,
        "events_lost",
        `Handler ${served.state.id} has ${served.visibleCount} events, fewer than the ${after} read: the server that ran it stopped before it saved its last events, and the run went on from its last save. Read its events again from the start (after=0).`,
      );
    const accept = c.req.header("Accept") ?? "";
    const format = query.format ?? (accept.includes("application/x-ndjson") ? "ndjson" : accept.includes("application/json") ? "json" : "sse");
    if (format === "json") return c.json({ events: (await registry.events(served)).slice(after, served.visibleCount) });
    if (format === "ndjson") return ndjsonResponse(c, registry, served, after, options.heartbeatMs);
    // An EventSource reconnecting after the end gets 204, which tells it to stop.
    if (served.endShown && after >= served.visibleCount && lastEventId !== undefined) return c.body(null, 204);
    return sseResponse(c, registry, served, after, options.heartbeatMs);
  });
  // What a client sent is checked before a stored run whose server has gone is taken over (`claim`): a request refused changes nothing.
  app.post("/api/handlers/:id/events", async (c) => {
    const found = await registry.peek(c.req.param("id"));
    const body = await readBody(c, sendEventBody, options.bodyLimit);
    const event = registry.decode(found, body.type, body.data as JsonObject);
    // An answer to an approval is taken only for a question the run has asked (and recorded).
    const approvalId = (event as { approvalId?: unknown }).approvalId;
    if (typeof approvalId === "string") checkAsked(found, approvalId);
    const served = await registry.claim(found);
    // Asked again of the run as taken over: another server may have had the question answered meanwhile.
    if (typeof approvalId === "string") checkAsked(served, approvalId);
    await registry.send(served, event, requester(c, options));
    return c.json({ accepted: true }, 202);
  });
  app.post("/api/handlers/:id/approvals", async (c) => {
    const found = await registry.peek(c.req.param("id"));
    const body = await readBody(c, approvalBody, options.bodyLimit);
    checkAsked(found, body.approvalId);
    const Answer = approvalAnswerOf(registry.workflow(found.state.workflow).workflow);
    if (!Answer)
      throw new ServerRequestError(
        404,
        "approval_not_found",
        `${found.state.workflow} asks for no approvals; answer its questions with POST /api/handlers/:id/events.`,
      );
    const served = await registry.claim(found);
    checkAsked(served, body.approvalId);
    await registry.send(
      served,
      new Answer({ approvalId: body.approvalId, approved: body.approved, ...(body.reason !== undefined ? { reason: body.reason } : {}) }),
      requester(c, options),
    );
    return c.json(served.info(), 202);
  });
  app.get("/api/handlers/:id/checkpoints", async (c) => {
    const served = await registry.get(c.req.param("id"));
    return c.json({ checkpoints: await registry.checkpoints(served) });
  });
  app.post("/api/handlers/:id/fork", async (c) => {
    // Only an ended run is forked: one whose server has gone is not taken over to be refused.
    const served = await registry.peek(c.req.param("id"));
    const body = await readBody(c, forkBody, options.bodyLimit);
    const fork = await registry.fork(served, body.at);
    return c.json(fork.info(), 202);
  });
  app.post("/api/handlers/:id/cancel", async (c) => {
    const served = await registry.get(c.req.param("id"));
    await registry.cancel(served);
    return c.json(served.info());
  });

  if (options.webRoot) {
    // The page is built with .br and .gz copies of each file: a browser that accepts them gets those.
    const files = serveStatic({ root: options.webRoot, precompressed: true });
    // Any other path is the page's own (a link to a run): it gets index.html, which routes it.
    const page = serveStatic({ root: options.webRoot, path: "index.html", precompressed: true });
    app.get("*", async (c, next) => {
      if (c.req.path === "/api" || c.req.path.startsWith("/api/")) return next();
      // The page loads nothing from elsewhere; Mermaid styles its drawings inline.
      c.header("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
      const none = async () => {};
      return (await files(c, none)) ?? (await page(c, none)) ?? next();
    });
  }
  return app;
}

/** The claims of the keyed requests being answered with a shared store, for the routes that record or resume a run in them. */
const claims = new WeakMap<Request, KeyClaim>();

/**
 * The run a run-and-wait sent before started, on a server that died before it answered: taken
 * over here (as any request for it would), to be waited on instead of starting another.
 * `undefined` when that server died before saving it: that run is gone with it, and a new one
 * starts. Still held by a live server: 409, and the claim is let go for a later retry.
 */
async function resume(registry: HandlerRegistry, claim: KeyClaim, handlerId: string, key: string): Promise<ServedHandler | undefined> {
  let served: ServedHandler;
  try {
    served = await registry.get(handlerId);
  } catch (error) {
    if (error instanceof ServerRequestError && error.code === "handler_not_found") return undefined;
    throw error;
  }
  if (served.heldBy === undefined) return served;
  claim.keep();
  throw new KeyInUseError(key, served.heldBy);
}

/** Throws 404 unless `served` waits for the approval `approvalId` (a finished handler: `send` says it has ended). */
function checkAsked(served: ServedHandler, approvalId: string): void {
  if (served.finished || served.state.waitingFor.some((w) => w.data.approvalId === approvalId)) return;
  const open = served.state.waitingFor.map((w) => w.data.approvalId).filter((id) => typeof id === "string");
  throw new ServerRequestError(
    404,
    "approval_not_found",
    `Handler ${served.state.id} is not waiting for approval ${JSON.stringify(approvalId)}. ${open.length > 0 ? `It waits for: ${open.join(", ")}.` : "It waits for no approval."}`,
  );
}

/** Who sent the request: the principal the server vouches for, and the label the client gave itself (its word only). */
function requester(c: Context, options: AppOptions): Requester {
  // A label is shown to people: one line of printable text, bounded.
  const label = c.req
    .header(CLIENT_LABEL_HEADER)
    ?.replace(/[\p{Cc}\p{Cf}\s]+/gu, " ")
    .trim()
    .slice(0, 100);
  return { by: options.principal(c.req.raw), ...(label ? { label } : {}) };
}

function startOptions(body: z.output<typeof startBody>): { timeout?: number | null; from?: string; context?: JsonObject } {
  return {
    ...(body.timeout !== undefined ? { timeout: body.timeout } : {}),
    ...(body.continueFrom !== undefined ? { from: body.continueFrom } : {}),
    ...(body.context !== undefined ? { context: body.context as JsonObject } : {}),
  };
}

/**
 * Reads a JSON body and checks it: 413 when larger than `limit` bytes, 415 when it is not JSON,
 * 400 naming each problem. `fast`: a check by hand that gives the body when it is plainly valid
 * (else `schema` checks it, and says what is wrong).
 */
async function readBody<S extends z.ZodType>(c: Context, schema: S, limit: number, fast?: (value: unknown) => z.output<S> | undefined): Promise<z.output<S>> {
  const type = c.req.header("Content-Type") ?? "";
  if (!/^application\/json\b/i.test(type))
    throw new ServerRequestError(415, "not_json", `Send the body as JSON with Content-Type: application/json (got ${type ? JSON.stringify(type) : "none"}).`);
  const value = parseJsonText(await readBodyText(c, limit));
  return fast?.(value) ?? parse(schema, value, "body");
}

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${[what, ...i.path.map(String)].join(".")}: ${i.message}`).join("; ");
  throw new ServerRequestError(400, "invalid_request", `The request is not valid: ${issues}.`);
}
