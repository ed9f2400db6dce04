/**
 * `stepflow draw --html FILE`: one HTML file that renders Mermaid drawings with no network.
 * Mermaid's browser build is inlined (3.5 MB), so the page opens offline, from a file, behind
 * a firewall; a CDN link would not.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { StepflowError } from "../core/internal.ts";

/**
 * Mermaid's browser script was found neither in the built package nor in node_modules.
 * @example if (error instanceof MermaidMissingError) console.error(error.message);
 */
export class MermaidMissingError extends StepflowError {
  override name = "MermaidMissingError";
}

/** Where `npm run build` copies Mermaid's browser build: dist/draw/ (next to dist/src/cli/). */
function builtCopy(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "..", "draw", "mermaid.min.js");
}

/** Mermaid's browser script: the package's copy, or node_modules' in a clone of stepflow. */
async function mermaidScript(): Promise<string> {
  const built = builtCopy();
  if (existsSync(built)) return readFile(built, "utf8");
  try {
    return await readFile(fileURLToPath(import.meta.resolve("mermaid/dist/mermaid.min.js")), "utf8");
  } catch (error) {
    throw new MermaidMissingError(
      `Drawing HTML needs Mermaid's browser build, which is missing from ${built}: reinstall stepflow, or in a clone run npm install and npm run build.`,
      { cause: error },
    );
  }
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/**
 * A standalone HTML page drawing each of `drawings` (title → Mermaid flowchart).
 * @example await writeFile("agent.html", await drawingPage({ agent: agent.toMermaid() }));
 */
export async function drawingPage(drawings: Readonly<Record<string, string>>): Promise<string> {
  // Mermaid's build holds no "</script"; should a later one, it must not end the element early.
  const script = (await mermaidScript()).replace(/<\/script/gi, "<\\/script");
  const names = Object.keys(drawings);
  const sections = Object.entries(drawings)
    .map(([title, mermaid]) => `<section>\n<h2>${escapeHtml(title)}</h2>\n<pre class="mermaid">\n${escapeHtml(mermaid)}\n</pre>\n</section>`)
    .join("\n");
  return `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>${escapeHtml(names.join(", "))} — stepflow</title>
<style>body { font-family: system-ui, sans-serif; margin: 2rem; } pre.mermaid { background: none; }</style>
${sections}
<script>${script}</script>
<script>mermaid.initialize({ startOnLoad: true });</script>
</html>
`;
}
