/**
 * Loads a session store's database driver when the store is opened, not when stepflow is
 * imported: `@libsql/client` and `pg` are optional peer dependencies, so an application that
 * keeps sessions in memory (or in only one of the two databases) installs neither or one.
 */
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
    const { code, message } = error as NodeJS.ErrnoException;
    // Only the package itself missing: a driver that is installed but fails to load (a missing
    // native binary, say) keeps its own error.
    if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && message.includes(`'${packageName}'`)) {
      throw new SessionDriverMissingError(`The ${database} session store needs the package ${packageName}, which is not installed. Install it next to stepflow: npm install ${packageName}`, packageName);
    }
    throw error;
  }
}
