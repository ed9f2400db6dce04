/** `stepflow serve` as a user starts it: from the sources, no key, the offline model. */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";
import { afterAll, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import { REPO } from "../support/run-typescript.ts";

/** A request to 127.0.0.1:`port` naming a host a rebinding web page would: its own. */
function foreignHost(port: number, method: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers: { Host: "rebind.attacker.example", "Content-Type": "application/json" } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(method === "POST" ? JSON.stringify({ input: { input: "What is 2 + 2?" } }) : undefined);
  });
}

const CLI = join(REPO, "src/cli/main.ts");
// The server runs in a folder of its own (its default store is made there): tsx is named by path.
const TSX = pathToFileURL(join(REPO, "node_modules/tsx/dist/loader.mjs")).href;
const dir = mkdtempSync(join(tmpdir(), "stepflow-serve-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "STEPFLOW_SERVER_TOKEN"]) delete env[name];

it("prints the URL, answers with the offline model, and stops cleanly on SIGTERM", { timeout: 180_000 }, async () => {
  const child = spawn(process.execPath, ["--import", TSX, CLI, "serve", "--port", "0"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  try {
    const line = await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve)),
      exited.then((code) => Promise.reject(new Error(`stepflow serve exited (${code}) before listening: ${stderr}`))),
    ]);
    expect(line).toMatch(/^stepflow server listening on http:\/\/127\.0\.0\.1:\d+$/);
    const client = new WorkflowClient({ baseUrl: line.replace("stepflow server listening on ", "") });
    const done = await client.run("agent", { input: "What is (2123 + 2321) * 312?" });
    expect(done.result).toMatchObject({ response: { content: "(2123 + 2321) * 312 = 1386528" } });
    expect((await client.listWorkflows())[0]?.description).toBe("The function-calling agent with the calculator tools, on the offline demo model.");
    // A web page reaching the port by DNS rebinding names its own host: it starts and reads nothing.
    const port = Number(new URL(line.replace("stepflow server listening on ", "")).port);
    const before = (await client.listHandlers()).length;
    for (const [method, path] of [
      ["POST", "/api/workflows/agent/start"],
      ["GET", "/api/handlers"],
    ] as const) {
      const answer = await foreignHost(port, method, path);
      expect(answer.status).toBe(421);
      expect(answer.body).toContain("host_not_allowed");
    }
    expect((await client.listHandlers()).length).toBe(before);
    expect(stderr).toContain("Access: programs on this machine, no token");
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exited).toBe(0);
  expect(stderr).toContain("Stopping: runs in progress are saved and continue at the next start.");
  // The default store is a SQLite file in the working directory.
  expect(spawnSync("ls", [join(dir, ".stepflow")], { encoding: "utf8" }).stdout).toContain("server.db");
});

it("with --hr-demo, fires Lawson through the HR API once the DELETE is approved", { timeout: 180_000 }, async () => {
  const child = spawn(process.execPath, ["--import", TSX, CLI, "serve", "--port", "0", "--store", "memory:", "--hr-demo"], {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  try {
    const line = await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve)),
      exited.then((code) => Promise.reject(new Error(`stepflow serve exited (${code}) before listening: ${stderr}`))),
    ]);
    const client = new WorkflowClient({ baseUrl: line.replace("stepflow server listening on ", "") });
    const { id } = await client.start("agent", { input: "Fire Lawson" });
    let asked: string | undefined;
    for await (const ev of client.streamEvents(id)) {
      if (ev.type !== "agent.ToolApprovalRequestEvent") continue;
      expect(ev.data.toolCall).toMatchObject({ name: "call_rest_api", input: { method: "DELETE", path: "/api/users/7" } });
      asked = String(ev.data.approvalId);
      await client.approve(id, asked, true);
    }
    expect(asked).toBeDefined();
    const done = await client.getHandler(id);
    expect(done.result).toMatchObject({ response: { content: "Done: Michael Lawson (id 7) has been removed." } });
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exited).toBe(0);
  expect(stderr).toMatch(/HR demo API on http:\/\/127\.0\.0\.1:\d+: ask the agent to "Fire Lawson"/);
});

it("refuses --host 0.0.0.0 without a token, unless told --allow-unauthenticated", { timeout: 60_000 }, async () => {
  const result = spawnSync(process.execPath, ["--import", TSX, CLI, "serve", "--port", "0", "--host", "0.0.0.0", "--store", "memory:"], {
    cwd: dir,
    env,
    encoding: "utf8",
  });
  expect(result.status).toBe(2);
  expect(result.stderr).toMatch(
    /^stepflow: --host 0\.0\.0\.0 without a token would let anyone who reaches this machine start runs, read them and approve tool calls\./,
  );
  expect(result.stderr).toContain("--allow-unauthenticated");

  const child = spawn(process.execPath, ["--import", TSX, CLI, "serve", "--port", "0", "--host", "0.0.0.0", "--store", "memory:", "--allow-unauthenticated"], {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  try {
    const line = await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve)),
      exited.then((code) => Promise.reject(new Error(`stepflow serve exited (${code}) before listening: ${stderr}`))),
    ]);
    expect(line).toMatch(/^stepflow server listening on http:\/\/0\.0\.0\.0:\d+$/);
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exited).toBe(0);
  expect(stderr).toContain("Warning: no token: anyone who reaches 0.0.0.0 on the network can start runs, read them and approve tool calls");
});

it("refuses a port that is not one, saying what it takes", () => {
  const result = spawnSync(process.execPath, ["--import", TSX, CLI, "serve", "--port", "http"], { cwd: dir, env, encoding: "utf8" });
  expect(result.status).toBe(2);
  expect(result.stderr).toBe('stepflow: --port takes a port number from 0 to 65535 (0: any free port); got "http".\n');
});
