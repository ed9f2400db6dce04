/**
 * The package as a new user gets it, from a fresh folder: the packed tarball installed into the
 * starter project of examples/starter/ (its package.json, tsconfig.json and flows.ts, nothing
 * of this repository's), then
 *   - the starter type-checks with its own TypeScript;
 *   - `npx stepflow dev ./flows.ts` opens a page where both of the user's workflows start from
 *     forms (one built from its zod schema), the order's question is answered, the run is
 *     inspected, forked from its start (answered the other way) and compared with its fork (the
 *     two answers among what differs), in Chromium;
 *   - the starter's Dockerfile, done by hand as Docker would (this machine has no Docker daemon,
 *     nor the base image): the files it copies, its production install (the tarball standing
 *     for the registry's stepflow), then its command with its environment, answers the
 *     arithmetic question over HTTP and serves the page, behind the token the container is given.
 * The tarball is packed from the built dist/ (`npm run test:slow` builds it) and installed with
 * npm's cache first (`--prefer-offline`), as CI has already installed the same dependencies.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/index.ts";
import { CHROMIUM, haveChromium, launchChromium } from "../support/chromium.ts";
import { REPO } from "../support/run-typescript.ts";
import { startCommand, userEnv, type RunningCommand } from "../support/user-project.ts";

if (!haveChromium && process.env.CI) throw new Error(`Chromium is not installed at ${CHROMIUM}, and CI is set: .ci/chromium.sh installs it.`);

const run = promisify(execFile);
const STARTER = join(REPO, "examples", "starter");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

let work: string;
let project: string;
let tarball: string;

describe("the packed tarball in the starter project", () => {
  beforeAll(async () => {
    expect(existsSync(join(REPO, "dist", "web", "index.html")), "the tarball is packed from the built package: run npm run build").toBe(true);
    work = await mkdtemp(join(tmpdir(), "stepflow-starter-"));
    // dist/ is built already: packing without the prepack script does not build it again.
    const packed = await run(NPM, ["pack", "--ignore-scripts", "--silent", "--pack-destination", work], { cwd: REPO });
    tarball = join(work, packed.stdout.trim().split("\n").at(-1) as string);
    project = join(work, "my-flows");
    await mkdir(project);
    for (const file of ["package.json", "tsconfig.json", "flows.ts"]) await copyFile(join(STARTER, file), join(project, file));
    // `npm install ./stepflow-0.1.0.tgz` in place of the registry's stepflow; the starter's other dependencies as it lists them.
    await run(NPM, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", tarball], { cwd: project, timeout: 300_000 });
  }, 400_000);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("type-checks with the starter's tsconfig.json and the package's declarations", async () => {
    const { stdout } = await run(NPM, ["run", "--silent", "typecheck"], { cwd: project }).catch((error: { stdout?: string }) => ({
      stdout: `failed: ${error.stdout}`,
    }));
    expect(stdout).toBe("");
  });

  describe.skipIf(!haveChromium)("npx stepflow dev ./flows.ts in Chromium", () => {
    let dev: RunningCommand;
    let url: string;
    let profile: string;
    let browser: BrowserContext;
    let page: Page;
    const problems: string[] = [];

    beforeAll(async () => {
      dev = startCommand(project, ["dev", "./flows.ts", "--port", "0"], join(project, "node_modules", ".bin", "stepflow"));
      url = (await dev.line(/listening on/)).replace("stepflow server listening on ", "");
      profile = await mkdtemp(join(tmpdir(), "stepflow-chromium-starter-"));
      browser = await launchChromium(profile);
      browser.setDefaultTimeout(60_000);
      page = browser.pages()[0] ?? (await browser.newPage());
      page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
      page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()}`));
      await page.goto(url);
    });

    afterAll(async () => {
      await browser?.close();
      await dev?.stop();
      if (profile) await rm(profile, { recursive: true, force: true });
    });

    it("starts the order from the form of its zod schema, the clerk answers, and the run is inspected", async () => {
      await page.locator("#workflow option[value=orders]").waitFor({ state: "attached" });
      expect(await page.locator("#workflow option").allInnerTexts()).toEqual(expect.arrayContaining(["orders", "greeting", "agent"]));
      await page.locator("#workflow").selectOption("orders");
      const form = page.getByRole("form", { name: "Start a run" });
      await form.getByLabel("item").fill("tea");
      await form.getByLabel("quantity").fill("3");
      await form.getByRole("button", { name: "Start run" }).click();
      const card = page.locator(".run-card").last();
      await card.getByRole("form", { name: "The run asks" }).getByText("Ship 3 × tea? (yes/no)").waitFor();
      await page.keyboard.type("yes");
      await page.keyboard.press("Enter");
      await card.locator(".status", { hasText: "Done" }).waitFor();
      expect(await card.getByLabel("Result").innerText()).toMatch(/"shipped":\s*true[\s\S]*"note":\s*"on its way"/);

      await card.getByRole("button", { name: "Inspect run" }).click();
      const detail = page.locator("#run-detail");
      await detail.locator("h2", { hasText: "succeeded" }).waitFor();
      expect(await detail.locator("h2").innerText()).toMatch(/^orders/);
      await page.locator(".graph svg").waitFor();
      expect(await page.locator(".spans .span-name").allInnerTexts()).toEqual(["confirm"]);
      const events = await page.locator("table.events td:nth-child(3)").allInnerTexts();
      expect(events.some((name) => name.endsWith("InputRequiredEvent"))).toBe(true);
      expect(events.at(-1)).toBe("RunEndedEvent");
      expect(await detail.innerText()).toContain('"note": "on its way"');

      // Forked from its start, the order is asked again; the clerk says no this time.
      const first = decodeURIComponent(new URL(page.url()).hash.slice("#runs/".length));
      await detail.getByRole("button", { name: "Fork from #0: start" }).click();
      await page.waitForURL((target) => target.hash.startsWith("#runs/") && !target.hash.includes(first));
      const fork = decodeURIComponent(new URL(page.url()).hash.slice("#runs/".length));
      expect(await detail.locator(".forked-from").innerText()).toBe(`${first} at #0 (start)`);
      const client = new WorkflowClient({ baseUrl: url });
      for await (const ev of client.streamEvents(fork)) if (ev.type === "InputRequiredEvent") break;
      await client.sendEvent(fork, "HumanResponseEvent", { response: "no" });
      expect(await client.wait(fork)).toMatchObject({ status: "succeeded", result: { shipped: false, note: "cancelled by the clerk" } });
      await detail.locator(".run-header .status", { hasText: "succeeded" }).waitFor();
      // The two runs side by side: their results differ.
      expect(await detail.getByLabel("Run to compare with").inputValue()).toBe(first);
      await detail.getByRole("button", { name: "Compare" }).click();
      const comparison = detail.locator(".comparison");
      await comparison.waitFor();
      expect(await comparison.locator(".diff-counts").innerText()).toMatch(/^[1-9]\d* events the same; 2 differ, 0 only in A, 0 only in B\.$/);
      // The clerk's two answers, and who sent each: the page the first, a program the second.
      expect(await comparison.locator("tr.diff.changed", { hasText: "EventReceivedEvent" }).innerText()).toMatch(
        /HumanResponseEvent from local user: \{"response":"no"\}[\s\S]*HumanResponseEvent from local user \(web page\): \{"response":"yes"\}/,
      );
      expect(await comparison.locator("tr.diff.changed", { hasText: "StopEvent" }).innerText()).toMatch(/"cancelled by the clerk"[\s\S]*"on its way"/);
      expect(problems).toEqual([]);
    });

    it("starts the greeting, which declares no schema, from a JSON box", async () => {
      await page.getByRole("tab", { name: "Chat" }).click();
      await page.locator("#workflow").selectOption("greeting");
      const form = page.getByRole("form", { name: "Start a run" });
      await form.getByLabel("Input (JSON)").fill('{ "name": "Ada" }');
      await form.getByRole("button", { name: "Start run" }).click();
      const card = page.locator(".run-card").last();
      await card.locator(".status", { hasText: "Done" }).waitFor();
      expect(await card.getByLabel("Result").innerText()).toContain('"Hello, Ada!"');
      expect(problems).toEqual([]);
    });
  });

  // An npm install inside: a loaded machine takes minutes.
  it("the Dockerfile's command answers the arithmetic question and serves the page, behind the token", { timeout: 400_000 }, async () => {
    const container = dockerfile(readFileSync(join(STARTER, "Dockerfile"), "utf8"));
    expect(container.workdir).toBe("/app");
    // The image's /app, made as its build steps make it: the files it copies, then its
    // production install (the tarball standing for the registry's stepflow).
    const app = join(work, "app");
    await mkdir(app);
    for (const file of container.copied) await copyFile(join(STARTER, file), join(app, file));
    expect(container.install).toEqual(["npm", "install", "--omit=dev", "--no-audit", "--no-fund"]);
    await run(NPM, [...container.install.slice(1), "--prefer-offline", "--loglevel=error", tarball], { cwd: app, timeout: 300_000 });
    expect(existsSync(join(app, "node_modules", "typescript")), "--omit=dev leaves the development tools out").toBe(false);
    // The container's command with its environment; a free port for the fixed 8080, as other
    // programs on this machine may hold it.
    const [command, ...args] = container.cmd.map((arg) => (arg === "8080" ? "0" : arg));
    expect(args.slice(0, 2)).toEqual(["serve", "./flows.ts"]);
    const token = "test-token-0123456789";
    const server = spawn(join(app, command as string), args, {
      cwd: app,
      env: { ...userEnv(), ...container.env, STEPFLOW_SERVER_TOKEN: token },
    });
    try {
      const listening = await new Promise<string>((resolve, reject) => {
        let stderr = "";
        server.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        createInterface({ input: server.stdout }).on("line", (line) => {
          const url = /listening on (http:\/\/\S+)/.exec(line)?.[1];
          if (url) resolve(url);
        });
        server.once("exit", (code) => reject(new Error(`the container's command exited (${code}) first; stderr:\n${stderr}`)));
      });
      // It listens on every interface (0.0.0.0), as in a container; this machine reaches it on 127.0.0.1.
      const url = listening.replace("0.0.0.0", "127.0.0.1");
      expect((await fetch(new URL("api/workflows", url))).status).toBe(401);
      const done = await new WorkflowClient({ baseUrl: url, token }).run("agent", { input: "What is (2123 + 2321) * 312?" });
      expect((done.result as { response: { content: string } }).response.content).toBe("(2123 + 2321) * 312 = 1386528");
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<title>stepflow</title>");
    } finally {
      server.kill("SIGTERM");
    }
  });
});

describe("the starter as docs/your-workflows.md shows it", () => {
  it("shows the starter's package.json and tsconfig.json as they are in examples/starter/", () => {
    const doc = readFileSync(join(REPO, "docs", "your-workflows.md"), "utf8");
    const jsonBlocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] as string) as unknown);
    for (const file of ["package.json", "tsconfig.json"]) expect(jsonBlocks).toContainEqual(JSON.parse(readFileSync(join(STARTER, file), "utf8")));
  });

  it("shows the starter's Dockerfile in docs/deploy.md as it is", () => {
    const doc = readFileSync(join(REPO, "docs", "deploy.md"), "utf8");
    const shown = /```dockerfile\n([\s\S]*?)```/.exec(doc)?.[1] ?? "";
    const instructions = (text: string) => text.split("\n").filter((line) => /^[A-Z]+ /.test(line));
    expect(instructions(shown)).toEqual(instructions(readFileSync(join(STARTER, "Dockerfile"), "utf8")));
  });
});

/**
 * What a Dockerfile of the starter's shape does: the files its COPY lines take from the project
 * (`package*.json` is package.json, as the starter has no lock file), its RUN line (the
 * install), WORKDIR, ENV and the exec-form CMD.
 */
function dockerfile(text: string): { workdir: string; copied: string[]; install: string[]; env: Record<string, string>; cmd: string[] } {
  const parsed = { workdir: "/", copied: [] as string[], install: [] as string[], env: {} as Record<string, string>, cmd: [] as string[] };
  for (const line of text.split("\n").map((l) => l.trim())) {
    const [instruction, ...rest] = line.split(/\s+/);
    const value = rest.join(" ");
    if (instruction === "WORKDIR") parsed.workdir = value;
    if (instruction === "COPY") parsed.copied.push(...rest.slice(0, -1).map((file) => (file === "package*.json" ? "package.json" : file)));
    if (instruction === "RUN") parsed.install = rest;
    if (instruction === "ENV") for (const pair of rest) parsed.env[pair.split("=")[0] as string] = pair.slice(pair.indexOf("=") + 1);
    if (instruction === "CMD") parsed.cmd = JSON.parse(value) as string[];
  }
  return parsed;
}
