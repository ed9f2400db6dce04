#!/usr/bin/env node
/**
 * Installs the benchmarks' own dependencies (bench/package.json) when they are missing; `npm run
 * bench` and `npm run typecheck` run it first. They live apart from the project's because
 * @llamaindex/workflow-core is deprecated upstream (npm warns on every install that fetches it)
 * and only the engine benchmark compares against it.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const bench = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(bench, "node_modules", "@llamaindex", "workflow-core", "package.json"))) {
  console.error("bench: installing the engine benchmark's comparison package (@llamaindex/workflow-core) into bench/node_modules");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const run = spawnSync(npm, ["ci", "--prefix", bench, "--no-audit", "--no-fund", "--loglevel=error"], { stdio: "inherit" });
  if (run.status !== 0) {
    console.error(`bench: installing bench/package.json failed; run \`npm ci --prefix bench\` and try again.`);
    process.exit(1);
  }
}
