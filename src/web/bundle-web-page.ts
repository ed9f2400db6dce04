/**
 * Builds the web page (src/web/page/) into a directory the server serves: `index.html`, and
 * `assets/` with the page's script (Mermaid split into chunks loaded on first use) and its
 * style sheet. esbuild does it; it is a development dependency, so this runs when the package
 * is built (`npm run build` → dist/web/) or when the server runs from a clone's sources.
 * Each file gets Brotli and gzip copies next to it, so the server sends a browser the
 * compressed bytes without compressing on every request.
 */
import { copyFile, mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { WebPageError } from "./web-page-error.ts";

export { WebPageError } from "./web-page-error.ts";

/** The page's sources: next to this module in a clone (not shipped in the package). */
export const PAGE_SOURCES = fileURLToPath(new URL("./page/", import.meta.url));

/**
 * Writes the bundled page into `outDir` (made if missing); `index.html` is written last, so a
 * directory that has it is complete.
 * @example await bundleWebPage("dist/web");
 */
export async function bundleWebPage(outDir: string, sources = PAGE_SOURCES): Promise<void> {
  let esbuild: typeof import("esbuild");
  try {
    // A name in a variable: an application bundling stepflow must not bundle esbuild with it.
    const name = "esbuild";
    esbuild = (await import(/* @vite-ignore */ name)) as typeof import("esbuild");
  } catch (error) {
    throw new WebPageError(
      `Building the web page needs esbuild, a development dependency of stepflow, which is not installed here (${(error as Error).message}). Run npm install in the stepflow clone, or use the built package, whose page is prebuilt.`,
      { cause: error },
    );
  }
  const assets = join(outDir, "assets");
  await mkdir(assets, { recursive: true });
  await esbuild.build({
    entryPoints: [join(sources, "main.ts")],
    outdir: assets,
    bundle: true,
    splitting: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    minify: true,
    legalComments: "linked",
    chunkNames: "chunk-[hash]",
    tsconfig: join(sources, "tsconfig.json"),
    logLevel: "error",
  });
  await copyFile(join(sources, "style.css"), join(assets, "style.css"));
  await compressCopies(assets);
  await copyFile(join(sources, "index.html"), join(outDir, "index.html"));
  await compressCopies(outDir, ["index.html"]);
}

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** Writes `NAME.br` and `NAME.gz` beside each text file of `dir` (or of `names`). */
async function compressCopies(dir: string, names?: readonly string[]): Promise<void> {
  const files = names ?? (await readdir(dir)).filter((name) => /\.(?:js|css|html|txt)$/.test(name));
  await Promise.all(
    files.map(async (name) => {
      const content = await readFile(join(dir, name));
      const [br, gz] = await Promise.all([
        brotli(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: content.length } }),
        gzipped(content, { level: 9 }),
      ]);
      await Promise.all([writeFile(join(dir, `${name}.br`), br), writeFile(join(dir, `${name}.gz`), gz)]);
    }),
  );
}
