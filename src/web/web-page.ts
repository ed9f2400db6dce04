/**
 * Where the server finds the web page it serves at `/`. The installed package ships it built
 * (dist/web/); run from a clone's sources (`npm start -- serve`, the tests), the page is built
 * on first use into node_modules/.cache/stepflow-web/, under a hash of its sources, so an
 * edited page is rebuilt and processes starting together share one build; the builds of
 * earlier sources are removed.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, readdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PAGE_SOURCES, WebPageError, bundleWebPage } from "./bundle-web-page.ts";

export { WebPageError } from "./bundle-web-page.ts";

let fromSources: Promise<string> | undefined;

/**
 * The directory holding the web page: `index.html` and `assets/`. Serve it at `/` (the
 * server's `webRoot`).
 * @example
 * const webRoot = await webPageDirectory(); // …/dist/web
 */
export function webPageDirectory(): Promise<string> {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".js")) {
    // dist/src/web/web-page.js → dist/web
    const built = join(dirname(here), "..", "..", "web");
    if (existsSync(join(built, "index.html"))) return Promise.resolve(built);
    return Promise.reject(
      new WebPageError(`The web page is missing from ${built}: the package was built without it. Run npm run build in the stepflow clone.`),
    );
  }
  fromSources ??= buildFromSources().catch((error: unknown) => {
    fromSources = undefined;
    throw error;
  });
  return fromSources;
}

/**
 * Builds the page from the sources into `root`'s node_modules/.cache/stepflow-web/ (unless
 * that build is there already) and returns its directory. Exported for tests.
 * @example const dir = await buildFromSources(process.cwd());
 */
export async function buildFromSources(root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")): Promise<string> {
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
