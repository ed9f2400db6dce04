/**
 * The REST API the chat may call: `--openapi <file-or-url>` with `--api <base URL>`, or
 * `--hr-demo`, which starts the bundled HR API on 127.0.0.1. Either gives the agent the
 * `call_rest_api` tool, and every call that is not a GET asks the user first.
 */
import { readFile } from "node:fs/promises";
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
import type { OpenApiDocument } from "../../workflows/tools/openapi.ts";
import type { OpenApiToolsOptions } from "../../workflows/tools/openapi-tools.ts";
import { ConfigurationError, maskCredentials, quoteInput } from "../core/internal.ts";
import { COPY_AGAIN, headerValueProblem } from "../llm/header-value.ts";
import { UsageError } from "./errors.ts";

/** The command-line options this reads. @example `{ openapi: "hr.yaml", api: "http://127.0.0.1:8080" }` */
export interface RestApiFlags {
  readonly openapi?: string | undefined;
  readonly api?: string | undefined;
  readonly hrDemo?: boolean | undefined;
  /** One tool per operation of the document (`openApiTools`) instead of the one `call_rest_api` tool. */
  readonly toolPerOperation?: boolean | undefined;
  /** `--api-header NAME=VARIABLE`, each: send header NAME with the value of environment variable VARIABLE. */
  readonly headers?: readonly string[] | undefined;
}

/** The REST tool and what goes with it. @example `const api = await restApiSetup(flags, env); tools.push(...api.tools);` */
export interface RestApiSetup {
  readonly tools: BaseTool[];
  /** For the system prompt: which API the tool reaches. */
  readonly about: string;
  /** One line for the user at start. */
  readonly banner: string;
  /** Values to hide in everything printed (the API's authorization). */
  readonly secrets: string[];
  /** The agent's `needsApproval`: every call of the API's tools but a GET. */
  readonly needsApproval: (call: ToolCall) => boolean;
  /** Stops what was started (the demo API). */
  close(): Promise<void>;
}

/** The variable whose value goes as the `authorization` header of every API request, never shown. */
export const API_AUTHORIZATION = "STEPFLOW_API_AUTHORIZATION";

/** One `--api-header`: the header's name and the environment variable its value is read from. */
interface ApiHeader {
  readonly name: string;
  readonly variable: string;
}

// An HTTP header name (RFC 9110's token) and a shell variable name.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Headers the request itself needs as fetch makes them: a credential never goes in one of these.
const REQUEST_HEADERS = new Set([
  "accept",
  "content-type",
  "content-length",
  "host",
  "connection",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "expect",
  "te",
  "trailer",
  "idempotency-key",
]);

/**
 * The environment variables `--api-header` values name (`X-API-Key=HR_KEY` → `HR_KEY`), those
 * that are variable names: what the CLI hides in everything it prints, before it checks them.
 * @example apiHeaderVariables(["X-API-Key=HR_KEY"]); // ["HR_KEY"]
 */
export function apiHeaderVariables(specs: readonly string[]): string[] {
  return specs.map((spec) => spec.slice(spec.indexOf("=") + 1).trim()).filter((variable) => VARIABLE_NAME.test(variable));
}

/**
 * Each `--api-header NAME=VARIABLE`, checked. Messages never quote what follows `=` unless it is
 * a set variable's name: a user may have put the key itself there.
 */
function parseApiHeaders(specs: readonly string[], env: NodeJS.ProcessEnv, command: string): { name: string; variable: string; value: string }[] {
  const example = `${command} --api URL --api-header X-API-Key=MY_API_KEY`;
  const seen = new Map<string, string>();
  return specs.map((spec) => {
    const at = spec.indexOf("=");
    const name = (at < 0 ? "" : spec.slice(0, at)).trim();
    const variable = spec.slice(at + 1).trim();
    if (at < 0 || !HEADER_NAME.test(name))
      throw new UsageError(
        `--api-header takes NAME=VARIABLE: the header's name, "=", and the environment variable that holds its value, never the value itself (${example}).`,
      );
    const header: ApiHeader = { name, variable };
    if (!VARIABLE_NAME.test(variable))
      throw new UsageError(
        `--api-header ${name}=…: after "=" goes the name of the environment variable that holds the value (letters, digits and _), never the value itself: ${example}.`,
      );
    if (REQUEST_HEADERS.has(name.toLowerCase()))
      throw new UsageError(
        `--api-header ${name}: ${name} is a header every request sets itself, not a credential; name the header your API reads the key from.`,
      );
    const value = env[header.variable]?.trim();
    if (!value)
      // The variable's name is not quoted either: it may be a key typed where a name belongs.
      throw new UsageError(
        `--api-header ${name}=…: the environment variable named after "=" is not set, or empty. Set it to the header's value, then run the command again.`,
      );
    const problem = headerValueProblem(value);
    if (problem) throw new UsageError(`${header.variable} has a character that cannot be sent in an HTTP header (${problem}). ${COPY_AGAIN}`);
    const other = seen.get(name.toLowerCase());
    if (other !== undefined) throw new UsageError(`--api-header names the header ${name} twice (${other} and ${name}): give each header once.`);
    seen.set(name.toLowerCase(), name);
    return { ...header, value };
  });
}

