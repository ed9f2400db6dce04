/**
 * Runs the CLI as a child process from the repository root, with a clean environment (PATH,
 * HOME, NO_COLOR and what the test gives), stdin written and closed: the sources
 * (src/cli/main.ts), or with STEPFLOW_TEST_CLI=build (`npm run test:slow` sets it, after
 * building) the bundled command users install (test/support/built-cli.mjs), so that a
 * difference between the two fails a test.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { REPO } from "./run-typescript.ts";

const CLI =
  process.env.STEPFLOW_TEST_CLI === "build" ? [join(REPO, "test", "support", "built-cli.mjs")] : ["--import", "tsx", join(REPO, "src", "cli", "main.ts")];

/** What the CLI printed, and its exit code. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * @example const { code, stdout } = await runCli(["What is 2 + 2?"]);
 */
export function runCli(args: string[], options: { env?: Record<string, string>; stdin?: string; closeStdout?: boolean } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", ...options.env },
      cwd: REPO,
    });
    let stdout = "";
    let stderr = "";
    // The reading end closed at once, as `| true` does.
    if (options.closeStdout) child.stdout.destroy();
    else child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}
