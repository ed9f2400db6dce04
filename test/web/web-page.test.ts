/**
 * The web page in a real browser: Debian's Chromium driven by playwright-core against a
 * WorkflowServer on 127.0.0.1 whose agent runs on the offline demo model with the calculator
 * and the HR REST API (a local test server), DELETEs waiting for approval. Skipped only where
 * Chromium is not installed and CI is not set; under CI a missing Chromium fails (.ci/chromium.sh
 * installs it). Screenshots go to a temporary directory, printed for CI to keep.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OfflineDemoLLM } from "../../src/llm/offline-model.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { webPageDirectory } from "../../src/web/web-page.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { restApiTool } from "../../workflows/tools/rest-api.ts";
import { startHrApiServer, type HrApiServer } from "../support/hr-api-server.ts";
import { CHROMIUM, haveChromium, launchChromium } from "../support/chromium.ts";

if (!haveChromium && process.env.CI) {
  throw new Error(
    `Chromium is not installed at ${CHROMIUM}, and CI is set: the browser test must run in CI. .ci/chromium.sh installs Debian's chromium package.`,
  );
}

let hr: HrApiServer;
let server: WorkflowServer;
let startServer: (port: number) => Promise<void>;
/** The origins of the servers the tests start: the only ones the page may reach. */
const servers = new Set<string>();
let url: string;
let browser: BrowserContext;
let page: Page;
let profile: string;
let shots: string;
/** Records what goes wrong in `tab`: console errors and uncaught exceptions. */
function watch(tab: Page): void {
  tab.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  tab.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
}

/** Run in the page (as text: the tests are type-checked without the DOM's types): keeps in window.replyTexts every text a reply's paragraph showed. */
const RECORD_REPLY_TEXTS = `{
  const seen = (window.replyTexts = []);
  new MutationObserver((records) => {
    for (const record of records) {
      const target = record.target instanceof Element ? record.target : record.target.parentElement;
      const text = target?.closest(".message.assistant .text")?.textContent;
      if (text) seen.push(text);
    }
  }).observe(document.getElementById("messages"), { childList: true, subtree: true, characterData: true });
}`;
/** What the page did that it should not: console errors, uncaught exceptions, requests off 127.0.0.1. */
const problems: string[] = [];