/**
 * The REST API the flags ask for, or `undefined` when they ask for none; a `UsageError` for
 * flags that cannot work.
 * @example const api = await restApiSetup({ hrDemo: true }, process.env);
 */
export async function restApiSetup(
  flags: RestApiFlags,
  env: NodeJS.ProcessEnv,
  command = "npm start --",
  taken: ReadonlySet<string> = new Set(),
): Promise<RestApiSetup | undefined> {
  if (!flags.hrDemo && flags.openapi === undefined && flags.api === undefined) {
    if (flags.headers?.length)
      throw new UsageError(`--api-header goes with --openapi or --api, the API it is sent to: ${command} --api URL --api-header X-API-Key=MY_API_KEY`);
    return undefined;
  }
  // Loaded here, not at the top: a command without these flags (`stepflow --help`) does not need them.
  const { changesData, openApiTools, restApiTool } = await import("../../workflows/tools/rest-api.ts");
  const operationTools = (options: OpenApiToolsOptions, taken: ReadonlySet<string>) => toolPerOperation(openApiTools, options, taken);
  if (flags.hrDemo) {
    if (flags.openapi !== undefined || flags.api !== undefined)
      throw new UsageError(`--hr-demo starts its own API: drop --openapi and --api, or drop --hr-demo (${command} --openapi spec.json --api URL).`);
    if (flags.headers?.length) throw new UsageError(`--api-header goes with --openapi or --api: the HR demo API takes no key.`);
    const { hrOpenApi, startHrApiServer } = await import("../../workflows/demo/hr-api-server.ts");
    const hr = await startHrApiServer();
    const openApi = hrOpenApi as unknown as OpenApiDocument;
    const { tools, renamed } = flags.toolPerOperation
      ? operationTools({ openApi, baseURL: hr.baseURL }, taken)
      : { tools: [restApiTool({ baseURL: hr.baseURL, openApi })], renamed: "" };
    return {
      tools,
      needsApproval: changesData(tools),
      about: `the HR API of the company's employees (${hr.baseURL})`,
      banner: `HR demo API at ${hr.baseURL} (${hr.users.length} employees; it forgets changes when the command ends). Try: "Fire Lawson" — you approve the DELETE.${renamed}`,
      secrets: [],
      close: () => hr.close(),
    };
  }
  const document = flags.openapi === undefined ? undefined : await loadOpenApi(flags.openapi);
  const baseURL = flags.api ?? absoluteServer(document, flags.openapi);
  if (baseURL === undefined)
    throw new UsageError(
      `--openapi ${flags.openapi ?? ""} needs --api <base URL>: the document names no absolute server URL. Example: ${command} --openapi spec.json --api http://127.0.0.1:8080`,
    );
  const authorization = env[API_AUTHORIZATION]?.trim() || undefined;
  const extra = parseApiHeaders(flags.headers ?? [], env, command);
  if (authorization && extra.some((header) => header.name.toLowerCase() === "authorization"))
    throw new UsageError(`${API_AUTHORIZATION} and --api-header Authorization=… both set the Authorization header: use one of them.`);
  if (flags.toolPerOperation && !document) throw new UsageError(`--tool-per-operation needs --openapi: the tools are made from the document's operations.`);
  let tools: BaseTool[];
  let renamed: string;
  try {
    const sent = { ...(authorization ? { authorization } : {}), ...Object.fromEntries(extra.map((header) => [header.name, header.value])) };
    const headers = Object.keys(sent).length > 0 ? { headers: sent } : {};
    ({ tools, renamed } =
      flags.toolPerOperation && document
        ? operationTools({ openApi: document, baseURL, ...headers }, taken)
        : {
            tools: [
              restApiTool({
                baseURL,
                ...(document ? { openApi: document } : { description: `The REST API at ${maskCredentials(baseURL)}.` }),
                ...headers,
              }),
            ],
            renamed: "",
          });
  } catch (error) {
    // restApiTool's messages name the option; here the user gave flags.
    if (error instanceof ConfigurationError && error.option === "headers" && error.message.includes("credentials"))
      // The command sends Authorization, and the headers --api-header names, from the environment.
      throw new UsageError(
        `${error.message}\nFrom the command line, set ${API_AUTHORIZATION} to the Authorization header's value (e.g. "Bearer …"), or send a key in another header with --api-header NAME=VARIABLE, whose value is read from that environment variable (--api-header X-API-Key=MY_API_KEY); a credential in the query or a cookie needs stepflow as a library (openApiTools' headers).`,
      );
    if (error instanceof ConfigurationError) throw new UsageError(error.message.replace(/^(restApiTool|openApiTools): baseURL/, "--api"));
    throw error;
  }
  const title = typeof document?.info?.title === "string" ? document.info.title : "the REST API";
  return {
    tools,
    needsApproval: changesData(tools),
    about: `${title} (${maskCredentials(baseURL)})`,
    banner: `REST API: ${title} at ${maskCredentials(baseURL)}${sentWith(authorization, extra)}. Calls that change data ask you first.${renamed}`,
    secrets: [...(authorization ? [authorization] : []), ...extra.map((header) => header.value)],
    close: async () => {},
  };
}

