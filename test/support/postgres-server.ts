/**
 * A PostgreSQL server of a test's (or the chaos script's) own, on 127.0.0.1, that it may stop
 * and start again — a database restart — without disturbing the other tests' server. Its data
 * directory is kept across restarts and removed by `close`. Needs PostgreSQL's binaries
 * (Debian's `postgresql` package, which `.ci/postgres.sh` installs); as root, the server runs as
 * the `postgres` user, as initdb refuses root.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PostgresServer {
  /** postgres://stepflow@127.0.0.1:PORT/postgres */
  readonly url: string;
  /** Stops the server (fast shutdown: every connection is cut, as in a restart or a failover); the data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

/** The newest PostgreSQL's bin directory on this machine, or undefined. @example postgresBin() // "/usr/lib/postgresql/15/bin" */
export function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? undefined : join(root, newest, "bin");
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Makes a new cluster and starts it, on `port` (default: a free one the system picks).
 * @example
 * const pg = await startPostgresServer();
 * await pg.stop(); await pg.start(); // a restart
 * await pg.close();
 */
export async function startPostgresServer(port?: number): Promise<PostgresServer> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL's binaries are not installed (/usr/lib/postgresql/*/bin): apt-get install postgresql, or run .ci/postgres.sh.");
  const data = mkdtempSync(join(tmpdir(), "stepflow-pg-own."));
  const root = process.getuid?.() === 0;
  const as = (command: string, args: string[]) => (root ? run("runuser", ["-u", "postgres", "--", command, ...args]) : run(command, args));
  if (root) await run("chown", ["postgres:", data]);
  await as(join(bin, "initdb"), ["-D", data, "-U", "stepflow", "-A", "trust", "--no-sync"]);
  port ??= await freePort();
  const pgCtl = join(bin, "pg_ctl");
  const start = async () => {
    await as(pgCtl, ["-D", data, "-l", join(data, "server.log"), "-w", "-t", "60", "-o", `-h 127.0.0.1 -p ${port} -k ${data} -c fsync=off`, "start"]);
  };
  const stop = async () => {
    await as(pgCtl, ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
  };
  await start();
  let running = true;
  return {
    url: `postgres://stepflow@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await stop();
      running = false;
    },
    start: async () => {
      await start();
      running = true;
    },
    close: async () => {
      if (running) await stop().catch(() => undefined);
      rmSync(data, { recursive: true, force: true });
    },
  };
}
