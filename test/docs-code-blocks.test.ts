/**
 * Every ```ts, ```typescript, ```js and ```javascript block in README.md and docs/*.md is a
 * complete program: this test writes each one to a file under .stepflow/doc-blocks/, runs it
 * with `node --import tsx` from the repository root (so `import … from "stepflow"` resolves as
 * it does for a user), and type-checks the TypeScript ones under the repository's strict
 * settings and exactOptionalPropertyTypes.
 *
 * Conventions for writers of the docs:
 * - A block imports everything it uses, from "stepflow" and its subpaths (or node:*), runs
 *   offline (the offline or scripted LLM, or a server it starts on 127.0.0.1), exits on its
 *   own with code 0, writes nothing to stderr, and prints its result.
 * - `// prints: TEXT` at the end of a line states one line the block prints. When a block has
 *   such comments, its output must be exactly those lines, in order; so state every line it
 *   prints, or none.
 * - A block whose first line is `// Needs PostgreSQL: DATABASE_URL` runs only when the tests
 *   have a PostgreSQL (DATABASE_URL), with DATABASE_URL set to a database of its own.
 * - A block whose first line is `// Runs against a provider: NAME` is type-checked here and
 *   run by test/docs-providers.test.ts against NAME's local wire server.
 * - Blocks of other languages (sh, text, json…) are not run; keep them true by hand.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO, runTypeScript } from "./support/run-typescript.ts";
import { freshDatabase } from "./support/postgres-database.ts";

interface CodeBlock {
  /** `docs/agent.md:42`: where the block's opening fence is. */
  readonly where: string;
  readonly language: "ts" | "js";
  readonly code: string;
  /** The lines the block states it prints (its `// prints:` comments), in order. */
  readonly prints: string[];
}

/** The first line of a block that test/docs-providers.test.ts runs against a provider's wire server. */
const PROVIDER_BLOCK = "// Runs against a provider: ";

const LANGUAGES: Record<string, "ts" | "js"> = { ts: "ts", typescript: "ts", js: "js", javascript: "js" };

function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(join(REPO, file), "utf8").split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i] as string);
    if (!open) continue;
    const fence = open[2] as string;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] as string).trim().startsWith(fence); i++) body.push(lines[i] as string);
    const language = LANGUAGES[(open[3] ?? "").toLowerCase()];
    if (!language) continue;
    const prints = body.flatMap((line) => {
      const stated = /\/\/ prints: (.*)$/.exec(line);
      return stated ? [(stated[1] as string).trimEnd()] : [];
    });
    blocks.push({ where: `${file}:${start + 1}`, language, code: body.join("\n"), prints });
  }
  return blocks;
}

const docs = [
  "README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];
const blocks = docs.flatMap(codeBlocks);
// One folder per test process: other runs in the same checkout must not overwrite these files.
const dir = join(REPO, ".stepflow", "doc-blocks", String(process.pid));
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const fileOf = new Map<CodeBlock, string>();
for (const block of blocks) {
  const name = `${block.where.replace(/[/.:]/g, "_")}.${block.language === "ts" ? "ts" : "mjs"}`;
  writeFileSync(join(dir, name), `${block.code}\n`);
  fileOf.set(block, join(dir, name));
}
// exactOptionalPropertyTypes on top of the repository's settings: users copy these blocks into
// projects that turn it on (the consumer check's do), where an optional property is not `| undefined`.
writeFileSync(
  join(dir, "tsconfig.json"),
  JSON.stringify({ extends: relative(dir, join(REPO, "tsconfig.json")), compilerOptions: { exactOptionalPropertyTypes: true }, include: ["*.ts"] }),
);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("code blocks in README.md and docs/", () => {
  it("finds the docs and their blocks", () => {
    expect(docs).toContain("docs/engine.md");
    expect(blocks.length).toBeGreaterThan(10);
  });

  for (const block of blocks) {
    if (block.code.startsWith(PROVIDER_BLOCK)) continue;
    const needsPostgres = block.code.startsWith("// Needs PostgreSQL: DATABASE_URL");
    it.skipIf(needsPostgres && !process.env.DATABASE_URL)(
      `${block.where} runs${block.prints.length > 0 ? " and prints what it states" : ""}`,
      async () => {
        const db = needsPostgres ? await freshDatabase(process.env.DATABASE_URL as string, "stepflow_doc_block") : undefined;
        const run = await runTypeScript(relative(REPO, fileOf.get(block) as string), 60_000, db ? { DATABASE_URL: db.url } : {}).finally(() => db?.drop());
        expect(run.stderr, `${block.where} wrote to stderr`).toBe("");
        expect(run.code, `${block.where} exit code`).toBe(0);
        expect(run.stdout.trim(), `${block.where} printed nothing`).not.toBe("");
        if (block.prints.length > 0)
          expect(
            run.stdout
              .trimEnd()
              .split("\n")
              .map((line) => line.trimEnd()),
          ).toEqual(block.prints);
      },
      120_000,
    );
  }

  it("links between the docs reach a file and, with #, a heading in it", () => {
    const slug = (heading: string) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-");
    const headingsOf = (file: string) =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => /^#{1,6} /.test(line))
        .map((line) => slug(line.replace(/^#+ /, "")));
    const broken: string[] = [];
    for (const doc of docs) {
      const text = readFileSync(join(REPO, doc), "utf8").replace(/```[\s\S]*?```/g, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue;
        const [path, anchor] = (target as string).split("#");
        const file = path ? join(REPO, dirname(doc), path) : join(REPO, doc);
        if (!existsSync(file)) broken.push(`${doc}: ${target} (no such file)`);
        else if (anchor && !headingsOf(file).includes(anchor)) broken.push(`${doc}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the docs speak to users, without the project's internal words", () => {
    for (const doc of docs) {
      const text = readFileSync(join(REPO, doc), "utf8");
      expect(text.match(/seed \d+|\bQA\b|the issue|\bstop \d+/gi), doc).toBeNull();
    }
  });

  it("the TypeScript blocks type-check under the repository's strict settings and exactOptionalPropertyTypes", async () => {
    const tsc = join(REPO, "node_modules", "typescript", "bin", "tsc");
    const output = await new Promise<string>((resolve) => {
      execFile(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { cwd: REPO }, (_error, stdout, stderr) => resolve(stdout + stderr));
    });
    // Name the doc and line rather than the generated file.
    const located = output.replace(
      /[^\s(]*?([\w]+)_md_(\d+)\.ts\((\d+),\d+\)/g,
      (_m, doc: string, line: string, offset: string) => `${doc}.md, block at line ${line}, its line ${offset}`,
    );
    expect(located).toBe("");
  }, 120_000);
});
