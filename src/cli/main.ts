/**
 * `stepflow` (`npm start`): chat with the function-calling agent, ask it one question, draw
 * it, or manage stored sessions. Argument parsing is commander's; this file maps commands to
 * the library and every failure to one clear line on stderr.
 */
import { writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { Command, CommanderError, Option } from "commander";
import type { ToolCall } from "@llamaindex/core/llms";
import type { AgentInput, AgentResult, FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import type { Sessions, SessionMessage } from "../sessions/sessions.ts";
import { SessionStoreError, checkSessionId as checkStoredSessionId } from "../sessions/types.ts";
import type { ServeOptions } from "./serve.ts";
import type { ChatOptions } from "./chat.ts";
import { NoSuchSessionError, UsageError } from "./errors.ts";
import { packageVersion } from "./version.ts";
import { API_AUTHORIZATION, apiHeaderVariables } from "./rest-api-setup.ts";
import { KEY_VARIABLES, PROVIDERS, chooseProvider } from "./provider.ts";
import type { Provider } from "./provider.ts";
import type { Terminal } from "./render.ts";
import { terminalSafe, terminalWriter } from "./terminal-text.ts";
import { checkNotACommand } from "./command-typos.ts";
import { TraceLines } from "./trace-lines.ts";
import type { RunOptions } from "./run-workflow.ts";
import { secretRedactor } from "../tools/secrets.ts";
import { quoteInput } from "../core/internal.ts";

// What a command needs is loaded when it runs, not here: `stepflow --help` then loads commander
// and this file, not the agent, the LLM clients, the server, DBOS and their packages.
const agentModule = () => import("../../workflows/function-calling-agent.ts");
const calculatorModule = () => import("../../workflows/tools/calculator.ts");
const sessionsModule = () => import("../sessions/sessions.ts");
const storesModule = () => import("../sessions/open-store.ts");
const sessionListModule = () => import("./session-list.ts");
const dbosModule = () => import("./dbos.ts");

const VERSION = packageVersion();
const SYSTEM_PROMPT = "You are a helpful assistant. Use the calculator tools for arithmetic instead of computing in your head.";

interface MainOptions {
  llm?: string;
  model?: string;
  provider?: string;
  json?: boolean;
  verbose?: boolean;
  session?: string;
  store?: string;
  runtime?: "inprocess" | "dbos";
  database?: string;
  openapi?: string;
  api?: string;
  apiHeader?: string[];
  hrDemo?: boolean;
  toolPerOperation?: boolean;
  calculator?: boolean;
  mcp?: string[];
  maxTools?: string;
}

/** The options of `stepflow worker`. */
interface WorkerOptions {
  database?: string;
  id?: string;
  concurrency?: string;
  queueConcurrency?: string;
  takeoverAfter?: string;
  recover?: string[];
}

/**
 * Runs a subcommand elsewhere: given to {@link main} by the bundled command (dist/cli/, which
 * bin/stepflow.js starts). The bundle has its own copy of stepflow's classes; the subcommands
 * that may load the user's workflow modules, which import `stepflow`, run the whole `argv` in
 * the package's own build (dist/src/cli/main.js, one of the entries bundled with the package's
 * exports), whose classes are theirs. Resolves with the exit code.
 * @example const handOff: HandOff = async (argv, env, command) => (await import("../dist/src/cli/main.js")).main(argv, env, command);
 */
export type HandOff = (argv: readonly string[], env: NodeJS.ProcessEnv, command: string) => Promise<number>;

/** The subcommands that may load the user's workflow modules: the ones a {@link HandOff} runs. */
const LOADS_USER_MODULES = new Set(["draw", "run", "dev", "serve"]);

/** Thrown by the `preSubcommand` hook once a subcommand was handed off: ends this copy's parse with the code. */
class HandedOff extends Error {
  constructor(readonly code: number) {
    super("handed off");
  }
}

/**
 * Runs the CLI with `argv` (without node and the script); resolves with the exit code. Given
 * `handOff`, this copy hands it the subcommands that may load the user's modules.
 * @example process.exitCode = await main(process.argv.slice(2));
 */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, command = "npm start --", handOff?: HandOff): Promise<number> {
  // Colour is decided per stream: `npm start 2>log` keeps escape codes out of the log, `| less` out of the pipe.
  const err = terminalWriter(process.stderr, Boolean(process.stderr.isTTY) && !env.NO_COLOR);
  // The trace waits for the reply's line to end (trace-lines.ts), and both go through the terminal-safe writers.
  const traceLines = new TraceLines(process.stdout, err);
  const out = terminalWriter(traceLines.out, Boolean(process.stdout.isTTY) && !env.NO_COLOR);
  const term: Terminal = { out, err, tty: Boolean(process.stderr.isTTY), colors: err.colors, outColors: out.colors, readlineOutput: traceLines.out };
  let verbose = argv.includes("--verbose") || argv.includes("-v");
  let provider: Provider | undefined;
  // Loaded with the OpenAI client, for `report`, which must stay synchronous.
  let describeOpenAIError: typeof import("../llm/openai.ts").describeOpenAIError | undefined;
  let code = 0;
  // Nothing printed may hold a key: a server may echo it in an error, a stack may carry it.
  const keys = [...KEY_VARIABLES.map((name) => env[name]?.trim()), env[API_AUTHORIZATION]?.trim()];
  // `let`: the keys `--api-header` reads are known once the options are parsed.
  let redact = secretRedactor(keys);
  // An error may quote a server or a model: its text is made as safe to print as their replies.
  const fail = (message: string) => term.err.write(`${term.colors.red("stepflow:")} ${terminalSafe(redact(message))}\n`);
  /** One line for any failure (and its stack trace with --verbose); the exit code it means. */
  const report = (error: unknown): number => {
    if (error instanceof UsageError) {
      fail(error.message);
      return 2;
    }
    const described = provider?.kind === "openai" ? describeOpenAIError?.(error, { baseURL: provider.baseURL, model: provider.model }) : undefined;
    fail(described ?? (error instanceof Error ? error.message : String(error)));
    if (verbose && error instanceof Error && error.stack) term.err.write(`${terminalSafe(redact(error.stack))}\n`);
    return 1;
  };

  const program = new Command("stepflow")
    .description("Chat with a function-calling agent built on stepflow workflows.")
    .argument("[message...]", "ask one question, print the answer and exit (omit it to chat)")
    .addOption(
      new Option("--llm <kind>", "which model to use (default: openai when OPENAI_API_KEY or OPENAI_BASE_URL is set, else offline)").choices([
        "offline",
        "openai",
      ]),
    )
    .addOption(new Option("--provider <name>", "the model's provider, set up by its environment variables (docs/providers.md)").choices(PROVIDERS))
    .option("-m, --model <name>", "model name (default: gpt-4o-mini, claude-sonnet-5-5, gemini-2.5-flash or llama3.1:8b, by provider)")
    .option("--json", "print { response, sources } as JSON (one-shot only)")
    .option("-v, --verbose", "print the workflow's step trace, and stack traces on errors")
    .option("-s, --session <id>", "keep the conversation in a stored session (continues it if it exists)")
    .option("--store <url>", "session store: sqlite:PATH (default .stepflow/sessions.db), postgres://…, memory:")
    .addOption(
      new Option("--runtime <kind>", "where the question runs: in this process, or durably on DBOS workers (stepflow worker)").choices(["inprocess", "dbos"]),
    )
    .option("--database <url>", "with --runtime dbos: the workers' PostgreSQL, postgres://… (default DATABASE_URL)")
    .option("--openapi <file-or-url>", "give the chat a REST API tool for this OpenAPI document (JSON or YAML); calls that change data ask you first")
    .option("--api <url>", `the REST API's base URL (with --openapi, or alone); ${API_AUTHORIZATION} is sent as its authorization header`)
    .option(
      "--api-header <name=variable>",
      "send the REST API header NAME with the value of environment variable VARIABLE (a key in X-API-Key, say: --api-header X-API-Key=MY_API_KEY); repeatable",
      (header: string, headers: string[] = []) => [...headers, header],
    )
    .option("--hr-demo", "start the bundled HR demo API locally and chat with it (try: Fire Lawson)")
    .option("--calculator", "with --openapi or --api: give the chat the calculator tools too")
    .option("--tool-per-operation", "with --openapi or --hr-demo: one tool per API operation instead of one call_rest_api tool")
    .option(
      "--mcp <server>",
      "give the chat the tools of an MCP server: a URL (streamable HTTP) or a command that starts one; repeatable; tools not marked read-only ask you first",
      (server: string, servers: string[] = []) => [...servers, server],
    )
    .option("--max-tools <n>", "send the model at most N tools a call, those that best match the conversation (default: all)")
    .version(VERSION, "-V, --version", "print the version")
    .showSuggestionAfterError(true)
    .exitOverride()
    // Help goes where commander sends it (stdout, or stderr after a mistake); its error
    // messages do not: the catch below prints them as one line.
    .configureOutput({ writeOut: (s) => term.out.write(s), writeErr: (s) => term.err.write(s), outputError: () => {} })
    .action(async (words: string[], options: MainOptions) => {
      verbose = options.verbose ?? false;
      // Hidden before anything is checked: a message, a trace or a stack may hold one of them.
      if (options.apiHeader) redact = secretRedactor([...keys, ...apiHeaderVariables(options.apiHeader).map((name) => env[name]?.trim())]);
      checkNotACommand(
        words,
        program.commands.map((c) => c.name()),
        command,
      );
      if (options.session !== undefined) checkSessionId(options.session);
      if (options.store !== undefined) await checkStoreURL(options.store);
      if (options.json && words.length === 0) throw new UsageError(`--json needs a question: ${command} --json "What is 2 + 2?"`);
      if (options.runtime === "dbos") {
        if (words.length === 0 && options.session === undefined)
          throw new UsageError(
            `--runtime dbos asks one question, or chats in a stored session: ${command} --runtime dbos --database postgres://… "What is 2 + 2?", or ${command} --runtime dbos --database postgres://… --session NAME`,
          );
        if (options.store !== undefined)
          throw new UsageError("--store does not go with --runtime dbos: the session is kept in the workers' PostgreSQL (--database).");
        if (
          options.openapi !== undefined ||
          options.api !== undefined ||
          options.apiHeader !== undefined ||
          options.hrDemo ||
          options.mcp !== undefined ||
          options.maxTools !== undefined
        )
          throw new UsageError(
            "--openapi, --api, --api-header, --hr-demo, --mcp and --max-tools do not go with --runtime dbos: the workers run the agent with the calculator tools.",
          );
        const { askOnDbos, databaseOption, sessionOnDbos } = await dbosModule();
        const database = databaseOption(options.database, env, command, "--runtime dbos");
        if (options.session === undefined) return askOnDbos(words.join(" "), { database, term, json: options.json ?? false });
        // The workers' agent, here only to describe its tools in approval questions.
        const agent = await offlineAgent(true);
        const question = words.length > 0 ? words.join(" ") : undefined;
        if (
          (await sessionOnDbos({ database, sessionId: options.session, agent, term, json: options.json ?? false, question, input: process.stdin, report })) > 0
        )
          code = 1;
        return;
      }
      if (options.database !== undefined)
        throw new UsageError(`--database goes with --runtime dbos: ${command} --runtime dbos --database ${options.database} "…"`);
      const maxToolsPerCall = options.maxTools === undefined ? undefined : wholeNumber("--max-tools", options.maxTools, "the default is every tool");
      provider = await chooseProvider({ llm: options.llm, provider: options.provider, model: options.model, env });
      if (provider.kind === "openai") ({ describeOpenAIError } = await import("../llm/openai.ts"));
      const [{ FunctionCallingAgent }, { calculatorTools }, { restApiSetup }, { mcpSetup }, { chat, ask }] = await Promise.all([
        agentModule(),
        calculatorModule(),
        import("./rest-api-setup.ts"),
        import("./mcp-setup.ts"),
        import("./chat.ts"),
      ]);
      const api = await restApiSetup(
        { openapi: options.openapi, api: options.api, hrDemo: options.hrDemo, toolPerOperation: options.toolPerOperation, headers: options.apiHeader },
        env,
        command,
        new Set(calculatorTools.map((tool) => tool.metadata.name)),
      );
      // Your own API's tools come alone: the calculator's only when asked (--calculator).
      const calculators = options.openapi !== undefined || options.api !== undefined ? (options.calculator ? calculatorTools : []) : calculatorTools;
      const taken = new Set([...calculators, ...(api?.tools ?? [])].map((tool) => tool.metadata.name));
      const mcp = await mcpSetup(options.mcp ?? [], taken, command).catch(async (error: unknown) => {
        await api?.close();
        throw error;
      });
      const asks = [api?.needsApproval, mcp?.needsApproval].filter((ask) => ask !== undefined);
      const agent = new FunctionCallingAgent({
        llm: provider.llm,
        tools: [...calculators, ...(api?.tools ?? []), ...(mcp?.tools ?? [])],
        systemPrompt: api
          ? `${calculators.length > 0 ? SYSTEM_PROMPT : "You are a helpful assistant."} Use the REST API tools for ${api.about}; look things up before you change them.`
          : SYSTEM_PROMPT,
        // A turn may wait for the user's answer to an approval question: no run timeout then.
        timeout: asks.length > 0 ? null : 300,
        ...(asks.length > 0 ? { needsApproval: (call: ToolCall) => asks.some((ask) => ask(call)) } : {}),
        ...(maxToolsPerCall !== undefined ? { maxToolsPerCall } : {}),
        verbose,
        // Each tool call is shown once, as the turn's "↳ tool(args) → result" line.
        log: (line) => void (/^(Invoking: |Got output: )/.test(line) || traceLines.trace(`${term.colors.dim(redact(line))}\n`)),
      });
      const store = options.session !== undefined ? await (await storesModule()).openSessionStore(options.store) : undefined;
      // Said before the chat starts rather than as each turn's failure; an existing session goes on.
      const reserved = options.session === undefined ? undefined : (await import("../sessions/reserved-ids.ts")).reservedIdProblem(options.session);
      if (store && options.session !== undefined && reserved !== undefined && !(await store.load(options.session, { newest: 0 }))) {
        await store.close();
        await api?.close();
        await mcp?.close();
        throw new UsageError(reserved);
      }
      const sessions = store ? new (await sessionsModule()).Sessions(agent, store) : undefined;
      const chatOptions: ChatOptions = { agent, term, sessions, sessionId: options.session };
      if (provider.kind === "offline") {
        term.err.write(
          term.colors.dim(
            "Using the offline demo model (not a language model: it does arithmetic with the calculator tools and remembers your name). For a real model set OPENAI_API_KEY, or OPENAI_BASE_URL for Ollama/vLLM/llama.cpp/LM Studio, and pass --model.\n",
          ),
        );
      } else {
        term.err.write(term.colors.dim(`Using ${provider.label}.\n`));
      }
      if (api) term.err.write(term.colors.dim(`${api.banner}\n`));
      if (mcp) term.err.write(term.colors.dim(`${mcp.banner}\n`));
      try {
        if (words.length > 0) await ask(words.join(" "), { ...chatOptions, json: options.json ?? false, input: process.stdin });
        // A failed turn is reported and the chat goes on; the exit code says whether any failed.
        else if ((await chat({ ...chatOptions, report }, process.stdin)) > 0) code = 1;
      } finally {
        traceLines.flush();
        await store?.close();
        await api?.close();
        await mcp?.close();
      }
    });

  program
    .command("draw")
    .description("print the agent workflow, or those of your module, as Mermaid flowcharts")
    .argument("[module]", "a .ts or .js module exporting your workflows (default: the agent)")
    .argument("[workflow]", "only this one of the module's workflows")
    .option("--html <file>", "write an HTML page that renders the drawing (works offline: Mermaid is inlined)")
    .action(async (module: string | undefined, name: string | undefined, options: { html?: string }) => {
      const drawings = await drawingsOf(module, name);
      if (!options.html) return void term.out.write(`${Object.values(drawings).join("\n\n")}\n`);
      await writeFile(options.html, await (await import("./draw-html.ts")).drawingPage(drawings));
      term.out.write(`Wrote ${options.html}; open it in a browser.\n`);
    });

  program
    .command("run")
    .description("run one of your workflows: its events on stderr as they happen, its result on stdout")
    .argument("<module>", "a .ts or .js module exporting your workflows")
    .argument("[workflow]", "which workflow (may be left out when the module exports one)")
    .option("-i, --input <json>", "the run's input, as JSON (default {})")
    .option("--json", "print the result as JSON even when it is text")
    .action(async (module: string, name: string | undefined, options: RunOptions) => {
      code = await (await import("./run-workflow.ts")).runWorkflowCommand(module, name, options, term, process.stdin);
    });

  program
    .command("dev")
    .description("serve your workflows with the web page, restarting when a file next to the module changes")
    .argument("<module>", "a .ts or .js module exporting your workflows")
    .option("-p, --port <port>", "port to listen on (default 8787; 0 for any free port)")
    .option("--host <host>", "address to listen on (default 127.0.0.1)")
    .option("--store <url>", "where runs are kept: sqlite:PATH (default .stepflow/server.db), postgres://…, memory:")
    .action(async (module: string, _options: ServeOptions, cmd: Command) => {
      const options = cmd.optsWithGlobals<ServeOptions>();
      if (options.store !== undefined) await checkStoreURL(options.store);
      const self = { execPath: process.execPath, execArgv: process.execArgv, script: process.argv[1] ?? "" };
      code = await (await import("./dev.ts")).dev(module, options, term, self);
    });

  program
    .command("serve")
    .description("serve the agent over HTTP: a JSON/SSE API (and the web page) until Ctrl-C")
    .option("-p, --port <port>", "port to listen on (default 8787; 0 for any free port)")
    .option("--host <host>", "address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)")
    .option("--token <token>", "require Authorization: Bearer <token> on the API (default: $STEPFLOW_SERVER_TOKEN, else none)")
    .option("--cors <origin...>", "origins browsers may call the API from (* for any)")
    .option("--allowed-host <name...>", "host names the server answers besides localhost and IP addresses (behind a proxy; .example.com for subdomains)")
    .option("--allow-unauthenticated", "let a --host other machines reach run without a token (anyone who reaches it can approve tool calls)")
    .option("--web <dir>", "serve the web page from this directory instead of the bundled one")
    .option("--hr-demo", "also start the HR demo API and give the agent its REST tool (deletes wait for approval)")
    .option("--store <url>", "where runs are kept: sqlite:PATH (default .stepflow/server.db), postgres://…, memory:")
    .addOption(
      new Option("--llm <kind>", "the agent's model (default: openai when OPENAI_API_KEY or OPENAI_BASE_URL is set, else offline)").choices([
        "offline",
        "openai",
      ]),
    )
    .option("-m, --model <name>", "model name for OpenAI or an OpenAI-compatible server (default gpt-4o-mini)")
    .argument("[module]", "a .ts or .js module exporting your workflows, served instead of the agent")
    .action(async (module: string | undefined, _options: ServeOptions, cmd: Command) => {
      const options = cmd.optsWithGlobals<ServeOptions & MainOptions>();
      verbose = options.verbose ?? false;
      if (options.store !== undefined) await checkStoreURL(options.store);
      provider = await chooseProvider({ llm: options.llm, provider: options.provider, model: options.model, env });
      if (provider.kind === "openai") ({ describeOpenAIError } = await import("../llm/openai.ts"));
      await (await import("./serve.ts")).serve({ ...options, module }, provider, term, env);
    });

  program
    .command("worker")
    .description("run the agent's durable runs on DBOS: take questions from the PostgreSQL queue until Ctrl-C")
    .option("--database <url>", "PostgreSQL, postgres://… (default DATABASE_URL)")
    .option("--id <name>", "this worker's id; a worker started again with it recovers its unfinished runs (default local)")
    .option("--concurrency <n>", "runs this worker executes at once (default 10)")
    .option("--queue-concurrency <n>", "runs executed at once by all workers together (default no limit)")
    .option("--takeover-after <seconds>", "take over the runs of a worker silent this long (default 30; off: never)")
    .option("--recover <id...>", "once started, take over the unfinished runs of these dead workers")
    .action(async (options: WorkerOptions) => {
      const globals = program.opts<MainOptions>();
      verbose = globals.verbose ?? false;
      const { databaseOption, runWorker } = await dbosModule();
      const database = databaseOption(options.database ?? globals.database, env, command, "worker");
      const workerConcurrency = options.concurrency === undefined ? undefined : wholeNumber("--concurrency", options.concurrency, "the default is 10");
      const concurrency =
        options.queueConcurrency === undefined ? undefined : wholeNumber("--queue-concurrency", options.queueConcurrency, "the default is no limit");
      provider = await chooseProvider({ llm: globals.llm, provider: globals.provider, model: globals.model, env });
      if (provider.kind === "openai") ({ describeOpenAIError } = await import("../llm/openai.ts"));
      const [{ FunctionCallingAgent }, { calculatorTools }] = await Promise.all([agentModule(), calculatorModule()]);
      term.err.write(term.colors.dim(`Using ${provider.kind === "offline" ? "the offline demo model" : provider.label}.\n`));
      const agent = new FunctionCallingAgent({ llm: provider.llm, tools: calculatorTools, systemPrompt: SYSTEM_PROMPT, timeout: 300, verbose });
      const { takeoverAfter: after, recover } = options;
      const takeoverAfter = after === undefined ? undefined : after === "off" ? false : wholeNumber("--takeover-after", after, "or off, to never take over");
      await runWorker({ database, agent, term, workerId: options.id, workerConcurrency, concurrency, takeoverAfter, recover });
    });

  const sessions = program
    .command("sessions")
    .description("list, show or delete stored sessions")
    .option("--store <url>", "session store (default .stepflow/sessions.db)");
  const withSessions = async (run: (sessions: Sessions<AgentInput, AgentResult>) => Promise<void>) => {
    // `--store` may come before or after `sessions`: the top-level command has it too.
    const url = sessions.optsWithGlobals<{ store?: string }>().store;
    if (url !== undefined) await checkStoreURL(url);
    const store = await (await storesModule()).openSessionStore(url);
    try {
      const { Sessions } = await sessionsModule();
      await run(new Sessions(await offlineAgent(false), store));
    } finally {
      await store.close();
    }
  };
  sessions
    .command("list")
    .description("the conversations, most recent first")
    .option("--all", "also the sessions a stepflow server keeps in the store: its runs (handler:…) and Idempotency-Keys (idempotency:…)")
    .action((options: { all?: boolean }) =>
      withSessions(async (s) => {
        const { sessions: list, serverSessions } = await (await sessionListModule()).listSessions(s, options.all === true);
        if (list.length === 0 && serverSessions > 0)
          return void term.out.write(
            `No conversations yet; the store holds ${serverSessions} session${serverSessions === 1 ? "" : "s"} of a stepflow server (its runs and keys): list them with: ${command} sessions list --all\n`,
          );
        if (list.length === 0) return void term.out.write(`No sessions yet. Start one with: ${command} --session NAME\n`);
        for (const item of list) term.out.write(`${terminalSafe(item.id)}\t${item.messageCount} messages\tupdated ${item.updatedAt.toISOString()}\n`);
        // On stderr, so that the list stays the conversations: the left-out ones can still be found.
        if (serverSessions > 0)
          term.err.write(
            term.colors.dim(
              `Left out: ${serverSessions} session${serverSessions === 1 ? "" : "s"} of a stepflow server (ids starting handler: or idempotency:). List every session with: ${command} sessions list --all\n`,
            ),
          );
      }),
    );
  sessions
    .command("show")
    .argument("<id>")
    .description("the messages of a session, or one page of them")
    .option("--page <n>", "only page N of the history: page 1 is the oldest messages")
    .option("--page-size <n>", "messages per page with --page (default 50)")
    .action((id: string, options: { page?: string; pageSize?: string }) => {
      checkSessionId(id);
      const page = options.page === undefined ? undefined : wholeNumber("--page", options.page, "page 1 is the oldest messages");
      const pageSize = options.pageSize === undefined ? undefined : wholeNumber("--page-size", options.pageSize, "the default is 50");
      if (pageSize !== undefined && page === undefined)
        throw new UsageError(`--page-size goes with --page: ${command} sessions show ${id} --page 1 --page-size ${pageSize}`);
      const noSession = () => new NoSuchSessionError(`There is no session "${id}". List them with: ${command} sessions list`, id);
      return withSessions(async (s) => {
        if (page === undefined) {
          // Page by page, so a long history is printed without holding it all.
          let shown = 0;
          for await (const message of s.history(id)) {
            showMessage(message);
            shown++;
          }
          if (shown === 0) throw noSession();
          return;
        }
        const found = await s.messagePage(id, { page, ...(pageSize === undefined ? {} : { pageSize }) });
        if (found.total === 0) throw noSession();
        if (found.messages.length === 0) {
          throw new UsageError(
            `Session "${id}" has ${found.pageCount} ${found.pageCount === 1 ? "page" : "pages"} of ${found.pageSize} messages (${found.total} in all); there is no page ${page}.`,
          );
        }
        for (const message of found.messages) showMessage(message);
        const next =
          page < found.pageCount ? ` Next: ${command} sessions show ${id} --page ${page + 1}${pageSize === undefined ? "" : ` --page-size ${pageSize}`}` : "";
        term.err.write(`Page ${page} of ${found.pageCount} (messages ${found.messages[0]?.seq}–${found.messages.at(-1)?.seq} of ${found.total}).${next}\n`);
      });
    });
  const showMessage = ({ message, createdAt }: SessionMessage) => {
    const calls = (message.options as { toolCall?: { name: string; input: unknown }[] } | undefined)?.toolCall;
    const text = calls?.length
      ? `${message.content ? `${message.content} ` : ""}[calls ${calls.map((c) => `${c.name}(${JSON.stringify(c.input)})`).join(", ")}]`
      : String(message.content);
    const role = (message.options as { toolResult?: unknown } | undefined)?.toolResult ? "tool" : message.role;
    term.out.write(`${createdAt.toISOString()}  ${role}: ${terminalSafe(text)}\n`);
  };
  sessions
    .command("delete")
    .argument("<id>")
    .description("delete a session")
    .action((id: string) => {
      checkSessionId(id);
      return withSessions(async (s) => {
        if (!(await s.delete(id))) throw new NoSuchSessionError(`There is no session "${id}". List them with: ${command} sessions list`, id);
        term.out.write(`Deleted session "${id}".\n`);
      });
    });

  if (handOff)
    program.hook("preSubcommand", async (_program, subcommand) => {
      if (LOADS_USER_MODULES.has(subcommand.name())) throw new HandedOff(await handOff(argv, env, command));
    });

  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof HandedOff) return error.code;
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return 0; // --help, --version
      if (error.code === "commander.help") return 2; // `sessions` without a subcommand: its help is on stderr
      fail(`${oneSentence(error.message)} Run ${command} --help for the options.`);
      return 2;
    }
    return report(error);
  }
}

