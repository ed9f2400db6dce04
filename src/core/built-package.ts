/**
 * Where the installed stepflow package keeps its files, asked by the modules that find files
 * relative to themselves (the web page's folder, which stack frames are the engine's).
 *
 * `npm run build` bundles the package's entry points, so one of these modules runs from an
 * entry (dist/src/server/index.js) or a shared chunk (dist/src/chunks/chunk-….js), not from a
 * file named after it; and inside an application's own bundle it runs from the application's
 * file. A module is the package's when it is a `.js` file two folders below a `dist/` folder
 * that sits beside a package.json named `stepflow`.
 */
import { basename, dirname, join, resolve } from "node:path";
import { nodeFs } from "./node-builtins.ts";

/**
 * The built package's `dist/` folder, when `moduleFile` is one of its modules; otherwise
 * undefined (the sources, run by tsx, or an application's bundle).
 * @example builtPackageDist("/app/node_modules/stepflow/dist/src/chunks/chunk-AB12.js") // "/app/node_modules/stepflow/dist"
 */
export function builtPackageDist(moduleFile: string): string | undefined {
  const dist = resolve(dirname(moduleFile), "..", "..");
  if (!moduleFile.endsWith(".js") || basename(dist) !== "dist") return undefined;
  try {
    const manifest = JSON.parse(nodeFs().readFileSync(join(dist, "..", "package.json"), "utf8")) as { name?: unknown };
    return manifest.name === "stepflow" ? dist : undefined;
  } catch {
    return undefined;
  }
}
