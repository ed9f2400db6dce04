/**
 * Every file in examples/ runs as a user would run it and prints what it should. A new
 * example needs its expected output here: the last test fails for an example without one.
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, runTypeScript } from "./support/run-typescript.ts";

const EXPECTED: Record<string, string[]> = {
  "minimal-workflow.ts": ["Why did the chicken cross the road? (joke #1)", "Why did the duck cross the road? (joke #2)"],
  "branching-fan-out.ts": ["4 lamps: ship from Berlin and Porto", "9 lamps: backorder: 4 missing"],
  "human-in-the-loop.ts": [
    "asked: Fire Lawson? (yes/no)",
    "result: Lawson fired",
    "asked: Fire Ferguson? (yes/no)",
    "saved and ended the waiting run",
    "result after restore: Ferguson kept",
  ],
  "agent-streaming.ts": [
    'calling add({"x":2123,"y":2321})',
    "  add returned 4444",
    'calling multiply({"x":4444,"y":312})',
    "  multiply returned 1386528",
    "(2123 + 2321) * 312 = 1386528",
    "final answer: (2123 + 2321) * 312 = 1386528 (2 tool calls)",
    "Your name is Logan.",
  ],
  "openai-compatible-server.ts": [
    'model calls add({"x":2123,"y":2321})',
    "  → 4444",
    'model calls multiply({"x":4444,"y":312})',
    "  → 1386528",
    "(2123 + 2321) * 312 = 1386528.",
  ],
  "sessions.ts": [
    "Nice to meet you, Alice!",
    "Your name is Alice.",
    "  user: Hello! My name is Alice.",
    "  assistant: Nice to meet you, Alice!",
    "  user: What is my name?",
    "  assistant: Your name is Alice.",
    "session alice: 4 messages, version 2",
  ],
  "structured-output.ts": [
    "server got response_format answer with fields total, explanation",
    '{"total":4444,"explanation":"2123 + 2321"}',
    "total + 1 = 4445 (2123 + 2321)",
  ],
  "rest-api-approval.ts": [
    "HR API got GET /api/users?page=1",
    'model reads: {"status":200,"body":{"page":1,"total_pages":2,"data":[{"id"…',
    "HR API got GET /api/users?page=2",
    'model reads: {"status":200,"body":{"page":2,"total_pages":2,"data":[{"id"…',
    'asked: Run call_rest_api with {"method":"DELETE","path":"/api/users/7"}? (yes/no)',
    "HR API got DELETE /api/users/7",
    'model reads: {"status":204,"body":""}',
    "agent: Michael Lawson (id 7) has been removed from the HR system.",
    "employees left: 8; Lawson still there: false",
  ],
};

const examples = readdirSync(join(REPO, "examples"))
  .filter((name) => name.endsWith(".ts"))
  .sort();

describe("examples", () => {
  for (const name of examples) {
    it(`${name} runs and prints what it shows`, async () => {
      const run = await runTypeScript(`examples/${name}`);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout.trimEnd().split("\n")).toEqual(EXPECTED[name]);
    }, 120_000);
  }

  it("every example has its expected output here", () => {
    expect(examples.filter((name) => !(name in EXPECTED))).toEqual([]);
    expect(Object.keys(EXPECTED).filter((name) => !examples.includes(name))).toEqual([]);
  });

  it("examples type-check under the repository's strict settings", async () => {
    const tsc = join(REPO, "node_modules", "typescript", "bin", "tsc");
    const output = await new Promise<string>((resolve) => {
      execFile(process.execPath, [tsc, "-p", "examples/tsconfig.json"], { cwd: REPO }, (_error, stdout, stderr) => resolve(stdout + stderr));
    });
    expect(output).toBe("");
  }, 120_000);

  // zod too: the schemas of tools and of responseFormat are written with it.
  it("examples import stepflow by its package name only", async () => {
    const { readFile } = await import("node:fs/promises");
    for (const name of examples) {
      const source = await readFile(join(REPO, "examples", name), "utf8");
      const specifiers = [...source.matchAll(/from "([^"]+)"/g)].map((m) => m[1] as string);
      expect(
        specifiers.filter((s) => !s.startsWith("node:") && s !== "zod" && !/^stepflow(\/|$)/.test(s)),
        name,
      ).toEqual([]);
    }
  });
});
