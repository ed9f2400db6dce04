/**
 * `stepflow serve`: the function-calling agent behind the HTTP server, until Ctrl-C. A run
 * waiting for approval when the server stops is saved and continues at the next start.
 */
import { z } from "zod";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import type { FunctionCallingAgentOptions } from "../../workflows/function-calling-agent.ts";
import { DEFAULT_SERVER_STORE, WorkflowServer } from "../server/workflow-server.ts";
import { hrOpenApi, startHrApiServer } from "../../workflows/demo/hr-api-server.ts";
import { restApiTool } from "../../workflows/tools/rest-api.ts";
import { webPageDirectory } from "../web/web-page.ts";
import { isLoopbackHost } from "../server/host-check.ts";
import type { ServedWorkflow } from "../server/served-workflow.ts";
import type { Provider } from "./provider.ts";
import type { Terminal } from "./render.ts";
import { UsageError } from "./errors.ts";
import { loadWorkflows } from "./load-workflows.ts";

/** Options of `stepflow serve`. */
export interface ServeOptions {
  readonly port?: string;
  readonly host?: string;
  readonly store?: string;
  readonly token?: string;
  readonly cors?: string[];
  readonly web?: string;
  readonly hrDemo?: boolean;
  readonly allowedHost?: string[];
  readonly allowUnauthenticated?: boolean;
  /** A module of the user's workflows to serve instead of the agent (`stepflow serve ./flows.ts`). */
  readonly module?: string;
}

const SYSTEM_PROMPT = "You are a helpful assistant. Use the calculator tools for arithmetic instead of computing in your head.";

/**
 * The agent as the server registers it: its input checked, so a bad body gets a 400 that says
 * what to send. `extra` adds tools (and which calls need approval) to the calculator's. Runs
 * have no time limit: one may wait for an approval for days.
 */
export function servedAgent(provider: Provider, extra: Pick<FunctionCallingAgentOptions, "tools" | "needsApproval"> = {}): ServedWorkflow {
  return {
    workflow: new FunctionCallingAgent({
      llm: provider.llm,
      tools: [...calculatorTools, ...(extra.tools ?? [])],
      ...(extra.needsApproval !== undefined ? { needsApproval: extra.needsApproval } : {}),
      systemPrompt: SYSTEM_PROMPT,
      timeout: null,
    }),
    description: `The function-calling agent with the calculator tools, on ${provider.label}.`,
    inputSchema: z.object({ input: z.string().min(1).describe("The user's message.") }),
  };
}

/** Starts the server and resolves once it has stopped (SIGINT/SIGTERM). */
export async function serve(
  options: ServeOptions,
  provider: Provider,
  term: Terminal,
  env: NodeJS.ProcessEnv,
  signals: NodeJS.EventEmitter = process,
): Promise<void> {
  const port = options.port === undefined ? 8787 : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port takes a port number from 0 to 65535 (0: any free port); got ${JSON.stringify(options.port)}.`);
  const token = options.token ?? env.STEPFLOW_SERVER_TOKEN;
  const host = options.host ?? "127.0.0.1";
  const exposed = !isLoopbackHost(host);
  if (exposed && !token && !options.allowUnauthenticated)
    throw new UsageError(
      `--host ${host} without a token would let anyone who reaches this machine start runs, read them and approve tool calls. Give a token (--token, or STEPFLOW_SERVER_TOKEN; e.g. from \`openssl rand -hex 32\`), or add --allow-unauthenticated on a network you trust.`,
    );
  if (options.module !== undefined && options.hrDemo) throw new UsageError("--hr-demo serves the agent: leave it out to serve your module's workflows.");
  const own = options.module === undefined ? undefined : await loadWorkflows(options.module);
  const hr = options.hrDemo ? await startHrApiServer() : undefined;
  const server = new WorkflowServer({
    workflows: own?.workflows ?? { agent: servedAgent(provider, hr ? hrDemoTools(hr.baseURL) : {}) },
    store: options.store ?? defaultStore(term),
    ...(token ? { token } : {}),
    ...(options.allowedHost && options.allowedHost.length > 0 ? { allowedHosts: options.allowedHost } : {}),
    ...(options.allowUnauthenticated ? { allowUnauthenticated: true } : {}),
    ...(options.cors && options.cors.length > 0 ? { cors: { origin: options.cors.length === 1 && options.cors[0] === "*" ? "*" : options.cors } } : {}),
    webRoot: options.web ?? (await webPageDirectory()),
  });
  const { url } = await server.listen({ port, host }).catch(async (error: unknown) => {
    await server.close();
    await hr?.close();
    throw portInUse(error, port, options.host) ?? error;
  });
  // Listening for a stop before saying so: a process manager may send SIGTERM as soon as it reads the line.
  const stopped = untilSignal(signals);
  term.out.write(`stepflow server listening on ${url}\n`);
  const served = own ? `${Object.keys(own.workflows).join(", ")} (from ${own.file})` : `agent (${provider.label})`;
  term.err.write(term.colors.dim(`Workflows: ${served}. API: ${url}/api/openapi.json. Stop with Ctrl-C.\n`));
  term.err.write(exposureLine(host, Boolean(token), term));
  if (hr) term.err.write(term.colors.dim(`HR demo API on ${hr.baseURL}: ask the agent to "Fire Lawson"; its DELETE waits for your approval.\n`));
  await stopped;
  term.err.write(term.colors.dim("Stopping: runs in progress are saved and continue at the next start.\n"));
  await server.close();
  await hr?.close();
}

