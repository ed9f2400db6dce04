#!/usr/bin/env node
/**
 * `npm run build`: compiles src/, events/ and workflows/ into dist/ (ESM JavaScript with the
 * `@step` decorators lowered for ES2022, plus .d.ts) with the repository's own TypeScript,
 * bundles the web page (src/web/page/) into dist/web/ and the `stepflow` command into dist/cli/,
 * then bundles the package's entry points (see bundleEntryPoints below).
 *
 * tsc rewrites the sources' `./x.ts` import paths to `./x.js` in the JavaScript but keeps them
 * in the declarations; TypeScript before 5.0, and resolvers that do not map `.ts` to `.d.ts`,
 * then cannot follow them. So the declarations get `.js` paths too.
 *
 * `ContextStore` declares its variance (`out S`) with a `@ts-expect-error` in the source, a
 * comment tsc does not carry into the declaration; an application type-checking our
 * declarations (`skipLibCheck: false`) would then see TS2636. The declaration gets the same
 * note, as `@ts-ignore`, which stays quiet if a later TypeScript accepts the annotation.
 */
import { execFileSync } from "node:child_process";
import * as esbuild from "esbuild";
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" });

// Relative specifiers only (`"./a.ts"`, `'../b/c.ts'`), in imports, exports and import() types.
const relativeTs = /((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']*?)\.ts(["'])/g;
let files = 0;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith(".d.ts")) continue;
  const file = join(entry.parentPath, entry.name);
  const text = readFileSync(file, "utf8");
  const fixed = text
    .replace(relativeTs, "$1$2.js$3")
    .replace(
      /^export declare class ContextStore<out /m,
      "// @ts-ignore TS2636: declared on purpose, so that a Context<MyState> is usable where a Context is expected.\n$&",
    );
  if (fixed !== text) writeFileSync(file, fixed);
  files++;
}
// The SQLite store's worker thread (src/sqlite-thread/sqlite-worker.js, JavaScript that must start
// without a TypeScript loader), inlined as text: the worker starts from it, so that an application
// bundled by esbuild or vite, which has no file beside stepflow's modules, starts it too.
const workerSource = readFileSync(join(root, "src", "sqlite-thread", "sqlite-worker.js"), "utf8");
writeFileSync(
  join(dist, "src", "sqlite-thread", "sqlite-worker-source.js"),
  `/** The code of the SQLite worker thread (src/sqlite-thread/sqlite-worker.js), inlined by scripts/build.mjs. */\nconst source = ${JSON.stringify(workerSource)};\nexport function sqliteWorkerSource() {\n  return source;\n}\n`,
);
// Mermaid's browser build, which `stepflow draw --html` inlines so that the page draws offline: dist/draw/.
mkdirSync(join(dist, "draw"), { recursive: true });
copyFileSync(join(root, "node_modules", "mermaid", "dist", "mermaid.min.js"), join(dist, "draw", "mermaid.min.js"));
// The web page the server serves at / (src/web/page/, bundled for browsers with Mermaid): dist/web/.
execFileSync(
  process.execPath,
  ["--import", "tsx", "--input-type=module", "--eval", `await (await import("./src/web/bundle-web-page.ts")).bundleWebPage("dist/web")`],
  {
    cwd: root,
    stdio: "inherit",
  },
);
// The `stepflow` command, bundled (bin/stepflow.js starts it): a few files instead of hundreds,
// which Node resolves and compiles one by one on every start. Packages stepflow depends on are
// bundled; its optional peers are not (installed or not by the user). In it,
// `@llamaindex/env/tokenizers` loads its tokenizer when first used, not when imported
// (src/cli/lazy-tokenizers.ts). The bundle hands the subcommands that may load users' modules,
// which import `stepflow`, to dist/src/cli/main.js, an entry of the package's own bundle below
// (src/cli/main.ts, HandOff).
const { peerDependencies } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
await esbuild.build({
  entryPoints: { main: join(dist, "src", "cli", "main.js") },
  outdir: join(dist, "cli"),
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  keepNames: true, // as in the package's bundle below: class names are events' type names
  // yaml: a CommonJS package the CLI imports with import(), which a split bundle would give
  // only a default export (checked below); Node gives it its named exports.
  external: [...Object.keys(peerDependencies), "yaml"],
  // CommonJS packages in an ES module bundle call require() for Node's modules.
  banner: { js: 'import { createRequire as __stepflowCreateRequire } from "node:module";\nconst require = __stepflowCreateRequire(import.meta.url);' },
  plugins: [
    {
      name: "lazy-tokenizers",
      setup(build) {
        build.onResolve({ filter: /^@llamaindex\/env\/tokenizers$/ }, () => ({ path: join(dist, "src", "cli", "lazy-tokenizers.js") }));
      },
    },
  ],
  logLevel: "warning",
});
for (const name of readdirSync(join(dist, "cli"))) {
  if (/^export default require_\w+\(\);$/m.test(readFileSync(join(dist, "cli", name), "utf8")))
    throw new Error(
      `build: dist/cli/${name} is a CommonJS package behind import(), which gets only a default export in the bundle: make the package external in scripts/build.mjs.`,
    );
}
await bundleEntryPoints();
console.log(`build: dist/ written (${files} declaration files)`);

/**
 * The package's entry points (every export in package.json, and dist/src/cli/main.js, which the
 * command hands `draw`, `run`, `dev` and `serve` to), bundled together with splitting: each entry
 * stays at its path, and the modules two entries share go to dist/src/chunks/, so each class
 * exists once, whichever entries an application imports. Node resolves, reads and compiles an
 * ES module file by file: `import("stepflow")` took 1.5× `node -e 0` as 43 files.
 * Packages stay imports (the application's copies, deduplicated by its package manager).
 *
 * The chunks are two folders below dist/, as every module was (dist/src/core/…), so the modules
 * that find files relative to themselves (the web page, Mermaid's script, the version) find the
 * same ones. The modules one by one, as tsc wrote them, are moved to .build/modules/ (not published):
 * the benchmarks' `--dist` runs them (bench/use-build.mjs).
 */
async function bundleEntryPoints() {
  const modules = join(root, ".build", "modules");
  rmSync(modules, { recursive: true, force: true });
  const { exports } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const entries = Object.values(exports)
    .map((target) => (typeof target === "string" ? target : target.import))
    .filter((target) => target.startsWith("./dist/") && target.endsWith(".js"))
    .map((target) => join(root, target));
  entries.push(join(dist, "src", "cli", "main.js"));
  for (const file of compiledModules()) cpSync(file, join(modules, relative(dist, file)));
  await esbuild.build({
    entryPoints: entries,
    outdir: dist,
    outbase: dist,
    allowOverwrite: true,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    chunkNames: "src/chunks/[name]-[hash]",
    packages: "external",
    // A class that refers to itself is emitted as `var StopEvent = class _StopEvent`: without
    // this its `name` is `_StopEvent`, which is an event's type name in saved contexts, on the
    // server's wire and in users' logs (test/bundles/package-entries.test.ts checks).
    keepNames: true,
    logLevel: "warning",
  });
  for (const file of compiledModules(entries)) rmSync(file);
}

/** The JavaScript tsc wrote to dist/src, dist/events and dist/workflows, leaving out the bundle's entries and chunks. */
function compiledModules(entries = []) {
  const skip = new Set(entries);
  return ["src", "events", "workflows"]
    .flatMap((dir) => readdirSync(join(dist, dir), { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && entry.name.endsWith(".js"))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => !skip.has(file) && !file.startsWith(join(dist, "src", "chunks")));
}
