/**
 * Where the server finds the web page it serves at `/`. The installed package ships it built
 * (dist/web/); run from a clone's sources (`npm start -- serve`, the tests), the page is built
 * on first use into node_modules/.cache/stepflow-web/, under a hash of its sources, so an
 * edited page is rebuilt and processes starting together share one build; the builds of
 * earlier sources are removed.
 *
 * An application bundled with stepflow inside (esbuild, vite) has no dist/web/ beside this
 * module: the page is then looked for where the error names (STEPFLOW_WEB_ROOT, a
 * `stepflow-web/` folder beside the bundle, an installed stepflow package), since bundlers
 * carry only code, not a folder of 3.7 MB of assets.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, readdir, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { builtPackageDist } from "../core/built-package.ts";
import { WebPageError } from "./web-page-error.ts";

export { WebPageError } from "./web-page-error.ts";

/** The environment variable naming the folder of the built page (a copy of stepflow's dist/web/). */
export const WEB_ROOT_VARIABLE = "STEPFLOW_WEB_ROOT";

let fromSources: Promise<string> | undefined;

/**
 * The directory holding the web page: `index.html` and `assets/`. Serve it at `/` (the
 * server's `webRoot`). In an application bundled with stepflow inside, set
 * `STEPFLOW_WEB_ROOT` to a copy of `node_modules/stepflow/dist/web/`, or put that copy in a
 * `stepflow-web/` folder beside the bundle; a `WebPageError` says so when neither is there.
 * @example
 * const webRoot = await webPageDirectory(); // …/node_modules/stepflow/dist/web
 */
export function webPageDirectory(): Promise<string> {
  const here = thisModule();
  if (here?.endsWith(".ts") && !process.env[WEB_ROOT_VARIABLE]) {
    fromSources ??= buildFromSources().catch((error: unknown) => {
      fromSources = undefined;
      throw error;
    });
    return fromSources;
  }
  try {
    return Promise.resolve(builtPageDirectory(here));
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/** This module's file; undefined in a CommonJS bundle, where `import.meta` is empty. */
function thisModule(): string | undefined {
  return typeof import.meta.url === "string" && import.meta.url.startsWith("file:") ? fileURLToPath(import.meta.url) : undefined;
}

/** The built page's folder: named by STEPFLOW_WEB_ROOT, in the package, beside a bundle, or in the installed package. */
function builtPageDirectory(here: string | undefined): string {
  const named = process.env[WEB_ROOT_VARIABLE];
  if (named) {
    const dir = resolve(named);
    if (existsSync(join(dir, "index.html"))) return dir;
    throw new WebPageError(
      `${WEB_ROOT_VARIABLE} is ${named}, which holds no index.html. Set it to a copy of stepflow's built page: the folder node_modules/stepflow/dist/web/ (with its assets/ folder).`,
    );
  }
  // The package as installed: dist/src/…/*.js → dist/web.
  const dist = here === undefined ? undefined : builtPackageDist(here);
  if (dist !== undefined) {
    const packaged = join(dist, "web");
    if (existsSync(join(packaged, "index.html"))) return packaged;
    throw new WebPageError(`The web page is missing from ${packaged}: this copy of stepflow was built without it. Reinstall stepflow (npm install stepflow).`);
  }
  // A bundle: this module is inside the application's file.
  const bundle = here ?? process.argv[1];
  const beside = bundle === undefined ? undefined : join(dirname(resolve(bundle)), "stepflow-web");
  if (beside !== undefined && existsSync(join(beside, "index.html"))) return beside;
  const installed = installedPackagePage(bundle);
  if (installed !== undefined) return installed;
  throw new WebPageError(
    `stepflow's web page (index.html and assets/) is not in this program's files: it looks bundled${bundle === undefined ? "" : ` (${bundle})`}, and bundlers carry code, not the page's folder. ` +
      `Copy node_modules/stepflow/dist/web/ to ${beside ?? "a folder shipped with the program"}${beside === undefined ? "" : " (beside the bundle)"}, ` +
      `or set ${WEB_ROOT_VARIABLE} to the folder you copied it to, or keep stepflow out of the bundle (esbuild --external:stepflow, vite ssr.external: ["stepflow"]) and install it.`,
  );
}

/** dist/web of a stepflow package installed where `from` (or the working directory) resolves packages; undefined if none. */
function installedPackagePage(from: string | undefined): string | undefined {
  for (const base of [from, join(process.cwd(), "index.js")]) {
    if (base === undefined) continue;
    try {
      const manifest = createRequire(resolve(base)).resolve("stepflow/package.json");
      const dir = join(dirname(manifest), "dist", "web");
      if (existsSync(join(dir, "index.html"))) return dir;
    } catch {
      // not installed there
    }
  }
  return undefined;
}

/**
 * Builds the page from the sources into `root`'s node_modules/.cache/stepflow-web/ (unless
 * that build is there already) and returns its directory. Exported for tests.
 * @example const dir = await buildFromSources(process.cwd());
 */
export async function buildFromSources(root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")): Promise<string> {
  // Loaded only here: a bundled application never builds the page, and must not carry what builds it.
  const { PAGE_SOURCES, bundleWebPage } = await import("./bundle-web-page.ts");
  const hash = createHash("sha256");
  for (const name of (await readdir(PAGE_SOURCES)).sort()) hash.update(name).update(await readFile(join(PAGE_SOURCES, name)));
  hash.update(await readFile(join(root, "node_modules", "mermaid", "package.json")).catch(() => ""));
  // How the page is built counts too: a changed build rebuilds it.
  hash.update(await readFile(fileURLToPath(new URL("./bundle-web-page.ts", import.meta.url))));
  const cache = join(root, "node_modules", ".cache", "stepflow-web");
  const target = join(cache, hash.digest("hex").slice(0, 16));
  if (existsSync(join(target, "index.html"))) return target;
  const partial = `${target}.${process.pid}.${Date.now()}`;
  try {
    await bundleWebPage(partial);
    await rename(partial, target);
  } catch (error) {
    // Another process may have finished the same build first: its copy is as good.
    if (!existsSync(join(target, "index.html"))) throw error;
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  await removeOlderBuilds(cache, target);
  return target;
}

/** Removes the finished builds of other sources (a partial build in progress is left alone). */
async function removeOlderBuilds(cache: string, keep: string): Promise<void> {
  const names = await readdir(cache).catch(() => []);
  await Promise.all(
    names.filter((name) => /^[0-9a-f]{16}$/.test(name) && join(cache, name) !== keep).map((name) => rm(join(cache, name), { recursive: true, force: true })),
  );
}
