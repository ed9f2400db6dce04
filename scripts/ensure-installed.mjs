#!/usr/bin/env node
/**
 * `node scripts/ensure-installed.mjs DIR…`: installs each folder's own package.json (`npm ci
 * --prefix DIR`) when it has not been installed yet. `npm run bench`, `npm run typecheck` and
 * `npm test` run it. Those folders keep apart dependencies that a normal install of the project
 * must not fetch: bench/ has @llamaindex/workflow-core, the engine benchmark's comparison point,
 * and test/llamaindex/ the `llamaindex` umbrella package, which depends on it; npm warns on every
 * install that fetches it, as it is deprecated upstream. test/compat/upstream/ has what upstream's
 * own test suites import besides the packages they test (stream-chain).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const dir of process.argv.slice(2).map((d) => join(root, d))) {
  // npm writes node_modules/.package-lock.json at the end of an install.
  if (existsSync(join(dir, "node_modules", ".package-lock.json"))) continue;
  const { dependencies = {} } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  console.error(`ensure-installed: installing ${Object.keys(dependencies).join(", ")} into ${relative(root, dir)}/node_modules`);
  const run = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"], {
    stdio: "inherit",
  });
  if (run.status !== 0) {
    console.error(`ensure-installed: installing ${relative(root, dir)}/package.json failed; run \`npm ci --prefix ${relative(root, dir)}\` and try again.`);
    process.exit(1);
  }
}
