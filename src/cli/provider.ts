/**
 * Which LLM the CLI talks to: OpenAI when OPENAI_API_KEY is set, any OpenAI-compatible server
 * when OPENAI_BASE_URL is set, else the offline demo model. `--llm` forces a choice.
 */
import type { ToolCallLLM } from "@llamaindex/core/llms";
import { OfflineDemoLLM } from "../llm/offline-model.ts";
import { OpenAI } from "../llm/openai.ts";
import { COPY_AGAIN, headerValueProblem } from "../llm/header-value.ts";
import { maskCredentials, quoteInput } from "../core/internal.ts";
import { UsageError } from "./errors.ts";

/** The chosen model and how to describe it to the user (never with the key). */
export interface Provider {
  readonly llm: ToolCallLLM;
  readonly kind: "offline" | "openai";
  /** e.g. `gpt-4o-mini at https://api.openai.com/v1` */
  readonly label: string;
  /** As configured (never with credentials: those are refused). */
  readonly baseURL: string;
  readonly model: string;
}

/** Flags and environment the choice depends on. */
export interface ProviderRequest {
  readonly llm?: string;
  readonly model?: string;
  readonly env: NodeJS.ProcessEnv;
}

const DEFAULT_MODEL = "gpt-4o-mini";
const OPENAI_URL = "https://api.openai.com/v1";
// Model names of OpenAI, Ollama ("llama3.1:8b"), vLLM ("meta-llama/Llama-3.1-8B-Instruct"), LM Studio.
const MODEL_NAME = /^[\w][\w.:/@+-]{0,199}$/;

/**
 * Picks the LLM; throws `UsageError` (exit code 2) for a choice that cannot work.
 * @example
 * const { llm, label } = chooseProvider({ model: "gpt-4o", env: process.env });
 */
export function chooseProvider(request: ProviderRequest): Provider {
  const { env } = request;
  if (env.OPENAI_BASE_URL !== undefined && env.OPENAI_BASE_URL !== "" && env.OPENAI_BASE_URL.trim() === "") {
    // Set to spaces (a stray `export OPENAI_BASE_URL=" "`): the user meant a server, not the offline model.
    throw new UsageError(
      `OPENAI_BASE_URL is set but blank (${quoteInput(env.OPENAI_BASE_URL)}). Set it to the server's URL, such as http://localhost:11434/v1, or unset it.`,
    );
  }
  const key = env.OPENAI_API_KEY?.trim() || undefined;
  const baseURL = env.OPENAI_BASE_URL?.trim() || undefined;
  const choice = request.llm ?? (key || baseURL ? "openai" : "offline");
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
  const llm = new OpenAI({ model, apiKey: key ?? "no-key", baseURL: url, maxRetries: 1 });
  return { llm, kind: "openai", label: `${model} at ${url}`, baseURL: url, model };
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
