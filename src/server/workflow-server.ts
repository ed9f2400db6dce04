/**
 * `WorkflowServer`: registered workflows over HTTP (Hono on Node's http server), their runs
 * kept in a session store so that a restart loses none.
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import { ConfigurationError, Workflow, eventSchemaOf } from "../core/internal.ts";
import type { AnyWorkflow } from "../core/internal.ts";
import { openSessionStore } from "../sessions/open-store.ts";
import type { SessionStore } from "../sessions/types.ts";
import { createApp } from "./app.ts";
import { isLoopbackHost } from "./host-check.ts";
import { HandlerRegistry } from "./handler-registry.ts";
import { sendableTypes } from "./event-intake.ts";
import { closeHolder, newHolder } from "./handler-lease.ts";
import { CorruptHandlerError, HandlerStore } from "./handler-store.ts";
import type { ServedWorkflow } from "./served-workflow.ts";
import { StoredIdempotencyKeys } from "./stored-idempotency.ts";
import { MemorySessionStore } from "../sessions/memory-store.ts";

/** The store used when none is named: a SQLite file in the working directory. @example `new WorkflowServer({ workflows, store: DEFAULT_SERVER_STORE })` */
export const DEFAULT_SERVER_STORE = "sqlite:.stepflow/server.db";

/** Options of {@link WorkflowServer}. @example `const options: WorkflowServerOptions = { workflows: { agent }, store: "memory:", token: process.env.TOKEN };` */
export interface WorkflowServerOptions {
  /** The workflows by the name clients use: a workflow, or one with a description, an input schema, events clients may send. */
  readonly workflows: Readonly<Record<string, AnyWorkflow | ServedWorkflow>>;
  /** Where handlers are kept: `sqlite:PATH` (default `sqlite:.stepflow/server.db`), `postgres://…`, `memory:`, or a `SessionStore` (not closed by the server). */
  readonly store?: string | SessionStore;
  /** When set, every `/api` route but health and the OpenAPI document needs `Authorization: Bearer <token>`. */
  readonly token?: string;
  /**
   * Host names the server answers besides `localhost`, IP addresses and the host it listens on
   * (a leading dot allows subdomains: `.example.com`; `"*"` any name, for a proxy that checks
   * `Host` itself). Without a token, a request naming any other host gets 421: a web page
   * cannot reach the server by DNS rebinding. With a token, every name is answered unless this
   * list is given (the token, which a browser never sends by itself, is what protects then).
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Lets `listen` take an address other machines reach (`0.0.0.0`, a LAN address) without a
   * token: anyone who reaches it can start runs, read them and approve tool calls. Default
   * `false`: such a `listen` throws.
   */
  readonly allowUnauthenticated?: boolean;
  /**
   * Lets `start` take a context saved in the middle of a run (`{ context }` with `running:
   * true`) and continue that run. Default `false`: such a start gets 403. A client's context
   * is never the run's record: when allowed, its steps' recorded work and early answers are
   * dropped (`untrustedContext`), so its steps work again and every approval is asked again,
   * and each of its events is checked against its type's schema as one sent in is (400
   * `invalid_context` for one that does not fit).
   */
  readonly acceptMidRunContexts?: boolean;
  /** CORS for `/api`: the origins browsers may call it from (`"*"` for any). Default: none (same origin only). */
  readonly cors?: { readonly origin: string | readonly string[] };
  /** Largest request body in bytes (default 1 MiB); larger gets 413. */
  readonly bodyLimit?: number;
  /**
   * How many events sent into a run it may hold that nothing has taken yet (no wait answered by
   * them, no step started on them: kept in memory and in each save of the run): default 100.
   * One more gets 429, and nothing is done with it; an event the run takes at once is always taken.
   */
  readonly maxPendingEvents?: number;
  /**
   * How many bytes of such events a run may hold, each counted as the JSON text a save of the
   * run writes for it (`{"type":…,"data":…}`): default 1 MiB (1048576), the default
   * `bodyLimit`. An event that would take the run past it gets 429, and nothing is done with it;
   * an event the run takes at once is always taken, whatever its size.
   */
  readonly maxPendingEventBytes?: number;
  /** A directory of static files served at `/` (the web page); `false` or left out: none. */
  readonly webRoot?: string | false;
  /** Keeps this server's handlers apart from other servers' in a shared store (letters, digits, ._-). Default: none. */
  readonly namespace?: string;
  /** Called when a handler could not be saved (the run goes on), or a stored one could not be read (a `CorruptHandlerError`: it is skipped); default: one line on stderr. */
  readonly onError?: (error: unknown, handlerId: string) => void;
  /**
   * Who sent a request, as recorded with each approval decision (`ApprovalDecision.by`) and each
   * other event sent into a run (`EventReceivedEvent`'s `by`): for
   * example the user a reverse proxy in front authenticated, from a header it sets (and strips
   * from what clients send). Default: "bearer token holder" when the server has a token, else
   * "local user" (or "unauthenticated client" with `allowUnauthenticated`).
   */
  readonly principal?: (request: Request) => string | undefined;
  /** Seconds between the heartbeats a quiet event stream sends (an SSE comment, an empty NDJSON line), so that proxies and clients know it is alive. Default 15. */
  readonly heartbeat?: number;
}

