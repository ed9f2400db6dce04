/**
 * The CLI on DBOS: `stepflow worker` takes questions that `stepflow --runtime dbos` puts on
 * the queue, and both say what is missing when PostgreSQL is not there.
 */
import { spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freshDatabase } from "../support/postgres-database.ts";

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts");
const DATABASE_URL = process.env.DATABASE_URL;
const children = new Set<ChildProcessWithoutNullStreams>();

function start(args: string[], env: Record<string, string> = {}): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", ...env },
    cwd: join(import.meta.dirname, "..", ".."),
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  child.stdin.end();
  return child;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = start(args, env);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d));
  child.stderr.on("data", (d: Buffer) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

afterEach(() => {
  for (const child of children) child.kill("SIGKILL");
});

describe("stepflow --runtime dbos and stepflow worker", { timeout: 180_000 }, () => {
  it("say that PostgreSQL is needed, and how to give it, when no database is given", async () => {
    const asked = await cli(["--runtime", "dbos", "What is 2 + 2?"]);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain("--runtime dbos needs PostgreSQL: pass --database postgres://");
    const worker = await cli(["worker"]);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain("worker needs PostgreSQL: pass --database postgres://");
  });

  it("name the database they cannot reach, without its password, and what to do", async () => {
    const url = "postgres://stepflow:hunter2@127.0.0.1:1/stepflow";
    for (const args of [
      ["--runtime", "dbos", "--database", url, "What is 2 + 2?"],
      ["worker", "--database", url],
    ]) {
      const { code, stderr } = await cli(args);
      expect(code).toBe(1);
      expect(stderr).toContain("Cannot use PostgreSQL at postgres://stepflow:***@127.0.0.1:1/stepflow for durable runs: connect ECONNREFUSED");
      expect(stderr).toContain("Start PostgreSQL there, or pass the URL of one that runs");
      expect(stderr).not.toContain("hunter2");
    }
  });

  it("worker says what --takeover-after takes", async () => {
    const { code, stderr } = await cli(["worker", "--database", "postgres://127.0.0.1:1/none", "--takeover-after", "soon"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--takeover-after");
    expect(stderr).toContain("or off, to never take over");
  });

  it.skipIf(!DATABASE_URL)("worker --recover takes a dead worker's runs over once started, and says how many", async () => {
    const db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_cli_recover");
    try {
      const worker = start(["worker", "--database", db.url, "--id", "w2", "--takeover-after", "off", "--recover", "w1"]);
      let workerErr = "";
      await new Promise<void>((resolve, reject) => {
        worker.stderr.on("data", (d: Buffer) => {
          workerErr += d;
          if (workerErr.includes('Recovered worker "w1"')) resolve();
        });
        worker.on("exit", (code) => reject(new Error(`worker exited with ${code}: ${workerErr}`)));
      });
      expect(workerErr).toContain('Recovered worker "w1": no unfinished run back on the queue.');
      const exited = new Promise((resolve) => worker.on("exit", resolve));
      worker.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      await db.drop();
    }
  });

  it.skipIf(!DATABASE_URL)("answers a question on a worker in another process, then the worker stops on SIGTERM", async () => {
    const db = await freshDatabase(DATABASE_URL as string, "stepflow_dbos_cli");
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
      const { code, stdout, stderr } = await cli(["--runtime", "dbos", "What is (2123 + 2321) * 312?"], { DATABASE_URL: db.url });
      expect(code).toBe(0);
      expect(stdout.trim()).toBe("(2123 + 2321) * 312 = 1386528");
      expect(stderr).toContain('multiply({"x":4444,"y":312}) → 1386528');
      const exited = new Promise((resolve) => worker.on("exit", resolve));
      worker.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      await db.drop();
    }
  });
});
