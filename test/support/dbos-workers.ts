/** Worker processes for the durable-run tests: started, waited for, killed, and never left behind. */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";

const CHILD = join(import.meta.dirname, "dbos-worker-child.ts");
const live = new Set<ChildProcess>();

/** A running worker: its process, and what it printed to stderr (for a failure's message). */
export interface WorkerProcess {
  readonly proc: ChildProcess;
  readonly stderr: () => string;
  /** What it printed to stdout so far. */
  readonly stdout: () => string;
  /** Kills it with SIGKILL (no cleanup of any kind) and resolves once it is gone. */
  kill(): Promise<void>;
  /** Asks it to stop (SIGTERM: DBOS shuts down) and resolves with its exit code. */
  stop(): Promise<number | null>;
  /** Resolves with the first line it prints that starts with `prefix`, now or later. */
  printed(prefix: string): Promise<string>;
}

/**
 * Starts `dbos-worker-child.ts` (or the worker script `child`) with `args` and resolves once it prints "ready".
 * @example const worker = await startWorker([db.url, "w1", hr.baseURL, gates.baseURL]);
 */
export function startWorker(args: string[], child = CHILD): Promise<WorkerProcess> {
  const proc = spawn(process.execPath, ["--import", "tsx", child, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  live.add(proc);
  let err = "";
  let out = "";
  const watchers: { prefix: string; resolve: (line: string) => void }[] = [];
  const look = () => {
    for (const watcher of [...watchers]) {
      const line = out.split("\n").find((l, i, all) => i < all.length - 1 && l.startsWith(watcher.prefix));
      if (line === undefined) continue;
      watchers.splice(watchers.indexOf(watcher), 1);
      watcher.resolve(line);
    }
  };
  proc.stdout?.on("data", (d: Buffer) => {
    out += String(d);
    look();
  });
  proc.stderr?.on("data", (d: Buffer) => (err += String(d)));
  const exited = new Promise<number | null>((resolve) =>
    proc.on("exit", (code) => {
      live.delete(proc);
      resolve(code);
    }),
  );
  const worker: WorkerProcess = {
    proc,
    stderr: () => err,
    stdout: () => out,
    kill: async () => {
      proc.kill("SIGKILL");
      await exited;
    },
    stop: async () => {
      proc.kill("SIGTERM");
      return exited;
    },
    printed: (prefix) =>
      new Promise((resolve) => {
        watchers.push({ prefix, resolve });
        look();
      }),
  };
  return new Promise((resolve, reject) => {
    void worker.printed("ready").then(() => resolve(worker));
    void exited.then((code) => reject(new Error(`worker exited with ${code} before it was ready:\n${err}`)));
  });
}

/** Kills every worker still running (a test that failed half-way leaves none behind). */
export async function killAllWorkers(): Promise<void> {
  await Promise.all(
    [...live].map(
      (proc) =>
        new Promise<void>((resolve) => {
          proc.once("exit", () => resolve());
          proc.kill("SIGKILL");
        }),
    ),
  );
}
