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

/** Node's one-shot `crypto.hash` (Node 20.12 and later). */
type OneShotHash = (algorithm: string, data: string, encoding: "base64url") => string;

/** 16 URL-safe characters of `text`'s SHA-256: the same text, the same id. @example `shortHash("run-1>step") // "JQnmik_QFJOVY8MK"` */
export function shortHash(text: string): string {
  // Every execution of a restored or saved run gets its id from here: `crypto.hash` makes no Hash
  // object, and costs a third of createHash's chain (docs/benchmarks.md), where Node has it.
  const crypto = nodeCrypto() as typeof import("node:crypto") & { hash?: OneShotHash };
  return (crypto.hash ? crypto.hash("sha256", text, "base64url") : crypto.createHash("sha256").update(text).digest("base64url")).slice(0, 16);
}
