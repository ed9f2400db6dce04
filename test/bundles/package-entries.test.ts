/**
 * The built package's entry points (every export of package.json) are bundled together by
 * `npm run build`, with the modules they share in chunks. What a user relies on: a class is the
 * same class whichever export it is imported from (an `instanceof` across `stepflow` and
 * `stepflow/server` holds). (How many files each export loads is checked by
 * `node scripts/import-cost.mjs --check`.) Checked against the modules tsc compiled one by one (.build/modules/), where sharing is by
 * construction: every export two entries had in common there is the very same value in the
 * bundle. Needs the build (`npm run test:slow` builds it).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/run-typescript.ts";

const run = promisify(execFile);

/** Each export's JavaScript file, relative to dist/: `{ "stepflow/server": "src/server/index.js", … }`. */
function entryFiles(): Record<string, string> {
  const { name, exports } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, string | { import: string }>;
  };
  return Object.fromEntries(
    Object.entries(exports)
      .map(([subpath, target]) => [subpath === "." ? name : `${name}/${subpath.slice(2)}`, typeof target === "string" ? target : target.import] as const)
      .filter(([, target]) => target.startsWith("./dist/") && target.endsWith(".js"))
      .map(([specifier, target]) => [specifier, target.slice("./dist/".length)]),
  );
}

// Runs in a child process: imports every entry from dist/ and from .build/modules/, and lists the
// exports that two entries share in the modules tsc compiled, with whether the bundle shares them.
const COMPARE = `
const entries = JSON.parse(process.argv[1]);
const bundled = {}, compiled = {};
for (const [specifier, file] of Object.entries(entries)) {
  bundled[specifier] = await import(specifier);
  compiled[specifier] = await import(new URL(".build/modules/" + file, "file://" + process.cwd() + "/").href);
}
const shared = [];
const names = Object.keys(entries);
for (const [i, a] of names.entries())
  for (const b of names.slice(i + 1))
    for (const key of Object.keys(compiled[a]))
      if (key in compiled[b] && compiled[a][key] === compiled[b][key] && typeof compiled[a][key] === "function")
        shared.push({ key, a, b, same: bundled[a][key] === bundled[b][key] });
console.log(JSON.stringify(shared));
`;

describe("the built package's entry points", () => {
  it("share every class they shared as separate modules: each exists once", async () => {
    expect(existsSync(join(REPO, ".build", "modules")), "npm run build writes .build/modules/; run it first").toBe(true);
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", COMPARE, JSON.stringify(entryFiles())], {
      cwd: REPO,
      maxBuffer: 16 * 1024 * 1024,
    });
    const shared = JSON.parse(stdout) as { key: string; a: string; b: string; same: boolean }[];
    // The events and errors the compat layers and the LLM classes re-export, among others.
    expect(shared.length).toBeGreaterThan(10);
    expect(shared.filter((pair) => pair.key === "createWorkflow").map((pair) => pair.b)).toContain("stepflow/compat/workflow");
    expect(shared.filter((pair) => !pair.same)).toEqual([]);
  });

  it("keep every exported class's name, which names its events in saved contexts and on the wire", async () => {
    // A bundler renames a class that refers to itself (`var StopEvent = class _StopEvent`); its
    // `name` is then `_StopEvent`, which a saved context, the server's events and a user's log print.
    const program = `
      const entries = JSON.parse(process.argv[1]);
      const renamed = [];
      for (const [specifier, file] of Object.entries(entries)) {
        const bundled = await import(specifier);
        const compiled = await import(new URL(".build/modules/" + file, "file://" + process.cwd() + "/").href);
        for (const [key, value] of Object.entries(compiled))
          if (typeof value === "function" && typeof bundled[key] === "function" && bundled[key].name !== value.name)
            renamed.push(specifier + ": " + key + " is named " + bundled[key].name + ", not " + value.name);
      }
      const { StopEvent, eventTypeName } = await import("stepflow");
      console.log(JSON.stringify({ renamed, stop: eventTypeName(StopEvent) }));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", program, JSON.stringify(entryFiles())], {
      cwd: REPO,
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(JSON.parse(stdout)).toEqual({ renamed: [], stop: "StopEvent" });
  });

  it("run a workflow made of `stepflow`'s classes in `stepflow/server`, answered through `stepflow/client`", async () => {
    const program = `
      import { StartEvent, StopEvent, Workflow } from "stepflow";
      import { WorkflowServer } from "stepflow/server";
      import { WorkflowClient } from "stepflow/client";
      const double = new Workflow({ timeout: 10 });
      double.addStep("double", { accepts: [StartEvent], emits: [StopEvent] }, async (_ctx, ev) => new StopEvent({ result: ev.n * 2 }));
      const server = new WorkflowServer({ workflows: { double }, store: "memory:" });
      const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
      const handler = await new WorkflowClient({ baseUrl: url }).run("double", { n: 21 });
      console.log(JSON.stringify({ status: handler.status, result: handler.result }));
      await server.close();`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", program], { cwd: REPO });
    expect(JSON.parse(stdout)).toEqual({ status: "succeeded", result: 42 });
  });
});
