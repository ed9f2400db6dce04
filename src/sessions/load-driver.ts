/**
 * Loads a session store's database driver when the store is opened, not when stepflow is
 * imported: `@libsql/client` and `pg` are optional peer dependencies, so an application that
 * keeps sessions in memory (or in only one of the two databases) installs neither or one.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { SessionDriverMissingError } from "./types.ts";

/** The drivers, by package name. */
interface Drivers {
  "@libsql/client": typeof import("@libsql/client");
  pg: typeof import("pg");
}

/**
 * Imports the driver `packageName`; if it is not installed, a `SessionDriverMissingError` says
 * which package to install. The name is a variable on purpose: a bundler then leaves the import
 * to run time instead of failing the build of an application that did not install it.
 * @example
 * const { createClient } = await loadDriver("@libsql/client", "SQLite");
 */
export async function loadDriver<K extends keyof Drivers>(packageName: K, database: string): Promise<Drivers[K]> {
  try {
    return (await import(/* @vite-ignore */ packageName)) as Drivers[K];
  } catch (error) {
    throw missing(error, packageName, database);
  }
}

/**
 * Where the driver `packageName` is (its module URL), without loading it: for a worker thread
 * that loads it there. `SessionDriverMissingError` if it is not installed.
 * @example
 * const url = resolveDriver("@libsql/client", "SQLite"); // file:///app/node_modules/@libsql/client/lib-esm/node.js
 */
export function resolveDriver(packageName: keyof Drivers, database: string): string {
  try {
    if (typeof import.meta.resolve === "function") return import.meta.resolve(packageName);
    // Hosts that compile modules to CommonJS (tslab's notebooks, Jest) have no import.meta.resolve.
    const from = typeof import.meta.url === "string" ? import.meta.url : pathToFileURL(join(process.cwd(), "index.js")).href;
    return pathToFileURL(createRequire(from).resolve(packageName)).href;
  } catch (error) {
    throw missing(error, packageName, database);
  }
}

function missing(error: unknown, packageName: string, database: string): unknown {
  const { code, message } = error as NodeJS.ErrnoException;
  // Only the package itself missing: a driver that is installed but fails to load (a missing
  // native binary, say) keeps its own error.
  if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && message.includes(`'${packageName}'`)) {
    return new SessionDriverMissingError(
      `The ${database} session store needs the package ${packageName}, which is not installed. Install it next to stepflow: npm install ${packageName}`,
      packageName,
    );
  }
  return error;
}
