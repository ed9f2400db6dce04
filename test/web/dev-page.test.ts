/**
 * `stepflow dev ./flows.ts` as a user runs it (the built command, in a project folder of its
 * own), and its web page in Chromium: both of the user's workflows started from forms (one
 * built from its zod schema, one a JSON box), the order's question answered, the result shown
 * as a folding tree; an edit of flows.ts restarts the server with the new workflow.
 */
import { appendFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, haveChromium, launchChromium } from "../support/chromium.ts";
import { startCommand, userProject, type RunningCommand } from "../support/user-project.ts";

if (!haveChromium && process.env.CI) throw new Error(`Chromium is not installed at ${CHROMIUM}, and CI is set: .ci/chromium.sh installs it.`);

let dir: string;
let profile: string;
let dev: RunningCommand;
let url: string;
let browser: BrowserContext;
let page: Page;
const problems: string[] = [];

describe.skipIf(!haveChromium)("stepflow dev ./flows.ts in Chromium", () => {
  beforeAll(async () => {
    dir = await userProject();
    dev = startCommand(dir, ["dev", "./flows.ts", "--port", "0"]);
    url = (await dev.line(/listening on/)).replace("stepflow server listening on ", "");
    profile = await mkdtemp(join(tmpdir(), "stepflow-chromium-dev-"));
    browser = await launchChromium(profile);
    browser.setDefaultTimeout(60_000);
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  });

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    for (const folder of [dir, profile]) if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("starts the order from a form built from its zod schema, checks it first, and asks the clerk", async () => {
    await page.goto(url);
    await page.locator("#workflow option[value=orders]").waitFor({ state: "attached" });
    await page.locator("#workflow").selectOption("orders");
    const form = page.getByRole("form", { name: "Start a run" });
    await form.getByLabel("item").fill("tea");
    await form.getByLabel("quantity").fill("20");
    await form.getByRole("button", { name: "Start run" }).click();
    // 20 is over the schema's maximum of 10: the browser refuses it, no run starts.
    expect(await form.getByLabel("quantity").evaluate((el: { validity: { rangeOverflow: boolean } }) => el.validity.rangeOverflow)).toBe(true);
    expect(await page.locator(".run-card").count()).toBe(0);
    await form.getByLabel("quantity").fill("2");
    await form.getByLabel("express").check();
    await form.getByRole("button", { name: "Start run" }).click();
    const card = page.locator(".run-card").last();
    const question = card.getByRole("form", { name: "The run asks" });
    await question.getByText("Ship 2 × tea by express? (yes/no)").waitFor();
    await card.locator(".status", { hasText: "Waiting for your answer" }).waitFor();
    // The answer box has the focus: the clerk types and presses Enter.
    await page.keyboard.type("yes");
    await page.keyboard.press("Enter");
    await card.locator(".status", { hasText: "Done" }).waitFor();
    const result = card.getByLabel("Result");
    expect(await result.innerText()).toMatch(/"shipped":\s*true[\s\S]*"note":\s*"on its way"/);
    // The result is a tree that folds.
    await result.locator("summary").first().click();
    expect(await result.locator("details").first().getAttribute("open")).toBeNull();
  });

  it("starts the greeting, which declares no schema, from a JSON box", async () => {
    await page.locator("#workflow").selectOption("greeting");
    const form = page.getByRole("form", { name: "Start a run" });
    await form.getByLabel("Input (JSON)").fill('{ "name": "Ada" ');
    await form.getByRole("button", { name: "Start run" }).click();
    expect(await form.getByLabel("Input (JSON)").evaluate((el: { validationMessage: string }) => el.validationMessage)).toMatch(/^Not JSON/);
    await form.getByLabel("Input (JSON)").fill('{ "name": "Ada" }');
    await form.getByRole("button", { name: "Start run" }).click();
    const card = page.locator(".run-card").last();
    await card.locator(".status", { hasText: "Done" }).waitFor();
    expect(await card.getByLabel("Result").innerText()).toContain('"Hello, Ada!"');
  });

  it("restarts on an edit of flows.ts: the new workflow is in the list after a reload", async () => {
    await appendFile(join(dir, "flows.ts"), "\nexport const again = new Greeting();\n");
    await dev.line(/listening on/);
    await page.reload();
    await page.locator("#workflow option[value=again]").waitFor({ state: "attached" });
    expect(dev.stderr()).toContain("flows.ts changed: restarting the server.");
    expect(problems).toEqual([]);
  });
});
