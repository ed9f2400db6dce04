/**
 * `stepflow --runtime dbos --session NAME`: each message is the session's next turn, run by a
 * `stepflow worker` in another process, the session kept in the workers' PostgreSQL across
 * invocations, where `stepflow sessions show` reads it.
 */
import { spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freshDatabase } from "../support/postgres-database.ts";

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts");
const DATABASE_URL = process.env.DATABASE_URL;
const children = new Set<ChildProcessWithoutNullStreams>();

function start(args: string[], env: Record<string, string> = {}, stdin = ""): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", ...env },
    cwd: join(import.meta.dirname, "..", ".."),
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  child.stdin.end(stdin);
  return child;
}

function cli(args: string[], env: Record<string, string> = {}, stdin = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = start(args, env, stdin);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d));
  child.stderr.on("data", (d: Buffer) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

afterEach(() => {
  for (const child of children) child.kill("SIGKILL");
});

describe("stepflow --runtime dbos --session", { timeout: 120_000 }, () => {
  it("says what does not go with it", async () => {
    const noQuestion = await cli(["--runtime", "dbos", "--database", "postgres://localhost/x"]);
    expect(noQuestion.code).toBe(2);
    expect(noQuestion.stderr).toContain("--runtime dbos asks one question, or chats in a stored session");
    const store = await cli(["--runtime", "dbos", "--database", "postgres://localhost/x", "--session", "s", "--store", "memory:"]);
    expect(store.code).toBe(2);
    expect(store.stderr).toContain("--store does not go with --runtime dbos: the session is kept in the workers' PostgreSQL (--database).");
  });

  it("names the database it cannot reach, without its password", async () => {
    const { code, stderr } = await cli(["--runtime", "dbos", "--database", "postgres://stepflow:hunter2@127.0.0.1:1/stepflow", "--session", "s", "Hi"]);
    expect(code).toBe(1);
    expect(stderr).toContain("Cannot use PostgreSQL at postgres://stepflow:***@127.0.0.1:1/stepflow for durable runs: connect ECONNREFUSED");
    expect(stderr).not.toContain("hunter2");
  });

  it.skipIf(!DATABASE_URL)("continues a session across invocations, each turn on the worker", async () => {
    const db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_cli_sessions");
    try {
      const worker = start(["worker", "--database", db.url, "--id", "cli-worker"]);
      let workerErr = "";
      await new Promise<void>((resolve, reject) => {
        worker.stderr.on("data", (d: Buffer) => {
          workerErr += d;
          if (workerErr.includes("takes runs from")) resolve();
        });
        worker.on("exit", (code) => reject(new Error(`worker exited with ${code}: ${workerErr}`)));
      });
      const env = { DATABASE_URL: db.url };
      const chatted = await cli(["--runtime", "dbos", "--session", "logan"], env, "My name is Logan.\n");
      expect(chatted.code).toBe(0);
      expect(chatted.stdout.trim()).toBe("Nice to meet you, Logan!");
      expect(chatted.stderr).toMatch(/Turn \S+ of session "logan" is on the queue of postgres:\/\/[^ ]+; a worker \(stepflow worker\) takes it\./);

      const asked = await cli(["--runtime", "dbos", "--session", "logan", "--json", "What is my name?"], env);
      expect(asked.code).toBe(0);
      expect((JSON.parse(asked.stdout) as { response: { content: string } }).response.content).toBe("Your name is Logan.");

      const shown = await cli(["sessions", "show", "logan", "--store", db.url]);
      expect(shown.code).toBe(0);
      expect(shown.stdout.split("\n").map((line) => line.replace(/^\S+\s+/, ""))).toEqual([
        "user: My name is Logan.",
        "assistant: Nice to meet you, Logan!",
        "user: What is my name?",
        "assistant: Your name is Logan.",
        "",
      ]);
      // /reset deletes the stored session: the next turn starts a new one.
      const reset = await cli(["--runtime", "dbos", "--session", "logan"], env, "/reset\nWhat is my name?\n");
      expect(reset.code).toBe(0);
      expect(reset.stderr).toContain('Started a new conversation (deleted the stored session "logan").');
      expect(reset.stdout.trim()).toBe("You haven't told me your name yet.");
      const exited = new Promise((resolve) => worker.on("exit", resolve));
      worker.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      await db.drop();
    }
  });
});
