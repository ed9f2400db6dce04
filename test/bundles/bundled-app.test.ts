/**
 * An application bundled with stepflow inside runs: sessions on SQLite (whose worker thread
 * starts from its inlined code) and the server with its web page, bundled by esbuild (ES module
 * and CommonJS) and by vite for SSR, each run from a folder holding only the bundle and
 * @libsql/client (a native driver, which stays out of bundles). Where the page is missing, the
 * error says what to copy where.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../support/run-typescript.ts";

const run = promisify(execFile);
const BUILT_PAGE = join(REPO, "dist", "web");
const EXPECTED = [
  "session: Your name is Alice.",
  "server: succeeded (2123 + 2321) * 312 = 1386528",
  "page: 200 stepflow",
  "script: 200 text/javascript; charset=utf-8",
].join("\n");

/** A user's own workflow in TypeScript, with a standard `@step` decorator. */
const FLOW_TS = `import { StartEvent, StopEvent, Workflow, step, type Context } from "stepflow";

class Greeting extends Workflow<{ name: string }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async greet(_ctx: Context, ev: StartEvent<{ name: string }>) {
    return new StopEvent({ result: \`Hello, \${ev.name}!\` });
  }
}

console.log(await new Greeting({ timeout: 10 }).run({ name: "Ada" }));
`;

let work: string;
let app: string;

/** A folder as a deployment gets it: the bundle, and @libsql/client installed beside it (no stepflow). */
async function deployment(name: string, bundle: string, page: "beside" | "none"): Promise<string> {
  const dir = join(work, name);
  await mkdir(join(dir, "node_modules"), { recursive: true });
  await symlink(join(REPO, "node_modules", "@libsql"), join(dir, "node_modules", "@libsql"), "dir");
  const file = join(dir, bundle.split("/").at(-1) as string);
  await copyFile(bundle, file);
  if (page === "beside") await cp(BUILT_PAGE, join(dir, "stepflow-web"), { recursive: true });
  return file;
}

/** Runs a bundle with a clean environment (no model keys): its output, and how it ended. */
async function runBundle(file: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", ...env };
  try {
    const { stdout, stderr } = await run(process.execPath, [file], { cwd: join(file, ".."), env: clean, timeout: 90_000 });
    return { code: 0, stdout: stdout.trim(), stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === "number" ? failed.code : -1, stdout: (failed.stdout ?? "").trim(), stderr: failed.stderr ?? "" };
  }
}

async function esbuild(format: "esm" | "cjs", outfile: string): Promise<void> {
  const { build } = await import("esbuild");
  // CommonJS has no import.meta; some packages stepflow uses read import.meta.url when loaded, so
  // it is defined as the bundle's own URL (the recipe docs/deploy.md gives).
  const cjs = {
    banner: { js: 'const import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
    define: { "import.meta.url": "import_meta_url" },
  };
  await build({
    entryPoints: [join(app, "app.mjs")],
    bundle: true,
    platform: "node",
    format,
    target: "node20",
    outfile,
    logLevel: "error",
    ...(format === "cjs" ? cjs : {}),
  });
}

describe("an app bundled with stepflow inside", () => {
  beforeAll(async () => {
    expect(existsSync(join(REPO, "dist", "src", "index.js")), "the bundles are made of the built package: run npm run build").toBe(true);
    work = await mkdtemp(join(tmpdir(), "stepflow-bundles-"));
    // The application's project: stepflow and @libsql/client installed (stepflow is this repository's build).
    app = join(work, "app");
    await mkdir(join(app, "node_modules"), { recursive: true });
    await symlink(REPO, join(app, "node_modules", "stepflow"), "dir");
    await symlink(join(REPO, "node_modules", "@libsql"), join(app, "node_modules", "@libsql"), "dir");
    await copyFile(join(REPO, "test", "fixtures", "bundled-app.mjs"), join(app, "app.mjs"));
  });

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("esbuild, ES module (.mjs): without the page it says what to copy where; with the page copied beside it, it runs", async () => {
    const bundle = join(app, "out", "app.mjs");
    await esbuild("esm", bundle);
    const bare = await deployment("esm-bare", bundle, "none");
    const failed = await runBundle(bare);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("session: Your name is Alice."); // SQLite worked; only the page is missing
    expect(failed.stderr).toContain(`WebPageError: stepflow's web page (index.html and assets/) is not in this program's files`);
    expect(failed.stderr).toContain(`Copy node_modules/stepflow/dist/web/ to ${join(work, "esm-bare", "stepflow-web")} (beside the bundle)`);
    expect(failed.stderr).toContain("or set STEPFLOW_WEB_ROOT");

    const done = await runBundle(await deployment("esm", bundle, "beside"));
    expect(done.stderr).toBe("");
    expect(done.stdout).toBe(EXPECTED);
  });

  it("esbuild, CommonJS (.cjs), with STEPFLOW_WEB_ROOT naming the page", async () => {
    const bundle = join(app, "out", "app.cjs");
    await esbuild("cjs", bundle);
    const file = await deployment("cjs", bundle, "none");
    const done = await runBundle(file, { STEPFLOW_WEB_ROOT: BUILT_PAGE });
    expect(done.stderr).toBe("");
    expect(done.stdout).toBe(EXPECTED);
    const wrong = await runBundle(file, { STEPFLOW_WEB_ROOT: join(work, "nowhere") });
    expect(wrong.stderr).toContain(`STEPFLOW_WEB_ROOT is ${join(work, "nowhere")}, which holds no index.html`);
  });

  it("vite, SSR build with every package bundled but @libsql/client", async () => {
    const { build } = await import("vite");
    const outDir = join(app, "vite-out");
    await build({
      root: app,
      configFile: false,
      logLevel: "error",
      ssr: { noExternal: true, external: ["@libsql/client"] },
      build: {
        ssr: join(app, "app.mjs"),
        outDir,
        emptyOutDir: true,
        target: "node20",
        minify: false,
        rolldownOptions: { output: { format: "es", entryFileNames: "app.mjs" } },
      },
    });
    const done = await runBundle(await deployment("vite", join(outDir, "app.mjs"), "beside"));
    expect(done.stderr).toBe("");
    expect(done.stdout).toBe(EXPECTED);
  });

  it("vite, SSR build of TypeScript with its own @step workflow, decorators lowered by the plugin docs/deploy.md gives", async () => {
    const { build } = await import("vite");
    const { transform } = await import("esbuild");
    await writeFile(join(app, "flow.ts"), FLOW_TS);
    // The plugin of docs/deploy.md: vite keeps standard decorators as written, which Node does not run yet.
    const lowerDecorators = {
      name: "lower-decorators",
      enforce: "pre" as const,
      async transform(code: string, id: string) {
        if (!/\.[cm]?ts$/.test(id) || id.includes("/node_modules/")) return null;
        const result = await transform(code, { loader: "ts", target: "es2022", sourcemap: true, sourcefile: id });
        return { code: result.code, map: result.map };
      },
    };
    const outDir = join(app, "vite-flow");
    await build({
      root: app,
      configFile: false,
      logLevel: "error",
      plugins: [lowerDecorators],
      ssr: { noExternal: true, external: ["@libsql/client"] },
      build: {
        ssr: join(app, "flow.ts"),
        outDir,
        emptyOutDir: true,
        target: "node20",
        rolldownOptions: { output: { format: "es", entryFileNames: "flow.mjs" } },
      },
    });
    const done = await runBundle(await deployment("vite-flow", join(outDir, "flow.mjs"), "none"));
    expect(done.stderr).toBe("");
    expect(done.stdout).toBe("Hello, Ada!");
  });
});
