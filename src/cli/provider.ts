/**
 * Which LLM the CLI talks to: OpenAI when OPENAI_API_KEY is set, any OpenAI-compatible server
 * when OPENAI_BASE_URL is set, else the offline demo model. `--llm` forces a choice, and
 * `--provider anthropic|gemini|ollama|openai` picks a provider, configured by its own
 * environment variables.
 */
import type { ToolCallLLM } from "@llamaindex/core/llms";
import { COPY_AGAIN, headerValueProblem } from "../llm/header-value.ts";
import { maskCredentials, quoteInput } from "../core/internal.ts";
import { UsageError } from "./errors.ts";

/** The chosen model and how to describe it to the user (never with the key). */
export interface Provider {
  readonly llm: ToolCallLLM;
  readonly kind: "offline" | ProviderName;
  /** e.g. `gpt-4o-mini at https://api.openai.com/v1` */
  readonly label: string;
  /** As configured (never with credentials: those are refused). */
  readonly baseURL: string;
  readonly model: string;
}

/** The providers `--provider` chooses among. */
export const PROVIDERS = ["anthropic", "gemini", "ollama", "openai"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** Flags and environment the choice depends on. */
export interface ProviderRequest {
  readonly llm?: string;
  /** `--provider`: one of {@link PROVIDERS}. */
  readonly provider?: string;
  readonly model?: string;
  readonly env: NodeJS.ProcessEnv;
}

const DEFAULT_MODEL = "gpt-4o-mini";
const OPENAI_URL = "https://api.openai.com/v1";
// Model names of OpenAI, Ollama ("llama3.1:8b"), vLLM ("meta-llama/Llama-3.1-8B-Instruct"), LM Studio.
const MODEL_NAME = /^[\w][\w.:/@+-]{0,199}$/;

/**
 * Picks the LLM; throws `UsageError` (exit code 2) for a choice that cannot work. Only the
 * chosen provider's client is loaded: each brings its SDK, and most commands need one or none.
 * @example
 * const { llm, label } = await chooseProvider({ model: "gpt-4o", env: process.env });
 */
export async function chooseProvider(request: ProviderRequest): Promise<Provider> {
  const { env } = request;
  if (request.provider !== undefined) {
    if (!(PROVIDERS as readonly string[]).includes(request.provider))
      throw new UsageError(`--provider must be one of ${PROVIDERS.join(", ")}; got ${quoteInput(request.provider, 40)}.`);
    if (request.llm !== undefined && request.llm !== request.provider)
      throw new UsageError(`--llm ${request.llm} and --provider ${request.provider} disagree: give one of them.`);
    if (request.provider !== "openai") return providerModel(request.provider as Exclude<ProviderName, "openai">, request.model, env);
  }
  if (env.OPENAI_BASE_URL !== undefined && env.OPENAI_BASE_URL !== "" && env.OPENAI_BASE_URL.trim() === "") {
    // Set to spaces (a stray `export OPENAI_BASE_URL=" "`): the user meant a server, not the offline model.
    throw new UsageError(
      `OPENAI_BASE_URL is set but blank (${quoteInput(env.OPENAI_BASE_URL)}). Set it to the server's URL, such as http://localhost:11434/v1, or unset it.`,
    );
  }
  const key = env.OPENAI_API_KEY?.trim() || undefined;
  const baseURL = env.OPENAI_BASE_URL?.trim() || undefined;
  const choice = request.provider ?? request.llm ?? (key || baseURL ? "openai" : "offline");
  if (choice !== "offline" && choice !== "openai") {
    throw new UsageError(`--llm must be "offline" or "openai", got "${choice}".`);
  }
  if (request.model !== undefined && !MODEL_NAME.test(request.model)) {
    throw new UsageError(`--model "${request.model}" is not a model name. Use a name like gpt-4o-mini or llama3.1:8b.`);
  }
  if (choice === "offline") {
    if (request.model !== undefined) {
      throw new UsageError(
        `--model ${request.model} needs a real model: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (Ollama, vLLM, llama.cpp, LM Studio), or drop --model to use the offline demo model.`,
      );
    }
    const { OfflineDemoLLM } = await import("../llm/offline-model.ts");
    return { llm: new OfflineDemoLLM(), kind: "offline", label: "the offline demo model", baseURL: "", model: "offline-demo" };
  }
  if (!key && !baseURL) {
    throw new UsageError("--llm openai needs OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (for an OpenAI-compatible server such as Ollama).");
  }
  for (const name of HEADER_VARIABLES) checkHeaderValue(name, name === "OPENAI_API_KEY" ? key : env[name]?.trim());
  const model = request.model ?? DEFAULT_MODEL;
  const url = (baseURL ?? OPENAI_URL).replace(/\/+$/, "");
  if (baseURL !== undefined && !isHttpURL(url)) {
    // Without a scheme the SDK fails later with a bare "Invalid URL"; "localhost:11434" would even parse, as scheme "localhost:".
    throw new UsageError(
      `OPENAI_BASE_URL must be an http:// or https:// URL such as http://localhost:11434/v1; got ${quoteInput(maskCredentials(baseURL), 80)}.`,
    );
  }
  if (baseURL !== undefined && hasCredentials(url)) {
    // Node's fetch refuses every URL with credentials in it; the key goes in a header instead.
    throw new UsageError(
      `OPENAI_BASE_URL must not contain a user or password (got ${quoteInput(maskCredentials(url), 80)}): Node's fetch refuses such URLs. Put the key in OPENAI_API_KEY.`,
    );
  }
  // Local servers ignore the key, but the OpenAI SDK insists on one.
  const { OpenAI } = await import("../llm/openai.ts");
  const llm = new OpenAI({ model, apiKey: key ?? "no-key", baseURL: url, maxRetries: 1 });
  return { llm, kind: "openai", label: `${model} at ${url}`, baseURL: url, model };
}

/** The environment variables that hold each provider's API key: never printed. */
export const KEY_VARIABLES = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OLLAMA_API_KEY"] as const;

const DEFAULT_MODELS = { anthropic: "claude-sonnet-5-5", gemini: "gemini-2.5-flash", ollama: "llama3.1:8b" } as const;
const NAMES = { anthropic: "Anthropic", gemini: "Gemini", ollama: "Ollama" } as const;

/** The model of `--provider anthropic|gemini|ollama`, from its environment variables. */
async function providerModel(name: Exclude<ProviderName, "openai">, requested: string | undefined, env: NodeJS.ProcessEnv): Promise<Provider> {
  if (requested !== undefined && !MODEL_NAME.test(requested)) {
    throw new UsageError(`--model "${requested}" is not a model name. Use a name like ${DEFAULT_MODELS[name]}.`);
  }
  const model = requested ?? DEFAULT_MODELS[name];
  const urlFrom = (variable: string, fallback: string): string => {
    const value = env[variable]?.trim();
    if (!value) return fallback;
    const url = value.replace(/\/+$/, "");
    if (!isHttpURL(url))
      throw new UsageError(`${variable} must be an http:// or https:// URL such as ${fallback}; got ${quoteInput(maskCredentials(value), 80)}.`);
    if (hasCredentials(url))
      throw new UsageError(`${variable} must not contain a user or password (got ${quoteInput(maskCredentials(url), 80)}): Node's fetch refuses such URLs.`);
    return url;
  };
  const provider = (llm: ToolCallLLM, baseURL: string): Provider => ({ llm, kind: name, label: `${model} on ${NAMES[name]} at ${baseURL}`, baseURL, model });
  if (name === "anthropic") {
    const apiKey = env.ANTHROPIC_API_KEY?.trim();
    if (!apiKey)
      throw new UsageError("--provider anthropic needs ANTHROPIC_API_KEY (create a key in the Anthropic Console); ANTHROPIC_BASE_URL sets another server.");
    checkHeaderValue("ANTHROPIC_API_KEY", apiKey);
    const baseURL = urlFrom("ANTHROPIC_BASE_URL", "https://api.anthropic.com");
    const { Anthropic } = await import("../llm/anthropic.ts");
    return provider(new Anthropic({ model, apiKey, baseURL, maxRetries: 1 }), baseURL);
  }
  if (name === "gemini") {
    const variable = env.GEMINI_API_KEY?.trim() ? "GEMINI_API_KEY" : "GOOGLE_API_KEY";
    const apiKey = env[variable]?.trim();
    if (!apiKey)
      throw new UsageError(
        "--provider gemini needs GEMINI_API_KEY (or GOOGLE_API_KEY): create a key in Google AI Studio. GOOGLE_GEMINI_BASE_URL sets another server.",
      );
    checkHeaderValue(variable, apiKey);
    const baseURL = urlFrom("GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com");
    const { Gemini } = await import("../llm/gemini.ts");
    return provider(new Gemini({ model, apiKey, baseURL }), baseURL);
  }
  // Ollama's own OLLAMA_HOST may leave out the scheme ("127.0.0.1:11434"), and means http then.
  const ollamaHost = env.OLLAMA_HOST?.trim();
  if (ollamaHost && !/^[a-z][a-z0-9+.-]*:\/\//i.test(ollamaHost)) env = { ...env, OLLAMA_HOST: `http://${ollamaHost}` };
  const host = urlFrom("OLLAMA_HOST", "http://127.0.0.1:11434");
  const apiKey = env.OLLAMA_API_KEY?.trim() || undefined;
  if (apiKey) checkHeaderValue("OLLAMA_API_KEY", apiKey);
  const { Ollama } = await import("../llm/ollama.ts");
  return provider(new Ollama({ model, host, ...(apiKey ? { apiKey } : {}) }), host);
}

/** Variables whose values the OpenAI client sends as HTTP headers (the SDK reads the last two itself). */
const HEADER_VARIABLES = ["OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"] as const;

/** A header value fetch cannot send fails here, naming the variable and the character, never the value (a secret). */
function checkHeaderValue(name: string, value: string | undefined): void {
  const problem = value === undefined ? undefined : headerValueProblem(value);
  if (problem) throw new UsageError(`${name} has a character that cannot be sent in an HTTP header (${problem}). ${COPY_AGAIN}`);
}

function hasCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== "" || parsed.password !== "";
  } catch {
    return false;
  }
}

function isHttpURL(text: string): boolean {
  try {
    const { protocol } = new URL(text);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}
