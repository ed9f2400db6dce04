/**
 * `@libsql/client` and `pg` are optional peer dependencies: an application without them can
 * import stepflow/sessions and keep sessions in memory, and opening a store whose driver is
 * missing says which package to install. A child process runs with a resolve hook that makes
 * both packages unresolvable, as in an application that did not install them.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const HOOK = `export async function resolve(specifier, context, next) {
  if (specifier === "pg" || specifier === "@libsql/client") {
    const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}`;
const WITHOUT_DRIVERS = `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});`)}`;
const SESSIONS = pathToFileURL(join(import.meta.dirname, "..", "..", "src", "sessions", "index.ts")).href;
const dir = mkdtempSync(join(tmpdir(), "stepflow-drivers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `script` (ESM, with `sessions` = stepflow/sessions) where neither driver is installed; its stdout and stderr. */
function withoutDrivers(script: string): Promise<{ stdout: string; stderr: string }> {
  const program = `const sessions = await import(${JSON.stringify(SESSIONS)});\n${script}`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "--import", WITHOUT_DRIVERS, "--input-type=module", "-e", program],
      { cwd: join(import.meta.dirname, "..", "..") },
      (_error, stdout, stderr) => resolve({ stdout, stderr }),
    );
  });
}

const report = `const report = (error) => console.log(error.name + " (" + error.packageName + "): " + error.message);`;

describe("session stores without their database drivers installed", () => {
  it("stepflow/sessions imports, and the memory store works", async () => {
    const run = await withoutDrivers(
      `const store = await sessions.openSessionStore("memory:"); console.log(store.description ?? "memory", typeof sessions.Sessions);`,
    );
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toMatch(/ function$/);
  });

  it("a SQLite store names @libsql/client", async () => {
    const run = await withoutDrivers(
      `${report}\nawait sessions.openSessionStore("sqlite:${join(dir, "chat.db")}").catch(report);\nconsole.log(String(await sessions.SqliteSessionStore.open("${join(dir, "other.db")}").catch((e) => e instanceof sessions.SessionStoreError)));`,
    );
    expect(run.stderr).toBe("");
    expect(run.stdout.trim().split("\n")).toEqual([
      "SessionDriverMissingError (@libsql/client): The SQLite session store needs the package @libsql/client, which is not installed. Install it next to stepflow: npm install @libsql/client",
      "true",
    ]);
  });

  it("a PostgreSQL store names pg, before any connection is tried", async () => {
    const run = await withoutDrivers(`${report}\nawait sessions.openSessionStore("postgres://app:secret@127.0.0.1:9/db").catch(report);`);
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe(
      "SessionDriverMissingError (pg): The PostgreSQL session store needs the package pg, which is not installed. Install it next to stepflow: npm install pg",
    );
  });
});