/**
 * @example
 * import { WorkflowServer } from "stepflow/server";
 * import { OfflineDemoLLM } from "stepflow/llm/offline";
 * import { calculatorTools } from "stepflow/tools/calculator";
 * import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";
 *
 * const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools });
 * const server = new WorkflowServer({ workflows: { agent }, store: "memory:" });
 * const { url } = await server.listen({ port: 8787 });
 * console.log(`listening on ${url}`);
 */
export class WorkflowServer {
  readonly #options: WorkflowServerOptions;
  readonly #workflows: ReadonlyMap<string, ServedWorkflow>;
  #state: { store: HandlerStore; ownStore: boolean; registry: HandlerRegistry; app: Hono; keys: StoredIdempotencyKeys | undefined } | undefined;
  #opening: Promise<void> | undefined;
  #http: Server | undefined;
  #holder: string | undefined;
  #boundHost: string | undefined;

  constructor(options: WorkflowServerOptions) {
    this.#options = options;
    this.#workflows = checkWorkflows(options.workflows);
    const limit = options.bodyLimit;
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0))
      throw new ConfigurationError(`bodyLimit is the largest request body in bytes, a whole number > 0; got ${String(limit)}.`, "bodyLimit", limit);
    const pending = options.maxPendingEvents;
    if (pending !== undefined && !(Number.isSafeInteger(pending) && pending > 0))
      throw new ConfigurationError(
        `maxPendingEvents is how many events sent into a run it may hold untaken, a whole number > 0 (the default is 100); got ${String(pending)}.`,
        "maxPendingEvents",
        pending,
      );
    const pendingBytes = options.maxPendingEventBytes;
    if (pendingBytes !== undefined && !(Number.isSafeInteger(pendingBytes) && pendingBytes > 0))
      throw new ConfigurationError(
        `maxPendingEventBytes is how many bytes of events sent into a run it may hold untaken, a whole number > 0 (the default is 1048576, 1 MiB); got ${String(pendingBytes)}.`,
        "maxPendingEventBytes",
        pendingBytes,
      );
    const heartbeat = options.heartbeat;
    if (heartbeat !== undefined && !(typeof heartbeat === "number" && heartbeat > 0 && heartbeat <= 3600))
      throw new ConfigurationError(`heartbeat is in seconds, a number > 0 and ≤ 3600 (the default is 15); got ${String(heartbeat)}.`, "heartbeat", heartbeat);
    if (options.namespace !== undefined && !/^[A-Za-z0-9._-]{1,100}$/.test(options.namespace))
      throw new ConfigurationError(
        `namespace takes 1 to 100 letters, digits and ._-; got ${JSON.stringify(options.namespace)}.`,
        "namespace",
        options.namespace,
      );
    if (options.token !== undefined && !/^[A-Za-z0-9._~+/-]+=*$/.test(options.token))
      throw new ConfigurationError(
        "token must be a non-empty bearer token of letters, digits and ._~+/- (e.g. from `openssl rand -hex 32`).",
        "token",
        "(hidden)",
      );
    const hosts = options.allowedHosts;
    if (hosts !== undefined && (!Array.isArray(hosts) || hosts.some((h) => typeof h !== "string" || !/^(\*|\.?[A-Za-z0-9._:[\]-]+)$/.test(h))))
      throw new ConfigurationError(
        `allowedHosts takes host names like ["stepflow.example.com", ".internal.example"] (or ["*"] for any); got ${JSON.stringify(hosts)}.`,
        "allowedHosts",
        hosts,
      );
  }

  /** Opens the store and brings back the handlers it holds (unfinished ones continue). `listen` does it too. */
  ready(): Promise<void> {
    this.#opening ??= (async () => {
      const given = this.#options.store;
      const sessions = typeof given === "object" ? given : await openSessionStore(given ?? DEFAULT_SERVER_STORE);
      const onError =
        this.#options.onError ??
        ((error: unknown, id: string) =>
          process.stderr.write(
            error instanceof CorruptHandlerError
              ? `stepflow server: ${error.message}\n`
              : `stepflow server: handler ${id} could not be saved: ${error instanceof Error ? error.message : String(error)}\n`,
          ));
      const holder = newHolder();
      // The registry is made after the store, which tells it when another server took a run over.
      const made: { registry?: HandlerRegistry } = {};
      const store = new HandlerStore(sessions, { onError, onTaken: (id) => made.registry?.taken(id) }, holder, this.#options.namespace);
      const pending = this.#options.maxPendingEvents;
      const pendingBytes = this.#options.maxPendingEventBytes;
      const registry = (made.registry = new HandlerRegistry(this.#workflows, store, {
        acceptMidRunContexts: this.#options.acceptMidRunContexts === true,
        ...(pending !== undefined ? { maxPendingEvents: pending } : {}),
        ...(pendingBytes !== undefined ? { maxPendingEventBytes: pendingBytes } : {}),
      }));
      await registry.restore();
      // A store other servers may share keeps the answers to keyed POSTs, so that a retry that
      // reaches another server is answered once; a memory store this server opened is its alone.
      const keys =
        typeof given === "object" || !(sessions instanceof MemorySessionStore)
          ? new StoredIdempotencyKeys(sessions, holder, { namespace: this.#options.namespace })
          : undefined;
      keys?.start((error) => process.stderr.write(`stepflow server: stored Idempotency-Keys: ${error instanceof Error ? error.message : String(error)}\n`));
      const app = createApp(registry, this.#workflows, {
        token: this.#options.token,
        cors: this.#options.cors,
        bodyLimit: this.#options.bodyLimit ?? 1024 * 1024,
        webRoot: this.#options.webRoot || undefined,
        hosts:
          this.#options.token === undefined || this.#options.allowedHosts !== undefined
            ? { allowedHosts: this.#options.allowedHosts, boundHost: () => this.#boundHost }
            : undefined,
        heartbeatMs: (this.#options.heartbeat ?? 15) * 1000,
        principal: principalOf(this.#options),
        storedKeys: keys,
      });
      this.#state = { store, ownStore: typeof given !== "object", registry, app, keys };
      this.#holder = holder;
    })();
    return this.#opening;
  }

  /**
   * The Hono app (after `ready()`), to mount in an app of your own or call with
   * `app.fetch(request)`. Without a token it answers only `localhost`, IP addresses and
   * `allowedHosts`: give the name your app is reached under there.
   */
  get app(): Hono {
    return this.#opened().app;
  }

  /** Counts of runs in progress, handlers held and readers following streams (for monitoring and leak checks). */
  stats(): { live: number; handlers: number; readers: number; waiters: number } {
    return this.#opened().registry.stats();
  }

  /**
   * Starts serving HTTP; resolves with the URL once listening. Port 0 picks a free port. A host
   * other machines reach (`0.0.0.0`, a LAN address) needs a `token`, or `allowUnauthenticated`.
   */
  async listen(options: { port?: number; host?: string } = {}): Promise<{ url: string; port: number }> {
    const host = options.host ?? "127.0.0.1";
    if (!isLoopbackHost(host) && this.#options.token === undefined && this.#options.allowUnauthenticated !== true)
      throw new ConfigurationError(
        `Listening on ${host} without a token would let anyone who reaches it start runs, read them and approve tool calls. Give a token (token: "…", or --token / STEPFLOW_SERVER_TOKEN), listen on 127.0.0.1, or, on a network you trust, set allowUnauthenticated: true (--allow-unauthenticated).`,
        "host",
        host,
      );
    await this.ready();
    if (this.#http) throw new ConfigurationError("This server is listening already; close() it first.", "listen", undefined);
    const app = this.app;
    const http = await new Promise<Server>((resolve, reject) => {
      const server = serve({ fetch: app.fetch, port: options.port ?? 8787, hostname: host }, () => resolve(server as Server)) as Server;
      server.once("error", reject);
    });
    this.#http = http;
    this.#boundHost = host;
    const port = (http.address() as AddressInfo).port;
    return { url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`, port };
  }

  /** Stops: runs in progress are saved to continue at the next start on this store, streams end, the port is freed. */
  async close(): Promise<void> {
    const state = this.#state;
    const swept = state?.keys?.stop();
    if (state) await state.registry.close();
    const http = this.#http;
    this.#http = undefined;
    if (http) {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeIdleConnections();
      });
    }
    if (this.#holder) closeHolder(this.#holder);
    await swept;
    if (state?.ownStore) await state.store.sessions.close();
  }

  #opened(): { store: HandlerStore; registry: HandlerRegistry; app: Hono } {
    if (!this.#state) throw new ConfigurationError("The server is not open yet: await server.ready() or server.listen() first.", "ready", undefined);
    return this.#state;
  }
}

/** Who a request comes from, for the record: the operator's `principal`, else what the server's access rule implies. */
function principalOf(options: WorkflowServerOptions): (request: Request) => string {
  const fallback = options.token !== undefined ? "bearer token holder" : options.allowUnauthenticated === true ? "unauthenticated client" : "local user";
  const principal = options.principal;
  if (!principal) return () => fallback;
  return (request) => {
    const who = principal(request);
    return typeof who === "string" && who.trim() !== "" ? who.trim().slice(0, 200) : fallback;
  };
}

function checkWorkflows(workflows: WorkflowServerOptions["workflows"]): Map<string, ServedWorkflow> {
  const map = new Map<string, ServedWorkflow>();
  if (typeof workflows !== "object" || workflows === null || Object.keys(workflows).length === 0)
    throw new ConfigurationError("workflows takes at least one workflow by name, like { agent }.", "workflows", workflows);
  for (const [name, value] of Object.entries(workflows)) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name))
      throw new ConfigurationError(`A workflow's name is used in URLs: letters, digits and ._- (up to 100); got ${JSON.stringify(name)}.`, "workflows", name);
    const served = value instanceof Workflow ? { workflow: value } : value;
    if (!(served?.workflow instanceof Workflow))
      throw new ConfigurationError(`workflows.${name} must be a Workflow, or { workflow, description?, inputSchema?, events? }.`, `workflows.${name}`, value);
    served.workflow.validate();
    // A class's `schema` that is not one is told now, not to the first client sending that event.
    for (const cls of sendableTypes(served).values()) eventSchemaOf(cls);
    map.set(name, served);
  }
  return map;
}
