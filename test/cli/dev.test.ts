/**
 * `stepflow run|draw|serve|dev <module>` as a user runs them: the built command, in a project
 * folder of its own whose flows.ts exports two workflows (test/fixtures/user-flows.ts).
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import { STEPFLOW_BIN, startCommand, userEnv, userProject } from "../support/user-project.ts";

let dir: string;
beforeAll(async () => {
  dir = await userProject();
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs `stepflow ...args` in the project to its end. */
function stepflow(args: string[], stdin = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [STEPFLOW_BIN, ...args], { cwd: dir, env: userEnv() });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe("stepflow run <module>", () => {
  it("runs the workflow named, asks its question on the terminal and prints the result", async () => {
    const run = await stepflow(["run", "./flows.ts", "orders", "--input", '{"item":"tea","quantity":2}'], "yes\n");
    expect(run.stderr).toContain("Ship 2 × tea? (yes/no) > ");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ shipped: true, item: "tea", quantity: 2, note: "on its way" });
  });

  it("prints a text result as text", async () => {
    const run = await stepflow(["run", "./flows.ts", "greeting", "-i", '{"name":"Ada"}']);
    expect(run).toMatchObject({ code: 0, stdout: "Hello, Ada!\n" });
  });

  it("refuses input the schema does not accept, JSON that is not JSON, and a module with two workflows but none named", async () => {
    const [tooMany, notJson, unnamed, missing] = await Promise.all([
      stepflow(["run", "./flows.ts", "orders", "--input", '{"item":"tea","quantity":20}']),
      stepflow(["run", "./flows.ts", "orders", "--input", "{item: tea}"]),
      stepflow(["run", "./flows.ts"]),
      stepflow(["run", "./nope.ts"]),
    ]);
    expect(tooMany).toMatchObject({ code: 2, stdout: "" });
    expect(tooMany.stderr).toMatch(/^stepflow: The input does not fit the input schema of orders: quantity: Too big: expected number to be <=10\.\n$/);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/^stepflow: --input takes JSON, like --input '\{"item":"tea"\}'; got "\{item: tea\}"/);
    expect(unnamed.stderr).toBe("stepflow: flows.ts exports 2 workflows: name one (greeting, orders).\n");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^stepflow: There is no file \.\/nope\.ts \(looked for .*nope\.ts\)\. Give the path of a \.ts or \.js module that exports your workflows\.\n$/,
    );
  });

  it("says what a run waits for when it is an event the terminal cannot send, not only when it times out", async () => {
    await writeFile(
      join(dir, "checkout.ts"),
      [
        'import { Event, StartEvent, StopEvent, Workflow, step, type Context } from "stepflow";',
        "class Payment extends Event<{ amount: number }> {}",
        "class Checkout extends Workflow<{}, string> {",
        "  @step({ accepts: [StartEvent], emits: [StopEvent] })",
        "  async pay(ctx: Context) {",
        "    const paid = await ctx.waitForEvent(Payment);",
        "    return new StopEvent({ result: `paid ${paid.amount}` });",
        "  }",
        "}",
        "export const checkout = new Checkout({ timeout: 3 });",
        "",
      ].join("\n"),
    );
    const run = await stepflow(["run", "./checkout.ts"]);
    expect(run.stderr).toContain("· waiting for Payment from outside; stepflow run sends only the answers to questions (InputRequiredEvent)\n");
    expect(run.stderr).toContain("timed out after 3 seconds");
    expect(run.code).not.toBe(0);
  });

  it("says which file exports no workflow, and what to export", async () => {
    await writeFile(join(dir, "empty.ts"), "export const answer = 42;\n");
    const run = await stepflow(["run", "./empty.ts"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "stepflow: ./empty.ts exports no workflow (its exports: answer). Export an instance, like `export const orders = new OrderFlow();`",
    );
  });

  it("says what to change when a .ts file would load as CommonJS (npm init's package.json)", async () => {
    await mkdir(join(dir, "cjs"));
    await writeFile(join(dir, "cjs", "package.json"), '{ "name": "cjs" }\n');
    await writeFile(join(dir, "cjs", "flows.ts"), await readFile(join(dir, "flows.ts"), "utf8"));
    const run = await stepflow(["run", "./cjs/flows.ts"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'stepflow: ./cjs/flows.ts is loaded as CommonJS: no package.json above it says "type": "module". Add "type": "module" to your package.json (stepflow is an ES module package), or name the file flows.mts.\n',
    );
  });
});

