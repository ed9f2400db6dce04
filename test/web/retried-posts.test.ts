/**
 * The web page in Chromium when a POST's answer is lost (the connection reset after the server
 * did it): the page sends it again with the same Idempotency-Key, and the server does it once.
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

if (!haveChromium && process.env.CI) throw new Error(`Chromium is not installed at ${CHROMIUM}, and CI is set: .ci/chromium.sh installs it.`);

let server: WorkflowServer;
let url: string;
let browser: BrowserContext;
let page: Page;
let profile: string;
const problems: string[] = [];

describe.skipIf(!haveChromium)("the web page, when a POST's answer is lost", () => {
  beforeAll(async () => {
    server = new WorkflowServer({
      workflows: { agent: new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: null }) },
      store: "memory:",
      webRoot: await webPageDirectory(),
    });
    ({ url } = await server.listen({ port: 0, host: "127.0.0.1" }));
    profile = await mkdtemp(join(tmpdir(), "stepflow-chromium-retried-"));
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

  it("sends the start again with the same key: one run, and the chat shows its answer", { timeout: 120_000 }, async () => {
    const keys: (string | undefined)[] = [];
    await page.route("**/api/workflows/agent/start", async (route) => {
      keys.push(route.request().headers()["idempotency-key"]);
      if (keys.length > 1) return route.continue();
      // The server starts the run; its answer is lost on the way back.
      await route.fetch();
      await route.abort("connectionreset");
    });
    await page.goto(url);
    await page.locator("#workflow option[value=agent]").waitFor({ state: "attached" });
    await page.getByLabel("Message").fill("What is (2123 + 2321) * 312?");
    await page.getByLabel("Message").press("Enter");
    const reply = page.locator(".message.assistant").last();
    await reply.locator(".status", { hasText: "Done" }).waitFor();
    expect(await reply.locator(".text").innerText()).toBe("(2123 + 2321) * 312 = 1386528");
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(keys[1]).toBe(keys[0]);
    const { handlers } = (await (await fetch(`${url}/api/handlers`)).json()) as { handlers: unknown[] };
    expect(handlers).toHaveLength(1);
    expect(problems).toEqual([]);
  });
});
