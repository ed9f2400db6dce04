/**
 * The web page in Chromium when the server's store refuses a run's end (a full disk): the chat
 * shows the answer, and under it that the run was not saved, with the store's error.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OfflineDemoLLM } from "../../src/llm/offline-model.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { webPageDirectory } from "../../src/web/web-page.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { CHROMIUM, haveChromium, launchChromium } from "../support/chromium.ts";
import { FullDiskStore } from "../support/full-disk-store.ts";

if (!haveChromium && process.env.CI) throw new Error(`Chromium is not installed at ${CHROMIUM}, and CI is set: .ci/chromium.sh installs it.`);

let server: WorkflowServer;
let url: string;
let browser: BrowserContext;
let page: Page;
let profile: string;
const problems: string[] = [];

describe.skipIf(!haveChromium)("the web page, when the store refuses a run's end", () => {
  beforeAll(async () => {
    server = new WorkflowServer({
      workflows: { agent: new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: null }) },
      store: new FullDiskStore(),
      onError: () => {},
      webRoot: await webPageDirectory(),
    });
    ({ url } = await server.listen({ port: 0, host: "127.0.0.1" }));
    profile = await mkdtemp(join(tmpdir(), "stepflow-chromium-not-saved-"));
    browser = await launchChromium(profile);
    browser.setDefaultTimeout(45_000);
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it("shows the answer, and that the run was not saved, with the store's error", { timeout: 120_000 }, async () => {
    await page.goto(url);
    await page.locator("#workflow option[value=agent]").waitFor({ state: "attached" });
    await page.getByLabel("Message").fill("What is (2123 + 2321) * 312?");
    await page.getByLabel("Message").press("Enter");
    const reply = page.locator(".message.assistant").last();
    await reply.locator(".status", { hasText: "Done" }).waitFor();
    expect(await reply.locator(".text").innerText()).toBe("(2123 + 2321) * 312 = 1386528");
    const alert = reply.getByRole("alert");
    expect(await alert.innerText()).toMatch(/^Handler \S+ ended \(succeeded\) but could not be saved to the store: SQLITE_FULL: database or disk is full\./);
    expect(problems).toEqual([]);
  });
});
