/**
 * The layer check (`npm run lint` runs dependency-cruiser with .dependency-cruiser.cjs) must
 * fail on a forbidden import: this test lays out a small tree with the repository's folder
 * names, some imports allowed and some forbidden, runs the real config on it and expects
 * exactly the forbidden ones reported.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const tree = mkdtempSync(join(tmpdir(), "stepflow-layers-"));
afterAll(() => rmSync(tree, { recursive: true, force: true }));

/** Each file of the tree and the files it imports. */
const files: Record<string, string[]> = {
  "src/core/run.ts": ["src/core/errors.ts", "src/core/journal/types.ts"],
  "src/core/errors.ts": [],
  "src/core/context.ts": ["workflows/function-calling-agent.ts", "src/journal/sqlite-journal.ts", "src/llm/openai.ts"],
  "src/core/journal/types.ts": ["src/core/errors.ts"],
  "src/journal/sqlite-journal.ts": ["src/core/journal/types.ts", "src/sessions/load-driver.ts", "src/llm/openai.ts"],
  "src/tools/secrets.ts": ["src/dbos/worker.ts"],
  "src/tools/tool-calls.ts": ["src/core/errors.ts", "src/llm/openai.ts"],
  "src/llm/openai.ts": ["src/core/errors.ts", "src/tools/secrets.ts", "src/sessions/sessions.ts"],
  "src/otel/index.ts": ["src/core/run.ts", "src/llm/openai.ts"],
  "src/mcp/mcp-tools.ts": ["src/core/errors.ts", "src/tools/secrets.ts", "src/llm/openai.ts"],
  "src/sessions/load-driver.ts": [],
  "src/sessions/sessions.ts": ["src/core/context.ts", "workflows/function-calling-agent.ts"],
  "src/cli/main.ts": ["workflows/function-calling-agent.ts", "events/index.ts", "src/sessions/sessions.ts", "src/dbos/worker.ts"],
  "src/dbos/worker.ts": ["src/core/run.ts", "src/journal/sqlite-journal.ts", "workflows/function-calling-agent.ts"],
  "events/index.ts": ["src/cli/main.ts"],
  "workflows/function-calling-agent.ts": ["src/llm/openai.ts", "src/tools/tool-calls.ts", "events/index.ts", "test/support/helper.ts"],
  "test/support/helper.ts": ["src/core/run.ts"],
  "test/run.test.ts": ["test/support/helper.ts", "bench/measure.ts"],
  "bench/measure.ts": [],
  "src/client/types.ts": [],
  "src/client/workflow-client.ts": ["src/client/types.ts", "src/core/errors.ts", "src/server/app.ts"],
  "src/server/app.ts": ["src/client/types.ts", "src/sessions/sessions.ts", "workflows/function-calling-agent.ts"],
};

for (const [file, imports] of Object.entries(files)) {
  const path = join(tree, file);
  mkdirSync(dirname(path), { recursive: true });
  const relativeTo = (target: string) => {
    const up = "../".repeat(file.split("/").length - 1);
    return up === "" ? `./${target}` : `${up}${target}`;
  };
  writeFileSync(path, `${imports.map((target, i) => `import * as m${i} from "${relativeTo(target)}";\nexport const u${i} = m${i};\n`).join("")}export {};\n`);
}
writeFileSync(
  join(tree, "tsconfig.json"),
  JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", allowImportingTsExtensions: true, noEmit: true } }),
);

it("fails on every forbidden import, and only on those", { timeout: 60_000 }, async () => {
  const run = promisify(execFile)(
    process.execPath,
    [
      join(root, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs"),
      "--config",
      join(root, ".dependency-cruiser.cjs"),
      "src",
      "workflows",
      "events",
      "test",
      "bench",
    ],
    { cwd: tree, maxBuffer: 16 * 1024 * 1024 },
  );
  const failure = await run.then(
    () => undefined,
    (error: { code?: number; stdout?: string }) => error,
  );
  // The exit code is what fails CI; the lines are what a contributor reads.
  expect(failure?.code).toBe(14); // dependency-cruiser exits with the number of violations
  const found = (failure?.stdout ?? "")
    .split("\n")
    .flatMap((line) => /^\s*error (.+)$/.exec(line)?.[1] ?? [])
    .sort();
  expect(found).toEqual(
    [
      "core-is-independent: src/core/context.ts → workflows/function-calling-agent.ts",
      "core-is-independent: src/core/context.ts → src/journal/sqlite-journal.ts",
      "core-is-independent: src/core/context.ts → src/llm/openai.ts",
      "journal-below-llm-and-apps: src/journal/sqlite-journal.ts → src/llm/openai.ts",
      "tools-below-llm: src/tools/tool-calls.ts → src/llm/openai.ts",
      "llm-below-sessions-and-apps: src/llm/openai.ts → src/sessions/sessions.ts",
      "sessions-below-apps: src/sessions/sessions.ts → workflows/function-calling-agent.ts",
      "workflows-and-events-below-cli: events/index.ts → src/cli/main.ts",
      "otel-on-the-core-only: src/otel/index.ts → src/llm/openai.ts",
      "mcp-beside-tools: src/mcp/mcp-tools.ts → src/llm/openai.ts",
      "no-test-code-in-the-product: workflows/function-calling-agent.ts → test/support/helper.ts",
      "client-runs-in-browsers: src/client/workflow-client.ts → src/server/app.ts",
      "dbos-beside-the-apps: src/dbos/worker.ts → workflows/function-calling-agent.ts",
      "nothing-below-imports-dbos: src/tools/secrets.ts → src/dbos/worker.ts",
    ].sort(),
  );
});
