/**
 * Loads a session store's database driver when the store is opened (see
 * src/sqlite-thread/load-package.ts), with a `SessionDriverMissingError` naming the package to
 * install when it is not.
 */
import { loadPackage, resolvePackage } from "../sqlite-thread/load-package.ts";
import { SessionDriverMissingError } from "./types.ts";

/** The drivers, by package name. */
interface Drivers {
  "@libsql/client": typeof import("@libsql/client");
  pg: typeof import("pg");
}

/**
 * Imports the driver `packageName`; if it is not installed, a `SessionDriverMissingError` says
 * which package to install.
 * @example
 * const { createClient } = await loadDriver("@libsql/client", "SQLite");
 */
export function loadDriver<K extends keyof Drivers>(packageName: K, database: string): Promise<Drivers[K]> {
  return loadPackage<Drivers[K]>(packageName, () => missing(packageName, database));
}

/**
 * Where the driver `packageName` is (its module URL), without loading it: for a worker thread
 * that loads it there. `SessionDriverMissingError` if it is not installed.
 * @example
 * const url = resolveDriver("@libsql/client", "SQLite"); // file:///app/node_modules/@libsql/client/lib-esm/node.js
 */
export function resolveDriver(packageName: keyof Drivers, database: string): string {
  return resolvePackage(packageName, () => missing(packageName, database));
}

function missing(packageName: string, database: string): SessionDriverMissingError {
  return new SessionDriverMissingError(
    `The ${database} session store needs the package ${packageName}, which is not installed. Install it next to stepflow: npm install ${packageName}`,
    packageName,
  );
}
