/**
 * The code of the SQLite worker thread (sqlite-worker.js), as text. The worker starts from it
 * (a `data:` URL), not from a file beside this module: an application bundled by esbuild or
 * vite has no such file, and starting from the text costs the same (measured: a store opened
 * in 1017 ms from the text, 1019 ms from the file, medians of 30 on a loaded 2-core machine).
 *
 * From the sources the text is read from sqlite-worker.js; `npm run build` writes this module
 * into dist/ with the text inlined (scripts/build.mjs), so a bundler carries it along.
 */
import { readFileSync } from "node:fs";

let source: string | undefined;

/**
 * The worker's JavaScript (an ES module).
 * @example
 * new Worker(new URL(`data:text/javascript;base64,${Buffer.from(sqliteWorkerSource()).toString("base64")}`));
 */
export function sqliteWorkerSource(): string {
  return (source ??= readFileSync(new URL("./sqlite-worker.js", import.meta.url), "utf8"));
}
