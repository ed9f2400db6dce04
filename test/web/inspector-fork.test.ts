/**
 * The inspector in Chromium, as someone debugging a run uses it: the run's id as its events
 * carry it, the human's approval decision in the timeline, an answer given in the page's form
 * as an event of the run saying who sent it, a tool's JSON result as a tree that
 * folds, a failed step's error and stack shown as text (never markup) with its sibling
 * cancelled on the graph, a fork of an ended run from a point it saved (the fork asks for its
 * approval again), and the comparison of the fork with the run it came from.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { tool } from "../../src/tools/tool.ts";
import { webPageDirectory } from "../../src/web/web-page.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { CHROMIUM, haveChromium, launchChromium } from "../support/chromium.ts";
import { planWorkflow, siblingsWorkflow } from "../support/inspector-workflows.ts";

if (!haveChromium && process.env.CI) throw new Error(`Chromium is not installed at ${CHROMIUM}, and CI is set: .ci/chromium.sh installs it.`);

const fired: number[] = [];
const fireEmployee = tool({
  name: "fire_employee",
  description: "Remove an employee from the HR system.",
  parameters: z.object({ id: z.number() }),
  execute: ({ id }) => {
    fired.push(id);
    return JSON.stringify({ removed: { id, name: "Michael Lawson" }, remaining: [{ id: 8, name: "Lindsay Ferguson" }] });
  },
});
const hr = new FunctionCallingAgent({
  llm: new ScriptedLLM((request) =>
    request.messages.some((m) => toolResultIdOf(m) !== undefined) ? { text: "Done." } : { toolCalls: [{ name: "fire_employee", input: { id: 7 } }] },
  ),
  tools: [fireEmployee],
  needsApproval: ["fire_employee"],
  timeout: null,
});

let server: WorkflowServer;
let url: string;
let client: WorkflowClient;
let browser: BrowserContext;
let page: Page;
let profile: string;
const problems: string[] = [];

async function approvalRequest(id: string): Promise<StreamedEvent> {
  for await (const ev of client.streamEvents(id)) if (ev.type === "agent.ToolApprovalRequestEvent") return ev;
  throw new Error("the run ended without asking");
}

describe.skipIf(!haveChromium)("the inspector in Chromium: decisions, results, stacks, forks, comparisons", () => {
  beforeAll(async () => {
    server = new WorkflowServer({
      workflows: { hr, plan: planWorkflow(), siblings: siblingsWorkflow('<img src=x onerror="window.stepflowPwned=1"> stock check failed') },
      store: "memory:",
      webRoot: await webPageDirectory(),
    });
    ({ url } = await server.listen({ port: 0, host: "127.0.0.1" }));
    client = new WorkflowClient({ baseUrl: url });
    profile = await mkdtemp(join(tmpdir(), "stepflow-chromium-inspector-"));
    browser = await launchChromium(profile);
    browser.setDefaultTimeout(45_000);
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console error: ${message.text()}`);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  let approved = "";
  let fork = "";

  it("shows the run's id, the approval decision in the timeline, and the tool's JSON result as a tree", { timeout: 120_000 }, async () => {
    const started = await client.start("hr", { input: "Fire Lawson" });
    const request = await approvalRequest(started.id);
    await client.approve(started.id, String(request.data.approvalId), true, "HR signed off.");
    await client.wait(started.id);
    approved = started.id;
    await page.goto(`${url}/#runs/${approved}`);
    const detail = page.locator("#run-detail");
    await detail.locator(".run-header .status", { hasText: "succeeded" }).waitFor();
    expect(await detail.locator(".run-id").innerText()).toBe(started.runId);
    expect(started.runId).toBe(approved);

    const decision = detail.locator("tr.decision");
    expect(await decision.locator("summary").innerText()).toBe('Approved by local user: HR signed off. — Run fire_employee with {"id":7}? (yes/no)');

    const output = detail.locator("tr", { has: page.locator("code", { hasText: "agent.FunctionOutputEvent" }) });
    await output.locator("summary").first().click();
    const tree = output.locator(".json-view").first();
    expect(await tree.innerText()).toMatch(/"removed":[\s\S]*"name":\s*"Michael Lawson"/);
    // Folds: the top object closes to one line.
    await tree.locator("summary").first().click();
    expect(await tree.locator("details").first().getAttribute("open")).toBeNull();
    expect(problems).toEqual([]);
  });

  it("forks the ended run from its start: a new run, linked to the first, that asks for the approval again", { timeout: 120_000 }, async () => {
    const before = fired.length;
    const detail = page.locator("#run-detail");
    await detail.getByRole("button", { name: "Fork from #0: start" }).click();
    await page.waitForURL((target) => target.hash.startsWith("#runs/") && !target.hash.includes(approved));
    fork = decodeURIComponent(new URL(page.url()).hash.slice("#runs/".length));
    expect(await detail.locator(".forked-from").innerText()).toBe(`${approved} at #0 (start)`);
    const approval = detail.getByRole("group", { name: "Approval needed" });
    await approval.waitFor();
    expect(fired.length).toBe(before);
    await approval.getByLabel("Reason").fill("Not this week.");
    await approval.getByRole("button", { name: "Deny" }).click();
    await detail.locator(".run-header .status", { hasText: "succeeded" }).waitFor();
    expect(fired.length).toBe(before);
    expect(await detail.locator("tr.decision summary").innerText()).toMatch(/^Denied by local user \(web page\): Not this week\./);
    expect((await client.getHandler(fork)).forkedFrom).toMatchObject({ handlerId: approved, seq: 0 });
    expect(problems).toEqual([]);
  });

  it("compares the fork with the run it came from: the decisions and what followed differ", { timeout: 120_000 }, async () => {
    const detail = page.locator("#run-detail");
    const picker = detail.getByLabel("Run to compare with");
    // The run it was forked from is offered first.
    expect(await picker.inputValue()).toBe(approved);
    await detail.getByRole("button", { name: "Compare" }).click();
    const comparison = detail.locator(".comparison");
    await comparison.waitFor();
    expect(await comparison.locator(".diff-counts").innerText()).toMatch(/^\d+ events the same; \d+ differ, \d+ only in A, \d+ only in B\.$/);
    const decisionRow = comparison.locator("tr.diff.changed", { hasText: "ApprovalDecision" });
    expect(await decisionRow.innerText()).toMatch(/Denied by local user[\s\S]*Approved by local user/);
    // The same events are hidden until asked for.
    const shown = await comparison.locator("tr.diff").count();
    expect(await comparison.locator("tr.diff.same").count()).toBe(0);
    await comparison.getByLabel("Show the events that are the same too").check();
    expect(await comparison.locator("tr.diff.same").count()).toBeGreaterThan(0);
    expect(await comparison.locator("tr.diff").count()).toBeGreaterThan(shown);
    expect(problems).toEqual([]);
  });

  it("shows an answer given in the page's form in the timeline: what arrived, as a tree, and who sent it", { timeout: 120_000 }, async () => {
    await page.goto(url);
    await page.locator("#workflow option[value=plan]").waitFor({ state: "attached" });
    await page.locator("#workflow").selectOption("plan");
    const form = page.getByRole("form", { name: "Start a run" });
    await form.getByLabel("Input (JSON)").fill("{}");
    await form.getByRole("button", { name: "Start run" }).click();
    const card = page.locator(".run-card").last();
    const question = card.getByRole("form", { name: "The run asks" });
    await question.getByText("Which plan?").waitFor();
    await question.getByLabel("Your answer").fill('{"plan":"pro","seats":3}');
    await question.getByRole("button", { name: "Send answer" }).click();
    await card.locator(".status", { hasText: "Done" }).waitFor();

    await card.getByRole("button", { name: "Inspect run" }).click();
    const detail = page.locator("#run-detail");
    await detail.locator(".run-header .status", { hasText: "succeeded" }).waitFor();
    const row = detail.locator("tr.received");
    expect(await row.count()).toBe(1);
    expect(await row.locator("code").first().innerText()).toBe("EventReceivedEvent");
    expect(await row.locator("summary").first().innerText()).toBe(
      'HumanResponseEvent from local user (web page): {"response":"{\\"plan\\":\\"pro\\",\\"seats\\":3}"}',
    );
    // In the run's order: after the question it answers.
    const types = await detail.locator("table.events tbody tr td:nth-child(3)").allInnerTexts();
    expect(types.indexOf("EventReceivedEvent")).toBeGreaterThan(types.indexOf("InputRequiredEvent"));
    await row.locator("summary").first().click();
    expect(await row.locator(".received-from").innerText()).toBe("HumanResponseEvent from local user (web page)");
    // The answer, JSON text, shown as a tree that folds.
    expect(await row.locator(".json-view").first().innerText()).toMatch(/"plan":\s*"pro"[\s\S]*"seats":\s*3/);
    expect(problems).toEqual([]);
  });

  it("shows a failed step's error and stack as text, its sibling cancelled, and the graph colouring them so", { timeout: 120_000 }, async () => {
    const started = await client.start("siblings", {});
    await client.wait(started.id);
    await page.goto(`${url}/#runs/${started.id}`);
    const detail = page.locator("#run-detail");
    await detail.locator(".run-header .status", { hasText: "failed" }).waitFor();
    expect(await detail.locator(".error").first().innerText()).toBe('Error: <img src=x onerror="window.stepflowPwned=1"> stock check failed');
    const stack = detail.locator(".stack-details pre.stack");
    expect(await stack.innerText()).toMatch(/^Error: <img src=x onerror="window\.stepflowPwned=1"> stock check failed\n\s+at /);
    // The failed step's row is open with its stack; nothing of it became markup.
    expect(await detail.locator("tr.failed pre.stack").innerText()).toContain("stock check failed");
    expect(await detail.locator("img").count()).toBe(0);
    expect(await page.evaluate("window.stepflowPwned")).toBeUndefined();
    // The steps' bars: the sibling cancelled, the failed step failed.
    expect(await detail.locator(".span.cancelled .span-name").allInnerTexts()).toEqual(["slow"]);
    expect(await detail.locator(".span.failed .span-name").allInnerTexts()).toEqual(["fast"]);
    // The graph: Mermaid gives each step's node the class the run's state names.
    await detail.locator(".graph svg").waitFor();
    expect(await detail.locator(".graph svg .node.failed").count()).toBe(1);
    expect(await detail.locator(".graph svg .node.cancelled").count()).toBe(1);
    expect(await detail.locator(".graph svg .node.running").count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
