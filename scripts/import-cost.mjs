#!/usr/bin/env node
/**
 * What importing each subpath export of the build costs, and what `stepflow --help` and one
 * offline answer cost: the files each loads (counted by a module hook; the same on every
 * machine) and its wall time against `node -e 0` measured in the same run (a ratio: absolute
 * times drift with the machine's load).
 *
 *   node scripts/import-cost.mjs            the table (`npm run bench -- import` prints it too)
 *   node scripts/import-cost.mjs --check    CI: fails when one loads more than 20% more files than
 *                                           .ci/import-cost-baseline.json says, or is not in it
 *   node scripts/import-cost.mjs --write    rewrites the baseline from this run, keeping each
 *                                           entry's "reason"; give a grown entry a reason by hand
 *
 * The gate counts files, not milliseconds: on a loaded machine a timing check fails for reasons
 * that have nothing to do with the change. Times are printed beside the counts, with the
 * baseline's ratios, for a person to read (medians of IMPORT_COST_ROUNDS runs each, 5 by
 * default, 3 with --check). Needs the build (`npm run build`).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const baselineFile = join(root, ".ci", "import-cost-baseline.json");
/** More files than the baseline by this factor fails the check. */
const ALLOWED_GROWTH = 1.2;

/** What is measured: every subpath export, then the two commands people run first. */
export function targets() {
  const { name, exports } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const imports = Object.keys(exports)
    .filter((subpath) => !subpath.endsWith(".json"))
    .map((subpath) => {
      const specifier = subpath === "." ? name : `${name}/${subpath.slice(2)}`;
      return { name: `import("${specifier}")`, args: ["--input-type=module", "-e", `await import(${JSON.stringify(specifier)})`] };
    });
  const bin = join(root, "bin", "stepflow.js");
  return [
    ...imports,
    { name: "stepflow --help", args: [bin, "--help"] },
    { name: 'stepflow --llm offline "What is 2 + 2?"', args: [bin, "--llm", "offline", "What is 2 + 2?"] },
  ];
}

// The counter: a module hook (in the loader's thread) appends each URL it loads to a file, and
// on exit the main thread adds the CommonJS modules that `require` loaded without the hook.
const HOOK = `import { appendFileSync } from "node:fs";
let file;
export function initialize(data) { file = data.file; }
export async function load(url, context, next) { if (url.startsWith("file:")) appendFileSync(file, url + "\\n"); return next(url, context); }`;
const COUNTER = (hookURL) => `import { register, createRequire } from "node:module";
import { appendFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const file = process.env.STEPFLOW_IMPORT_COST_FILE;
register(${JSON.stringify(hookURL)}, { data: { file } });
const require = createRequire(import.meta.url);
process.on("exit", () => appendFileSync(file, Object.keys(require.cache).map((path) => pathToFileURL(path).href + "\\n").join("")));`;

