/**
 * The web page in Chromium against an in-process server (offline model, memory store): what
 * the chat view loads (requests, and bytes: as sent, Brotli-compressed, and the files' sizes), how
 * long until it can be used, until the arithmetic answer is on screen, and what opening a
 * run's inspector adds (Mermaid's chunks) and how long its graph takes to draw. Each page
 * load in a fresh browser context (nothing cached). Needs Debian's chromium.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { OfflineDemoLLM } from "../src/llm/offline-model.ts";
import { WorkflowServer } from "../src/server/workflow-server.ts";
import { webPageDirectory } from "../src/web/web-page.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";
import { calculatorTools } from "../workflows/tools/calculator.ts";

const LOADS = Number(process.env.BENCH_WEB_LOADS ?? 20);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN;

export async function benchWebPage(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`The web page benchmark needs Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH).`);
  const dir = await webPageDirectory();
  const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: null });
  const server = new WorkflowServer({ workflows: { agent }, store: "memory:", webRoot: dir });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"] });
  const rows: Record<string, number[]> = {};
  const add = (name: string, value: number) => (rows[name] ??= []).push(value);
  try {
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      let bytes = 0;
      let sent = 0;
      let requests = 0;
      page.on("request", (request) => {
        requests++;
        const path = new URL(request.url()).pathname;
        if (path === "/" || path.startsWith("/assets/")) bytes += statSync(join(dir, path === "/" ? "index.html" : path)).size;
      });
      page.on("response", (response) => {
        const path = new URL(response.url()).pathname;
        if (path === "/" || path.startsWith("/assets/")) sent += Number(response.headers()["content-length"] ?? NaN);
      });
      const t0 = performance.now();
      await page.goto(url);
      await page.locator("#workflow option[value=agent]").waitFor({ state: "attached" });
      add("chat view usable (ms)", performance.now() - t0);
      await page.waitForLoadState("networkidle");
      add("chat view: kB sent", sent / 1024);
      add("chat view: kB of files", bytes / 1024);
      add("chat view: requests", requests);
      const t1 = performance.now();
      await page.getByLabel("Message").fill("What is (2123 + 2321) * 312?");
      await page.getByLabel("Message").press("Enter");
      await page.locator(".message.assistant .text", { hasText: "1386528" }).waitFor();
      add("Enter → 1386528 on screen (ms)", performance.now() - t1);
      await page.locator(".message.assistant .status", { hasText: "Done" }).waitFor();
      const [bytesBefore, sentBefore, requestsBefore] = [bytes, sent, requests];
      const t2 = performance.now();
      await page.getByRole("button", { name: "Inspect run" }).click();
      await page.locator(".graph svg").waitFor();
      add("Inspect run → graph drawn (ms)", performance.now() - t2);
      await page.waitForLoadState("networkidle");
      add("inspector: kB more sent", (sent - sentBefore) / 1024);
      add("inspector: kB more of files", (bytes - bytesBefore) / 1024);
      add("inspector: requests more", requests - requestsBefore);
      await context.close();
    }
  } finally {
    await browser.close();
    await server.close();
  }
  console.log(`${LOADS} page loads, each in a fresh browser context; "sent" is what the server sent (Brotli), "of files" the files' own sizes.\n`);
  console.log("| measure | p50 | p90 | max |\n| --- | ---: | ---: | ---: |");
  for (const [name, values] of Object.entries(rows)) {
    const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(name.includes("kB") ? 1 : 0));
    console.log(`| ${name} | ${fmt(quantile(values, 0.5))} | ${fmt(quantile(values, 0.9))} | ${fmt(Math.max(...values))} |`);
  }
}
