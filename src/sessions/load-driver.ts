/**
 * Loads a session store's database driver when the store is opened, not when stepflow is
 * imported: `@libsql/client` and `pg` are optional peer dependencies, so an application that
 * keeps sessions in memory (or in only one of the two databases) installs neither or one.
 */
import { SessionDriverMissingError } from "./types.ts";

/**
 * Imports `packageName` through `load` (a literal `import("…")`, which bundlers can follow); if
 * the package is not installed, a `SessionDriverMissingError` says which one to install.
 * @example
 * const { createClient } = await loadDriver("@libsql/client", "SQLite", () => import("@libsql/client"));
 */
export async function loadDriver<T>(packageName: "@libsql/client" | "pg", database: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
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