/** What the banner says the requests carry: the variables' names, never their values. */
function sentWith(authorization: string | undefined, extra: readonly ApiHeader[]): string {
  const parts = [...(authorization ? [`the ${API_AUTHORIZATION} header`] : []), ...extra.map((header) => `the ${header.name} header from ${header.variable}`)];
  return parts.length === 0 ? "" : ` (with ${parts.join(" and ")})`;
}

/**
 * A tool per operation, none named like one of `taken` (the chat's other tools): such an
 * operation gets a number after its name, and `renamed` says so for the banner.
 */
function toolPerOperation(
  openApiTools: (options: OpenApiToolsOptions) => BaseTool[],
  options: OpenApiToolsOptions,
  taken: ReadonlySet<string>,
): { tools: BaseTool[]; renamed: string } {
  const tools = openApiTools({ ...options, reservedNames: taken });
  const plain = tools.some((tool) => /_\d+$/.test(tool.metadata.name)) ? openApiTools(options) : tools;
  const moved = tools.flatMap((tool, i) => {
    const was = plain[i]?.metadata.name;
    return was !== undefined && was !== tool.metadata.name && taken.has(was) ? [`${was} is ${tool.metadata.name}`] : [];
  });
  return { tools, renamed: moved.length > 0 ? ` Operations named like other tools are named apart: ${moved.join(", ")}.` : "" };
}

/** The OpenAPI document at `source` (a file or an http(s) URL), JSON or YAML. */
async function loadOpenApi(source: string): Promise<OpenApiDocument> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    let response: Response;
    try {
      response = await fetch(source, { signal: AbortSignal.timeout(30_000), headers: { accept: "application/json, application/yaml, text/yaml, */*" } });
    } catch (error) {
      throw new UsageError(`--openapi: cannot fetch ${maskCredentials(source)}: ${whyUnreachable(error)}.`);
    }
    if (!response.ok)
      throw new UsageError(`--openapi: ${maskCredentials(source)} answered HTTP ${response.status}; give the URL of the OpenAPI document itself.`);
    text = await response.text();
  } else {
    if (/\.(?:[cm]?[jt]s|tsx?|jsx)$/i.test(source))
      throw new UsageError(
        `--openapi takes an OpenAPI document, JSON or YAML (spec.json, spec.yaml), not a program: ${quoteInput(source, 300)}. To give the agent tools written in code, use stepflow as a library (docs/tools.md).`,
      );
    try {
      text = await readFile(source, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(
        `--openapi: cannot read ${quoteInput(source, 300)} (${code === "ENOENT" ? "no such file" : String(code ?? (error as Error).message)}).`,
      );
    }
  }
  let parsed: unknown;
  const json = text.trimStart().startsWith("{");
  const yaml = json ? undefined : await import("yaml");
  try {
    parsed = yaml ? yaml.parse(text) : JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--openapi: ${quoteInput(source, 300)} is neither JSON nor YAML: ${(error as Error).message.split("\n")[0] ?? ""}`);
  }
  if (typeof parsed !== "object" || parsed === null || typeof (parsed as { paths?: unknown }).paths !== "object")
    throw new UsageError(`--openapi: ${quoteInput(source, 300)} is not an OpenAPI document (it has no "paths").`);
  return parsed as OpenApiDocument;
}

/** Why a fetch failed, in words (fetch itself says only "fetch failed"; the reason is in its cause). */
function whyUnreachable(error: unknown): string {
  if ((error as Error | undefined)?.name === "TimeoutError") return "no answer within 30 seconds";
  const cause = (error as Error).cause as { code?: unknown; message?: unknown } | undefined;
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  const words: Record<string, string> = {
    ECONNREFUSED: "connection refused (is the server running, on that port?)",
    ENOTFOUND: "no such host (check the host name)",
    EAI_AGAIN: "the host name could not be looked up (DNS; are you offline?)",
    ECONNRESET: "the server closed the connection",
    ETIMEDOUT: "the connection timed out",
    EHOSTUNREACH: "the host is unreachable",
    CERT_HAS_EXPIRED: "the server's TLS certificate has expired",
    DEPTH_ZERO_SELF_SIGNED_CERT: "the server's TLS certificate is self-signed",
  };
  if (code) return words[code] ?? code;
  return typeof cause?.message === "string" ? cause.message : (error as Error).message;
}

/** The document's first server URL when it is absolute (or relative to the document's own URL). */
function absoluteServer(document: OpenApiDocument | undefined, source: string | undefined): string | undefined {
  const url = document?.servers?.[0]?.url;
  if (typeof url !== "string") return undefined;
  try {
    return new URL(url, source !== undefined && /^https?:\/\//i.test(source) ? source : undefined).href;
  } catch {
    return undefined;
  }
}