describe.skipIf(!haveChromium)("the web page in Chromium", () => {
  beforeAll(async () => {
    hr = await startHrApiServer({ apiKey: "hr-secret" });
    const agent = new FunctionCallingAgent({
      llm: new OfflineDemoLLM(),
      tools: [...calculatorTools, restApiTool({ baseURL: hr.baseURL, description: "The HR API.", headers: { authorization: "Bearer hr-secret" } })],
      needsApproval: (call) => call.name === "call_rest_api" && (call.input as { method?: string }).method !== "GET",
      timeout: null,
    });
    profile = await mkdtemp(join(tmpdir(), "stepflow-chromium-"));
    // A SQLite store, so that the last test can restart the server and find its runs.
    startServer = async (port) => {
      server = new WorkflowServer({ workflows: { agent }, store: `sqlite:${join(profile, "server.db")}`, webRoot: await webPageDirectory() });
      ({ url } = await server.listen({ port, host: "127.0.0.1" }));
      servers.add(new URL(url).origin);
    };
    await startServer(0);
    shots = process.env.STEPFLOW_SCREENSHOTS ?? (await mkdtemp(join(tmpdir(), "stepflow-screenshots-")));
    await mkdir(shots, { recursive: true });
    console.log(`web page screenshots: ${shots}`);
    browser = await launchChromium(profile);
    // Everything the page needs comes from the server: no CDN, nothing else on the network.
    // (Watched, not intercepted: Chromium's request interception holds back streamed responses.)
    browser.on("request", (request) => {
      const target = new URL(request.url());
      if (!servers.has(target.origin) && target.protocol !== "data:") problems.push(`request off the server: ${target.href}`);
    });
    // CI runs the other test files beside this one on two cores: give each wait room (no sleeps: every wait is for a state).
    browser.setDefaultTimeout(45_000);
    page = browser.pages()[0] ?? (await browser.newPage());
    watch(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await hr?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it("streams the agent's answer to the arithmetic question token by token", { timeout: 120_000 }, async () => {
    await page.goto(url);
    await page.locator("#workflow option[value=agent]").waitFor({ state: "attached" });
    // Every text the reply's paragraph showed, in order: proof that it grew as tokens came.
    await page.evaluate(RECORD_REPLY_TEXTS);
    await page.getByLabel("Message").fill("What is (2123 + 2321) * 312?");
    await page.getByLabel("Message").press("Enter");
    const reply = page.locator(".message.assistant").last();
    await reply.locator(".text", { hasText: "1386528" }).waitFor();
    await reply.locator(".status", { hasText: "Done" }).waitFor();
    expect(await reply.locator(".text").innerText()).toBe("(2123 + 2321) * 312 = 1386528");
    const texts = (await page.evaluate("window.replyTexts")) as string[];
    expect(texts[0]).toBe("(2123 ");
    expect(texts.at(-1)).toBe("(2123 + 2321) * 312 = 1386528");
    expect(new Set(texts).size).toBeGreaterThanOrEqual(5);
    // The tool calls are shown with their results.
    expect(await reply.locator(".tool").allInnerTexts()).toEqual([expect.stringMatching(/add[\s\S]*4444/), expect.stringMatching(/multiply[\s\S]*1386528/)]);
    await page.screenshot({ path: join(shots, "1-chat-arithmetic.png") });
  });

  it("fires Lawson only after the Approve button is clicked", { timeout: 120_000 }, async () => {
    await page.getByLabel("Message").fill("Fire Lawson");
    await page.getByRole("button", { name: "Send" }).click();
    const reply = page.locator(".message.assistant").last();
    const approval = reply.getByRole("group", { name: "Approval needed" });
    await approval.waitFor();
    expect(await approval.innerText()).toContain('Run call_rest_api with {"method":"DELETE","path":"/api/users/7"}?');
    expect(hr.users.some((user) => user.last_name === "Lawson")).toBe(true); // nothing deleted while the question waits
    // Deny has the focus, so Enter never approves a DELETE; the status says who the run waits for.
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Deny");
    await reply.locator(".turn-footer .status", { hasText: "Waiting for your approval" }).waitFor();
    await page.screenshot({ path: join(shots, "2-approval-asked.png") });
    await approval.getByRole("button", { name: "Approve" }).click();
    await reply.locator(".text", { hasText: "Done: Michael Lawson (id 7) has been removed." }).waitFor();
    await reply.locator(".status", { hasText: "Done" }).waitFor();
    expect(await reply.getByRole("status").filter({ hasText: "Approved" }).count()).toBe(1);
    expect(hr.users.some((user) => user.last_name === "Lawson")).toBe(false);
    expect(hr.requests.filter((r) => r.method === "DELETE").map((r) => r.path)).toEqual(["/api/users/7"]);
    await page.screenshot({ path: join(shots, "3-approved.png") });
  });

  it("fires no one when Deny is clicked, and the agent gives the reason back", { timeout: 120_000 }, async () => {
    await page.getByLabel("Message").fill("Fire Eve Holt");
    await page.getByLabel("Message").press("Enter");
    const reply = page.locator(".message.assistant").last();
    const approval = reply.getByRole("group", { name: "Approval needed" });
    await approval.getByLabel("Reason").fill("Ask HR first.");
    await approval.getByRole("button", { name: "Deny" }).click();
    await reply.locator(".text", { hasText: "I did not fire Eve Holt:" }).waitFor();
    expect(await reply.locator(".text").innerText()).toContain("Ask HR first.");
    expect(hr.users.some((user) => user.last_name === "Holt")).toBe(true);
  });

  it("inspects the approved run: graph, step timings, events and saved context", { timeout: 120_000 }, async () => {
    await page.locator(".message.assistant").nth(1).getByRole("button", { name: "Inspect run" }).click();
    await page.locator("#runs-panel").waitFor();
    // The panel shows before its list of runs arrives: wait for the third run, then count.
    await page.locator("#runs button.run").nth(2).waitFor();
    expect(await page.locator("#runs button.run").count()).toBe(3);
    const graph = page.locator(".graph svg");
    await graph.waitFor();
    // The steps the run went through are drawn marked.
    expect(await page.locator(".graph svg .node.ran").count()).toBe(3);
    expect(await graph.getAttribute("aria-label")).toBe(
      "Graph of the workflow agent; this run went through prepareChatHistory, handleLlmInput, handleToolCalls.",
    );
    const spans = await page.locator(".spans .span-name").allInnerTexts();
    expect(spans.filter((name) => name === "handleToolCalls")).toHaveLength(3); // GET page 1, GET page 2, DELETE
    expect(spans[0]).toBe("prepareChatHistory");
    const events = await page.locator("table.events td:nth-child(3)").allInnerTexts();
    expect(events).toContain("agent.ToolApprovalRequestEvent");
    expect(events.at(-1)).toBe("RunEndedEvent");
    await page.locator("#run-detail").evaluate((element) => element.scrollTo(0, 0));
    await page.screenshot({ path: join(shots, "4-inspector.png") });
    await page.locator("details.context summary").click();
    const context = JSON.parse(await page.locator("details.context pre").innerText()) as Record<string, unknown>;
    expect(JSON.stringify(context)).toContain("Done: Michael Lawson (id 7) has been removed.");
    await page.screenshot({ path: join(shots, "5-saved-context.png") });
    expect(problems).toEqual([]);
  });

  it("continues the conversation from one message to the next, until New chat", { timeout: 120_000 }, async () => {
    await page.getByRole("tab", { name: "Chat" }).click();
    const ask = async (text: string) => {
      await page.getByLabel("Message").fill(text);
      await page.getByLabel("Message").press("Enter");
      const reply = page.locator(".message.assistant").last();
      await reply.locator(".status", { hasText: "Done" }).waitFor();
      return reply.locator(".text").innerText();
    };
    expect(await ask("My name is Logan")).toBe("Nice to meet you, Logan!");
    expect(await ask("What is my name?")).toBe("Your name is Logan.");
    await page.getByRole("button", { name: "New chat" }).click();
    expect(await page.locator(".message").count()).toBe(0);
    expect(await ask("What is my name?")).toBe("You haven't told me your name yet.");
    expect(problems).toEqual([]);
  });

  it("answers, from the inspector, a question a reloaded page no longer shows", { timeout: 120_000 }, async () => {
    await page.getByLabel("Message").fill("Fire Tobias Funke");
    await page.getByLabel("Message").press("Enter");
    await page.locator(".message.assistant").last().getByRole("group", { name: "Approval needed" }).waitFor();
    await page.reload();
    expect(await page.locator(".message").count()).toBe(0);
    await page.getByRole("tab", { name: "Runs" }).click();
    const waiting = page.locator("#runs button.run", { hasText: "Fire Tobias Funke" });
    await waiting.locator(".status", { hasText: "waiting" }).waitFor();
    await waiting.click();
    const approval = page.locator("#run-detail").getByRole("group", { name: "Approval needed" });
    expect(await approval.innerText()).toContain('{"method":"DELETE","path":"/api/users/9"}');
    await page.screenshot({ path: join(shots, "6-inspector-waiting.png") });
    await approval.getByRole("button", { name: "Approve" }).click();
    await page.locator("#run-detail .run-header .status", { hasText: "succeeded" }).waitFor();
    expect(hr.users.some((user) => user.last_name === "Funke")).toBe(false);
    // The result, as a tree that folds.
    expect(await page.locator("#run-detail section[aria-labelledby=result-title] .json-view").innerText()).toContain(
      "Done: Tobias Funke (id 9) has been removed.",
    );
    expect(problems).toEqual([]);
  });

  it("keeps the chat going across a server restart: the question asked before is answered after", { timeout: 150_000 }, async () => {
    await page.getByRole("tab", { name: "Chat" }).click();
    await page.getByLabel("Message").fill("Fire Rachel Howell");
    await page.getByLabel("Message").press("Enter");
    const reply = page.locator(".message.assistant").last();
    const approval = reply.getByRole("group", { name: "Approval needed" });
    await approval.waitFor();
    await server.close(); // the waiting run is saved in the SQLite store
    const before = problems.length;
    await startServer(Number(new URL(url).port));
    // The page's event stream reconnects by itself and picks up after the last event it had.
    await approval.getByRole("button", { name: "Approve" }).click();
    await reply.locator(".text", { hasText: "Done: Rachel Howell (id 12) has been removed." }).waitFor();
    await reply.locator(".status", { hasText: "Done" }).waitFor();
    expect(await reply.getByRole("group", { name: "Approval needed" }).count()).toBe(1); // asked again after the restart, shown once
    expect(await reply.locator(".text").allInnerTexts()).toEqual(["Done: Rachel Howell (id 12) has been removed."]);
    expect(hr.requests.filter((r) => r.method === "DELETE" && r.path === "/api/users/12")).toHaveLength(1);
    await page.screenshot({ path: join(shots, "7-after-restart.png") });
    // While the server was down, Chromium logged the refused reconnections; nothing else may go wrong.
    expect(problems.slice(before).filter((p) => !p.includes("ERR_CONNECTION_REFUSED"))).toEqual([]);
  });

  it("stops a run waiting for approval: it says Stopped, and no question is left waiting", { timeout: 120_000 }, async () => {
    await page.getByLabel("Message").fill("Fire Eve Holt");
    await page.getByLabel("Message").press("Enter");
    const reply = page.locator(".message.assistant").last();
    await reply.getByRole("group", { name: "Approval needed" }).waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await reply.locator(".turn-footer .status", { hasText: "Stopped" }).waitFor();
    expect(await reply.innerText()).not.toMatch(/waiting for your (answer|approval)/);
    expect(await reply.locator(".tool").last().locator(".result").innerText()).toBe("not run: the run was stopped");
    expect(await reply.getByRole("group", { name: "Approval needed" }).count()).toBe(0);
    expect(hr.users.some((user) => user.last_name === "Holt")).toBe(true);
  });

  it("asks for the server's token when the API refuses the page, and keeps it for the tab", { timeout: 120_000 }, async () => {
    const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools });
    const locked = new WorkflowServer({ workflows: { agent }, store: "memory:", token: "s3cret-token", webRoot: await webPageDirectory() });
    const { url: lockedUrl } = await locked.listen({ port: 0, host: "127.0.0.1" });
    servers.add(new URL(lockedUrl).origin);
    try {
      const tab = await browser.newPage();
      const before = problems.length;
      watch(tab);
      await tab.goto(lockedUrl);
      const dialog = tab.getByRole("dialog", { name: "This server needs a token" });
      await dialog.waitFor();
      await dialog.getByLabel("Token").fill("s3cret-token");
      await dialog.getByRole("button", { name: "Use token" }).click();
      await tab.locator("#workflow option[value=agent]").waitFor({ state: "attached" });
      await tab.getByLabel("Message").fill("What is 6 times 7?");
      await tab.getByLabel("Message").press("Enter");
      await tab.locator(".message.assistant .text", { hasText: "6 * 7 = 42" }).waitFor();
      expect(await tab.evaluate("sessionStorage.getItem('stepflow.token')")).toBe("s3cret-token");
      // Chromium logs the one refused call (401) that made the page ask; nothing else may go wrong.
      expect(problems.slice(before)).toEqual([expect.stringContaining("401")]);
      await tab.close();
    } finally {
      await locked.close();
    }
  });
});
