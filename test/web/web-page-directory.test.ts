import { existsSync, readFileSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/run-typescript.ts";
import { buildFromSources as buildPageIn, webPageDirectory } from "../../src/web/web-page.ts";

/** Every file a built page refers to, from its HTML and the imports between its scripts, that is missing. */
function missingFiles(dir: string): string[] {
  const html = readFileSync(join(dir, "index.html"), "utf8");
  const referenced = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string).filter((ref) => !ref.startsWith("data:"));
  const missing = referenced.filter((ref) => !existsSync(join(dir, ref)));
  const assets = join(dir, "assets");
  for (const file of readdirSync(assets).filter((name) => name.endsWith(".js"))) {
    const code = readFileSync(join(assets, file), "utf8");
    for (const m of code.matchAll(/(?:from|import\()\s*"(\.\/[^"]+\.js)"/g)) if (!existsSync(join(assets, m[1] as string))) missing.push(`${file} → ${m[1]}`);
  }
  return missing;
}

describe("webPageDirectory", () => {
  it("builds the page from the sources once per process, complete: the HTML's files and every chunk the scripts import", async () => {
    const dir = await webPageDirectory();
    expect(await webPageDirectory()).toBe(dir);
    expect(dir.startsWith(join(REPO, "node_modules", ".cache", "stepflow-web"))).toBe(true);
    const html = readFileSync(join(dir, "index.html"), "utf8");
    expect(html).toContain('<script type="module" src="assets/main.js"></script>');
    // Nothing from another site: every URL in the HTML is relative (or data:).
    expect(html.match(/(?:src|href)="(?!assets\/|data:)[^"]*"/g)).toBeNull();
    expect(missingFiles(dir)).toEqual([]);
    // Mermaid is bundled: some chunk holds its flowchart renderer.
    const chunks = readdirSync(join(dir, "assets")).filter((name) => name.startsWith("chunk-"));
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.some((name) => readFileSync(join(dir, "assets", name), "utf8").includes("flowchart"))).toBe(true);
    // Each file has Brotli and gzip copies that hold the same bytes.
    for (const name of readdirSync(join(dir, "assets")).filter((n) => /\.(?:js|css)$/.test(n))) {
      const file = join(dir, "assets", name);
      expect(brotliDecompressSync(readFileSync(`${file}.br`)).equals(readFileSync(file)), name).toBe(true);
      expect(gunzipSync(readFileSync(`${file}.gz`)).equals(readFileSync(file)), name).toBe(true);
    }
  });

  it("keeps one build of the sources: a build of other sources left in the cache is removed by the next build", async () => {
    const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    // A clone of its own (sources and cache in a temp dir) so the repository's build is not touched.
    const root = mkdtempSync(join(tmpdir(), "stepflow-web-cache-"));
    try {
      const cache = join(root, "node_modules", ".cache", "stepflow-web");
      mkdirSync(join(cache, "0123456789abcdef"), { recursive: true });
      writeFileSync(join(cache, "0123456789abcdef", "index.html"), "old");
      mkdirSync(join(cache, "0123456789abcdef.123.456"));
      const built = await buildPageIn(root);
      expect(readdirSync(cache).sort()).toEqual([basename(built), "0123456789abcdef.123.456"].sort());
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("in the built package, is dist/web, complete", async () => {
    // stepflow/server as installed: its entry, with the web page's module in a shared chunk.
    const built = join(REPO, "dist", "src", "server", "index.js");
    expect(existsSync(built), "npm run test:slow builds dist/ first; run npm run build").toBe(true);
    const { webPageDirectory: fromDist } = (await import(built)) as { webPageDirectory: () => Promise<string> };
    const dir = await fromDist();
    expect(dir).toBe(join(REPO, "dist", "web"));
    expect(missingFiles(dir)).toEqual([]);
  });
});
