/**
 * The SQLite worker thread (src/sqlite-thread/) as the session store opens it: a missing
 * `@libsql/client` is a `SessionDriverMissingError`, and a worker that stopped fails the calls
 * with `SqliteThreadError`.
 */
import type { Config } from "@libsql/client";
import { SqliteThread as Thread } from "../sqlite-thread/sqlite-thread.ts";
import type { SqliteThreadSetup } from "../sqlite-thread/sqlite-thread.ts";
import { loadDriver, resolveDriver } from "./load-driver.ts";
import { SqliteThreadError } from "./types.ts";

/** The session store's terms for its SQLite thread. */
const SESSION_STORE: SqliteThreadSetup = {
  driverURL: () => resolveDriver("@libsql/client", "SQLite"),
  loadDriver: () => loadDriver("@libsql/client", "SQLite"),
  stopped: (description, exitCode, options) => new SqliteThreadError(description, exitCode, options),
};

/** A `@libsql/client` `Client` for a local file whose statements run in a worker thread. */
export type SqliteThread = Thread;

/**
 * Opens a session store's SQLite file in a worker thread.
 * @example
 * const db = await SqliteThread.open({ url: "file:chat.db", timeout: 5000 }, "SQLite chat.db");
 */
export const SqliteThread = {
  open: (config: Config, description: string): Promise<Thread> => Thread.open(config, description, SESSION_STORE),
};