/**
 * Resolves at the first SIGINT or SIGTERM (Ctrl-C, a process manager's stop).
 * @example await untilSignal(process);
 */
export function untilSignal(signals: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      signals.off("SIGINT", stop);
      signals.off("SIGTERM", stop);
      resolve();
    };
    signals.on("SIGINT", stop);
    signals.on("SIGTERM", stop);
  });
}

/**
 * The runs' store when none is named: SQLite in .stepflow/server.db, so that a restart loses
 * none, when @libsql/client (an optional dependency) is installed; memory otherwise, said once.
 */
function defaultStore(term: Terminal): string {
  try {
    import.meta.resolve("@libsql/client");
    return DEFAULT_SERVER_STORE;
  } catch {
    term.err.write(
      term.colors.dim(
        "Runs are kept in memory: a restart forgets them. To keep them in .stepflow/server.db, npm install @libsql/client (or pass --store postgres://…).\n",
      ),
    );
    return "memory:";
  }
}

/** A busy port as what to do about it; `undefined` for any other failure. */
function portInUse(error: unknown, port: number, host = "127.0.0.1"): UsageError | undefined {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== "EADDRINUSE") return undefined;
  return new UsageError(
    `Port ${port} on ${host} is in use (another stepflow serve?). Stop what listens there, or pick another port: --port ${port === 65535 ? 8787 : port + 1}, or --port 0 for any free one.`,
  );
}

/** Who can use the API, in one line: the banner says what is exposed. */
function exposureLine(host: string, token: boolean, term: Terminal): string {
  const reach = isLoopbackHost(host) ? "programs on this machine" : `anyone who reaches ${host} on the network`;
  if (token) return term.colors.dim(`Access: ${reach}, with the bearer token (health and the API description need none).\n`);
  if (!isLoopbackHost(host))
    return term.colors.yellow(`Warning: no token: ${reach} can start runs, read them and approve tool calls (--allow-unauthenticated).\n`);
  return term.colors.dim(`Access: ${reach}, no token; web pages of other sites cannot reach it (only localhost and IP addresses are answered).\n`);
}

/** The HR demo's REST tool; every call but a GET waits for a human's approval. */
function hrDemoTools(baseURL: string): Pick<FunctionCallingAgentOptions, "tools" | "needsApproval"> {
  return {
    tools: [restApiTool({ baseURL, openApi: hrOpenApi })],
    needsApproval: (call) => call.name === "call_rest_api" && (call.input as { method?: unknown } | undefined)?.method !== "GET",
  };
}