describe("stepflow draw <module>", () => {
  it("prints one workflow's flowchart, and writes an HTML page that needs no network", async () => {
    const one = await stepflow(["draw", "./flows.ts", "orders"]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^flowchart TD\n {2}step_confirm\["confirm"\]/);
    const html = await stepflow(["draw", "./flows.ts", "--html", "flows.html"]);
    expect(html).toMatchObject({ code: 0, stdout: "Wrote flows.html; open it in a browser.\n" });
    const page = await readFile(join(dir, "flows.html"), "utf8");
    expect(page).toContain("<h2>orders</h2>");
    expect(page).toContain("<h2>greeting</h2>");
    // Mermaid is inlined, not fetched: no <script src>, no CDN.
    expect(page).not.toMatch(/<script[^>]+src=/);
    expect(page).not.toContain("cdn.jsdelivr.net");
    expect(page).toContain('globalThis["mermaid"]');
  });
});

describe("stepflow serve <module> and the CLI's refusals", () => {
  it("serves the module's workflows, the schema's in the list", async () => {
    const serve = startCommand(dir, ["serve", "./flows.ts", "--port", "0", "--store", "memory:"]);
    try {
      const url = (await serve.line(/listening on/)).replace("stepflow server listening on ", "");
      const client = new WorkflowClient({ baseUrl: url });
      const workflows = await client.listWorkflows();
      // A module's exports come in alphabetical order.
      expect(workflows.map((w) => w.name)).toEqual(["greeting", "orders"]);
      expect(workflows.find((w) => w.name === "orders")?.inputSchema).toMatchObject({
        properties: { quantity: { type: "integer", maximum: 10 } },
        required: ["item", "quantity"],
      });
      const done = await client.run("greeting", { name: "Bo" });
      expect(done.result).toBe("Hello, Bo!");
      expect(serve.stderr()).toContain("Workflows: greeting, orders (from flows.ts).");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  });

  it("says a port is busy and what to do, instead of EADDRINUSE", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const run = await stepflow(["serve", "./flows.ts", "--port", String(port), "--store", "memory:"]);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        `stepflow: Port ${port} on 127.0.0.1 is in use (another stepflow serve?). Stop what listens there, or pick another port: --port ${port + 1}, or --port 0 for any free one.\n`,
      );
    } finally {
      taken.close();
    }
  });

  it("lists --store, --llm and --model in serve --help", async () => {
    const help = await stepflow(["serve", "--help"]);
    for (const option of ["--store <url>", "--llm <kind>", "--model <name>", "[module]"]) expect(help.stdout).toContain(option);
  });

  it("does not send a mistyped command or a slash command to the model", async () => {
    const [typo, slash] = await Promise.all([stepflow(["serv"]), stepflow(["/help"])]);
    expect(typo).toMatchObject({ code: 2, stdout: "" });
    expect(typo.stderr).toBe(
      'stepflow: There is no command "serv". Did you mean stepflow serve? To ask the model one word, quote it as a question: stepflow "serv?"\n',
    );
    expect(slash.code).toBe(2);
    expect(slash.stderr).toContain("stepflow: /help is a chat command: start the chat with stepflow, then type it.");
  });

  it("answers /help in the chat instead of asking the model", async () => {
    const chat = await stepflow([], "/help\n/hepl\n");
    expect(chat.code).toBe(0);
    expect(chat.stderr).toContain("Commands: /reset starts over, /exit (or Ctrl-C) quits, /help shows this.");
    expect(chat.stderr).toContain("/hepl is not a chat command.");
    expect(chat.stdout).toBe("");
  });
});
