/**
 * `npm run bench [-- [--dist] engine agent sessions]`: each benchmark in a process of its own, one
 * after another; with `--dist`, on the build in dist/ (built first) instead of the sources. In one process the engine benchmark left 37 MB retained and megamorphic engine call
 * sites behind it, and the agent table measured after it came out about 0.01 worse.
 */
import { spawnSync } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { BENCHMARKS, isBenchmarkName } from "./benchmarks.ts";

const dist = process.argv.includes("--dist");
const asked = process.argv.slice(2).filter((arg) => arg !== "--dist");
const unknown = asked.filter((name) => !isBenchmarkName(name));
if (unknown.length > 0) {
  console.error(`Unknown benchmark ${unknown.map((n) => `"${n}"`).join(", ")}. Choose from: ${Object.keys(BENCHMARKS).join(", ")} (none: all of them).`);
  process.exit(2);
}

if (dist) {
  const build = spawnSync(process.execPath, [fileURLToPath(new URL("../scripts/build.mjs", import.meta.url))], { stdio: ["ignore", "ignore", "inherit"] });
  if (build.status !== 0) process.exit(1);
}
console.log(
  `# stepflow benchmarks${dist ? " (the build in dist/)" : ""} — node ${process.version}, ${os.cpus()[0]?.model ?? "cpu"} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB\n`,
);
const one = fileURLToPath(new URL("./one.ts", import.meta.url));
const selected = (asked.length > 0 ? asked : Object.keys(BENCHMARKS)).filter(isBenchmarkName);
for (const name of selected) {
  console.log(`## ${BENCHMARKS[name].title}\n`);
  const child = spawnSync(
    process.execPath,
    ["--import", "tsx", ...(dist ? ["--import", fileURLToPath(new URL("./use-build.mjs", import.meta.url))] : []), "--expose-gc", one, name],
    { stdio: "inherit" },
  );
  if (child.status !== 0) {
    console.error(`The ${name} benchmark failed (${child.signal ?? `exit code ${child.status}`}).`);
    process.exit(1);
  }
  console.log();
}