/** An environment with no model key, so that the commands take the offline model, as on a fresh machine. */
function quietEnv(extra = {}) {
  const env = { ...process.env, NO_COLOR: "1", ...extra };
  for (const key of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OLLAMA_HOST", "NODE_OPTIONS"])
    delete env[key];
  return env;
}

function run(args, env) {
  const child = spawnSync(process.execPath, args, { cwd: root, env, encoding: "utf8" });
  if (child.status !== 0) throw new Error(`node ${args.join(" ")} failed (exit ${child.status ?? child.signal}): ${child.stderr.slice(0, 2000)}`);
}

/** The files (package → count) one target loads. */
export function countFiles(target) {
  const dir = mkdtempSync(join(os.tmpdir(), "stepflow-import-cost-"));
  try {
    const hook = join(dir, "hook.mjs");
    const counter = join(dir, "counter.mjs");
    const list = join(dir, "loaded.txt");
    writeFileSync(hook, HOOK);
    writeFileSync(counter, COUNTER(pathToFileURL(hook).href));
    writeFileSync(list, "");
    run(["--import", pathToFileURL(counter).href, ...target.args], quietEnv({ STEPFLOW_IMPORT_COST_FILE: list }));
    const files = new Set(
      readFileSync(list, "utf8")
        .split("\n")
        .filter((url) => url !== "" && !url.startsWith(pathToFileURL(dir).href)),
    );
    const packages = new Map();
    for (const url of files) {
      const inPackage = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
      const owner = inPackage ? inPackage[1] : "stepflow";
      packages.set(owner, (packages.get(owner) ?? 0) + 1);
    }
    return { files: files.size, packages: [...packages].sort((a, b) => b[1] - a[1]) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Median wall time (ms) of each target and of `node -e 0`, the rounds interleaved so that all see the same machine. */
export function time(list, rounds) {
  const floor = { name: "node -e 0", args: ["-e", "0"] };
  const all = [floor, ...list];
  const samples = all.map(() => []);
  const env = quietEnv();
  for (let round = 0; round < rounds; round++) {
    all.forEach((target, i) => {
      const start = process.hrtime.bigint();
      run(target.args, env);
      samples[i].push(Number(process.hrtime.bigint() - start) / 1e6);
    });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const floorMs = median(samples[0]);
  return { floorMs, times: list.map((_, i) => ({ ms: median(samples[i + 1]), ratio: median(samples[i + 1]) / floorMs })) };
}

/** Measures every target: `{ name, files, packages, ms, ratio }[]` and the floor. */
export function measure(rounds = 5) {
  if (!existsSync(join(root, "dist", "src", "index.js"))) throw new Error("import-cost measures the build: run `npm run build` first.");
  const list = targets();
  const counts = list.map(countFiles);
  const { floorMs, times } = time(list, rounds);
  return { floorMs, rows: list.map((target, i) => ({ name: target.name, ...counts[i], ...times[i] })) };
}

function readBaseline() {
  return existsSync(baselineFile) ? JSON.parse(readFileSync(baselineFile, "utf8")) : { entries: {} };
}

function printTable({ floorMs, rows }, baseline) {
  console.log(`| what | files loaded | biggest packages (files) | ms (median) | × node -e 0 | baseline: files, × node -e 0 |`);
  console.log(`|---|---|---|---|---|---|`);
  console.log(`| node -e 0 | 0 | | ${floorMs.toFixed(0)} | 1.00 | |`);
  for (const row of rows) {
    const base = baseline.entries[row.name];
    const top = row.packages
      .slice(0, 3)
      .map(([name, n]) => `${name} ${n}`)
      .join(", ");
    console.log(
      `| \`${row.name}\` | ${row.files} | ${top} | ${row.ms.toFixed(0)} | ${row.ratio.toFixed(2)} | ${base ? `${base.files}, ${base.ratio.toFixed(2)}` : "(none)"} |`,
    );
  }
  console.log(
    `\nnode ${process.version}, load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  );
}

function check(result, baseline) {
  const failures = [];
  for (const row of result.rows) {
    const base = baseline.entries[row.name];
    if (!base) failures.push(`${row.name} is not in the baseline: add it (node scripts/import-cost.mjs --write).`);
    else if (row.files > base.files * ALLOWED_GROWTH)
      failures.push(
        `${row.name} loads ${row.files} files, more than ${Math.round((ALLOWED_GROWTH - 1) * 100)}% over the baseline's ${base.files}` +
          ` (${row.packages
            .slice(0, 5)
            .map(([name, n]) => `${name} ${n}`)
            .join(", ")}). Load what it does not need on first use, or, if the growth is wanted,` +
          ` run node scripts/import-cost.mjs --write and give the entry a "reason" in .ci/import-cost-baseline.json.`,
      );
  }
  return failures;
}

function write(result, baseline) {
  const entries = {};
  for (const row of result.rows) {
    const old = baseline.entries[row.name];
    entries[row.name] = { files: row.files, ratio: Number(row.ratio.toFixed(2)), ...(old?.reason ? { reason: old.reason } : {}) };
  }
  const file = {
    about:
      "Files each import or command loads (the CI gate: node scripts/import-cost.mjs --check fails on more than 20% over `files`) and its time as a ratio to `node -e 0` in the same run (for information). An entry that grew on purpose says why in `reason`.",
    measured: { node: process.version, loadAverage: Number(os.loadavg()[0].toFixed(2)), floorMs: Math.round(result.floorMs) },
    entries,
  };
  writeFileSync(baselineFile, `${JSON.stringify(file, null, 2)}\n`);
  console.log(`import-cost: wrote ${baselineFile}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2];
  const baseline = readBaseline();
  const result = measure(Number(process.env.IMPORT_COST_ROUNDS ?? (mode === "--check" ? 3 : 5)));
  printTable(result, baseline);
  if (mode === "--write") write(result, baseline);
  if (mode === "--check") {
    const failures = check(result, baseline);
    for (const failure of failures) console.error(`import-cost: ${failure}`);
    if (failures.length > 0) process.exit(1);
    console.log("import-cost: every import and command loads no more than 20% more files than the baseline.");
  }
}
