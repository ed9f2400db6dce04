/**
 * Runs a TypeScript file as a user of the package would (`node --import tsx file.ts`) from the
 * repository root, so `import … from "stepflow"` resolves through the package's own exports.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";

export const REPO = join(import.meta.dirname, "..", "..");

/** The variables that choose and reach a model or a database: a program run gets only those its caller gives it. */
const PROVIDER_VARIABLES = [
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "GOOGLE_GEMINI_BASE_URL",
  "GOOGLE_GENAI_USE_VERTEXAI",
  "OLLAMA_HOST",
  "OLLAMA_API_KEY",
  "DATABASE_URL",
];

/** What a run printed and how it ended. */
export interface ProgramRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * @example
 * const { code, stdout } = await runTypeScript("examples/minimal-workflow.ts");
 */
export function runTypeScript(file: string, timeoutMs = 60_000, given: Record<string, string> = {}): Promise<ProgramRun> {
  // No model keys or server URLs from the developer's shell: every program must run offline,
  // with only what the caller gives it (a database of its own).
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const name of PROVIDER_VARIABLES) delete env[name];
  Object.assign(env, given);
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", file], { cwd: REPO, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
