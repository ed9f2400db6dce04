/**
 * Vitest global setup: builds the web page from the sources before any suite starts, so the
 * tests that serve it find the build in node_modules/.cache and none spends its own time
 * limit (tens of seconds on a loaded machine) bundling Mermaid.
 */
import { buildFromSources } from "../../src/web/web-page.ts";

export default async function setup(): Promise<void> {
  await buildFromSources();
}
