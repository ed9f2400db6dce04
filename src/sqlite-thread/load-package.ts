/**
 * Loads an optional peer dependency (a database driver) when a store is opened, not when
 * stepflow is imported: `@libsql/client` and `pg` are optional, so an application that keeps
 * its sessions and journal in memory (or in only one of the two databases) installs neither or
 * one. The store that asks says what is missing, in its own class of error.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Imports `packageName`; if it is not installed, throws `missing()`. The name is a variable on
 * purpose: a bundler then leaves the import to run time instead of failing the build of an
 * application that did not install it.
 * @example
 * const { createClient } = await loadPackage<typeof import("@libsql/client")>("@libsql/client", () => new Error("npm install @libsql/client"));
 */
export async function loadPackage<T>(packageName: string, missing: () => Error): Promise<T> {
  try {
    return (await import(/* @vite-ignore */ packageName)) as T;
  } catch (error) {
    throw isMissing(error, packageName) ? missing() : error;
  }
}

/**
 * Where `packageName` is (its module URL), without loading it: for a worker thread that loads
 * it there. Throws `missing()` if it is not installed.
 * @example
 * resolvePackage("@libsql/client", () => new Error("npm install @libsql/client")); // file:///app/node_modules/@libsql/client/lib-esm/node.js
 */
export function resolvePackage(packageName: string, missing: () => Error): string {
  try {
    if (typeof import.meta.resolve === "function") return import.meta.resolve(packageName);
    // Hosts that compile modules to CommonJS (tslab's notebooks, Jest) have no import.meta.resolve.
    const from = typeof import.meta.url === "string" ? import.meta.url : pathToFileURL(join(process.cwd(), "index.js")).href;
    return pathToFileURL(createRequire(from).resolve(packageName)).href;
  } catch (error) {
    throw isMissing(error, packageName) ? missing() : error;
  }
}

/** Only the package itself missing: a driver that is installed but fails to load (a missing native binary, say) keeps its own error. */
function isMissing(error: unknown, packageName: string): boolean {
  const { code, message } = error as NodeJS.ErrnoException;
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && typeof message === "string" && message.includes(`'${packageName}'`);
}
