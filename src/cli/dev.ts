/**
 * `stepflow dev <module>`: `stepflow serve <module>` in a child process, started again whenever
 * a source file next to the module changes. A fresh process is the one reload that always
 * works: an ES module cannot be unloaded, and the files it imports would stay cached. The
 * server keeps its runs in its store, so a run waiting for an answer is still waiting after
 * the restart, and the page's event streams resume.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, watch } from "node:fs";
import type { FSWatcher } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { dirname, relative, resolve } from "node:path";
import { UsageError } from "./errors.ts";
import type { Terminal } from "./render.ts";
import { untilSignal } from "./serve.ts";
import type { ServeOptions } from "./serve.ts";

/** Files whose change restarts the server. */
const SOURCE = /\.(?:[cm]?[jt]sx?|json)$/;
/** Folders never watched: dependencies, stores, build output, version control. */
const IGNORED = /(?:^|[\\/])(?:node_modules|\.stepflow|\.git|dist)(?:[\\/]|$)/;
/** Changes closer together than this (an editor's save writes several times) restart once. */
const SETTLE_MS = 150;

/** How to start this CLI again: node, its flags (a TypeScript loader in a clone), the script. */
export interface SelfCommand {
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly script: string;
}

/**
 * Serves `modulePath` until a signal, restarting on changes; resolves with the exit code.
 * @example process.exitCode = await dev("./flows.ts", { port: "8787" }, term, { execPath: process.execPath, execArgv: process.execArgv, script: process.argv[1] });
 */
export async function dev(
  modulePath: string,
  options: Omit<ServeOptions, "module" | "hrDemo">,
  term: Terminal,
  self: SelfCommand,
  signals: NodeJS.EventEmitter = process,
): Promise<number> {
  const file = resolve(modulePath);
  if (!existsSync(file))
    throw new UsageError(`There is no file ${modulePath} (looked for ${file}). Give the path of a .ts or .js module that exports your workflows.`);
  const port = options.port === undefined ? 8787 : options.port === "0" ? await freePort(options.host) : Number(options.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new UsageError(`--port takes a port number from 0 to 65535 (0: any free port); got ${JSON.stringify(options.port)}.`);
  const args = [
    "serve",
    file,
    "--port",
    String(port),
    ...flag("--host", options.host),
    ...flag("--store", options.store),
    ...flag("--token", options.token),
    ...flag("--web", options.web),
    ...(options.cors && options.cors.length > 0 ? ["--cors", ...options.cors] : []),
  ];
  const folder = dirname(file);
  let child: ChildProcess | undefined;
  let stopping = false;
  const start = () => {
    const started = spawn(self.execPath, [...self.execArgv, self.script, ...args], { stdio: ["ignore", "inherit", "inherit"] });
    child = started;
    started.on("exit", (code, signal) => {
      if (child === started) child = undefined;
      if (!stopping && signal === null && code !== 0)
        term.err.write(term.colors.dim(`Waiting for a change in ${relative(process.cwd(), folder) || "."} to start again.\n`));
    });
  };
  const stopChild = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((done) => running.once("exit", done));
    running.kill("SIGTERM");
    await exited;
  };
  let restarting: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const watcher: FSWatcher = watch(folder, { recursive: true }, (_event, name) => {
    if (stopping || !name || !SOURCE.test(name) || IGNORED.test(name)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      restarting = restarting.then(async () => {
        if (stopping) return;
        term.err.write(term.colors.dim(`${name} changed: restarting the server.\n`));
        await stopChild();
        if (!stopping) start();
      });
    }, SETTLE_MS);
  });
  term.err.write(term.colors.dim(`Watching ${relative(process.cwd(), folder) || "."} for changes (Ctrl-C stops).\n`));
  start();
  await untilSignal(signals);
  stopping = true;
  clearTimeout(timer);
  watcher.close();
  await restarting;
  await stopChild();
  return 0;
}

function flag(name: string, value: string | undefined): string[] {
  return value === undefined ? [] : [name, value];
}

/** A port free now, so that every restart listens on the same one. */
function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, host, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => done(port));
    });
  });
}
