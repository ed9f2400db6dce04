/**
 * `node --import tsx --import ./bench/use-build.mjs …`: every import of the project's sources
 * (src/, events/, workflows/ `.ts` files) loads the file `npm run build` compiled from it instead
 * (in .build/modules/: the package's dist/ holds them bundled, which a benchmark importing one
 * module at a time cannot use), so the benchmarks measure the code users run.
 * `npm run bench -- --dist …` uses it.
 */
import { register } from "node:module";

register(
  `data:text/javascript,${encodeURIComponent(`
const root = ${JSON.stringify(new URL("../", import.meta.url).href)};
const source = new RegExp("^" + root.replace(/[.*+?^$()|[\\]\\\\{}]/g, "\\\\$&") + "(src|events|workflows)/(.*)\\\\.ts$");
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const match = source.exec(resolved.url);
  return match ? { ...resolved, url: root + ".build/modules/" + match[1] + "/" + match[2] + ".js", format: "module" } : resolved;
}`)}`,
);
