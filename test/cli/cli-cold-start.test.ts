/**
 * What the installed command and `import("stepflow")` load before they answer: no tokenizer.
 * gpt-tokenizer's ranks (about 1 MB) and js-tiktoken took most of a one-shot answer's start;
 * they are loaded when something counts tokens, and the calculator tools' spec counts are
 * known. Counted with scripts/import-cost.mjs's module hook on the build (`npm run build`):
 * files, not times.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";

const REPO = join(import.meta.dirname, "..", "..");
const TOKENIZERS = ["gpt-tokenizer", "js-tiktoken"];

/** The packages (name → files) each of the named import-cost targets loads. */
function packagesLoaded(names: string[]): Record<string, Record<string, number>> {
  const script = `const { countFiles, targets } = await import("./scripts/import-cost.mjs");
const names = ${JSON.stringify(names)};
console.log(JSON.stringify(Object.fromEntries(targets().filter((t) => names.includes(t.name)).map((t) => [t.name, Object.fromEntries(countFiles(t).packages)]))));`;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: REPO, encoding: "utf8" });
  expect(child.stderr).toBe("");
  return JSON.parse(child.stdout) as Record<string, Record<string, number>>;
}

it('stepflow --help, one offline answer and import("stepflow") load no tokenizer', { timeout: 120_000 }, () => {
  const names = ["stepflow --help", 'stepflow --llm offline "What is 2 + 2?"', 'import("stepflow")'];
  // The counter does see a tokenizer: importing an LLM class outside the bundled command loads
  // LlamaIndex's `Settings`, which loads one as it is imported.
  const control = 'import("stepflow/llm/offline")';
  const loaded = packagesLoaded([...names, control]);
  expect(Object.keys(loaded).sort()).toEqual([...names, control].sort());
  for (const name of names)
    expect(
      Object.keys(loaded[name] ?? {}).filter((p) => TOKENIZERS.includes(p)),
      name,
    ).toEqual([]);
  expect(Object.keys(loaded[control] ?? {})).toContain("gpt-tokenizer");
});
