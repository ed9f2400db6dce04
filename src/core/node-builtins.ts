/**
 * Node's built-in modules that `import("stepflow")` needs only later, loaded on first use.
 *
 * An ESM `import { … } from "node:fs"` (or `"node:crypto"`) at the top of a module makes Node
 * build that module's ESM facade when stepflow is imported, and the facade reads every export:
 * `node:fs` loads its streams, `node:crypto` loads crypto itself and WebCrypto. Together that was
 * about 15 ms of the ~75 ms `import("stepflow")` took (docs/benchmarks.md). A `require` of the
 * same module builds no facade, and runs only when something needs it (a resumed run's
 * execution ids, a configuration file).
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** `node:fs`, loaded on first call. @example `const text = nodeFs().readFileSync("config.json", "utf8");` */
export function nodeFs(): typeof import("node:fs") {
  return require("node:fs") as typeof import("node:fs");
}

/** `node:crypto`, loaded on first call. */
function nodeCrypto(): typeof import("node:crypto") {
  return require("node:crypto") as typeof import("node:crypto");
}

/** 16 URL-safe characters of `text`'s SHA-256: the same text, the same id. @example `shortHash("run-1>step") // "JQnmik_QFJOVY8MK"` */
export function shortHash(text: string): string {
  return nodeCrypto().createHash("sha256").update(text).digest("base64url").slice(0, 16);
}