/** Commander's message as one sentence: "…openai." not "…openai..", and its "(Did you mean …?)" on the same line. */
function oneSentence(message: string): string {
  const text = message
    .replace(/^error: /, "")
    .replace(/\s*\n\((Did you mean .*\?)\)\s*$/, ". $1")
    .trim();
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

/** The session stores' own checks of an id and a store URL, as usage mistakes (exit 2) rather than failures. */
function checkSessionId(id: string): void {
  asUsage(() => checkStoredSessionId(id));
  // Node decodes argv as UTF-8 and turns every invalid byte into U+FFFD: two different ids would become one session.
  if (id.includes("\ufffd")) {
    throw new UsageError(
      `A session id must be valid UTF-8; got ${quoteInput(id)}, where U+FFFD (�) stands for bytes that are not. Use a UTF-8 terminal, or another id.`,
    );
  }
}

/** The whole number ≥ 1 that option `name` was given, or a `UsageError` saying so. */
function wholeNumber(name: string, value: string, hint: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${name} takes a whole number ≥ 1 (${hint}); got ${quoteInput(value)}.`);
  return n;
}

async function checkStoreURL(url: string): Promise<void> {
  const { sessionStoreKind } = await storesModule();
  asUsage(() => sessionStoreKind(url));
}

/** The agent on the offline model: what `draw` draws, and what reads sessions and describes the workers' tools. */
async function offlineAgent(withCalculator: boolean): Promise<FunctionCallingAgent> {
  const [{ FunctionCallingAgent }, { calculatorTools }, { llm }] = await Promise.all([
    agentModule(),
    calculatorModule(),
    chooseProvider({ llm: "offline", env: {} }),
  ]);
  return new FunctionCallingAgent({ llm, ...(withCalculator ? { tools: calculatorTools } : {}) });
}

function asUsage(check: () => unknown): void {
  try {
    check();
  } catch (error) {
    throw error instanceof SessionStoreError ? new UsageError(error.message) : error;
  }
}

/** The drawings `draw` makes: the agent's, or those of the module's workflows (or of one). */
async function drawingsOf(module: string | undefined, name: string | undefined): Promise<Record<string, string>> {
  if (module === undefined) return { FunctionCallingAgent: (await offlineAgent(true)).toMermaid() };
  const { loadWorkflows, pickWorkflow } = await import("./load-workflows.ts");
  const loaded = await loadWorkflows(module);
  const names = name === undefined ? Object.keys(loaded.workflows) : [pickWorkflow(loaded, name).name];
  return Object.fromEntries(names.map((n) => [n, loaded.workflows[n]?.workflow.toMermaid() ?? ""]));
}

/**
 * Runs `main` and exits with its code once stdout and stderr are flushed, without waiting for
 * work the CLI has given up on (a cancelled turn's request to a server that never answers).
 * `command` is how the user started it, for the hints in messages: the installed bin passes
 * "stepflow"; in a checkout it is `npm start --`. `handOff`: as for {@link main}.
 * @example await runAndExit(process.argv.slice(2), "stepflow");
 */
export async function runAndExit(argv: readonly string[], command?: string, handOff?: HandOff): Promise<never> {
  // A reader that went away (`npm start -- "…" | head -0`) is not an error worth a crash dump:
  // end quietly, with 0, as `head`-style pipelines expect.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => process.exit(error.code === "EPIPE" ? 0 : 1));
  process.stderr.on("error", () => {}); // nowhere left to report it
  const code = await main(argv, process.env, command, handOff);
  await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write("", resolve))));
  process.exit(code);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runAndExit(process.argv.slice(2));
}
