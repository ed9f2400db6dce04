/** The version of the installed stepflow package, for `stepflow --version`. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Reads `version` from stepflow's own package.json, the nearest one above this module: the
 * module runs from the sources (src/cli) as well as from the build (dist/src/cli), at different
 * depths below it.
 * @example packageVersion() // "0.1.0"
 */
export function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const json = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (json.name === "stepflow" && json.version) return json.version;
    }
    if (dirname(dir) === dir) return "unknown";
  }
}
