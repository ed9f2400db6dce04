/**
 * A folder set up as a user's project: their workflows module (test/fixtures/user-flows.ts)
 * and a node_modules where `stepflow` is this repository (its built dist/) and `zod` is ours,
 * so `stepflow dev ./flows.ts` runs there as it would after `npm install stepflow zod`.
 */
import { spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { copyFile, mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO } from "./run-typescript.ts";

/** The installed command: bin/stepflow.js runs dist/ (`npm run build` writes it; `npm run test:all` builds first). */
export const STEPFLOW_BIN = join(REPO, "bin", "stepflow.js");

/** Makes the project; resolves with its folder (flows.ts in it). */
export async function userProject(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "stepflow-user-"));
  await mkdir(join(dir, "node_modules"));
  await symlink(REPO, join(dir, "node_modules", "stepflow"), "dir");
  await symlink(join(REPO, "node_modules", "zod"), join(dir, "node_modules", "zod"), "dir");
  await copyFile(join(REPO, "test", "fixtures", "user-flows.ts"), join(dir, "flows.ts"));
  // The starter package.json of docs/your-workflows.md: an ES module package.
  await writeFile(join(dir, "package.json"), `${JSON.stringify({ name: "my-flows", private: true, type: "module" }, null, 2)}\n`);
  return dir;
}

/** The environment of a user without keys: the offline model, no colour. */
export function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "STEPFLOW_SERVER_TOKEN", "DATABASE_URL"]) delete env[name];
  return env;
}

/** A running `stepflow …` in `dir`, its stdout read line by line and its stderr kept. */
export interface RunningCommand {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves with the next stdout line matching `pattern` (rejects if the process exits first). */
  line(pattern: RegExp): Promise<string>;
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `stepflow ...args` in `dir` (this repository's command, or the `bin` given: an installed one). */
export function startCommand(dir: string, args: string[], bin = STEPFLOW_BIN): RunningCommand {
  const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env: userEnv() });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const lines: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    const i = waiting.findIndex((w) => w.pattern.test(line));
    if (i >= 0) waiting.splice(i, 1)[0]?.resolve(line);
    else lines.push(line);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    line(pattern) {
      const seen = lines.findIndex((l) => pattern.test(l));
      if (seen >= 0) return Promise.resolve(lines.splice(seen, 1)[0] as string);
      return Promise.race([
        new Promise<string>((resolve) => waiting.push({ pattern, resolve })),
        exited.then((code) => Promise.reject(new Error(`stepflow ${args.join(" ")} exited (${code}) first; stderr:\n${stderr}`))),
      ]);
    },
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
