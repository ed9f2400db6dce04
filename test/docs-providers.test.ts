/**
 * The provider examples of docs/providers.md (blocks whose first line is `// Runs against a
 * provider: NAME`), each run as a user runs it, with its provider's environment pointed at that
 * provider's local wire server: they must print what they state, and the server must have
 * refused nothing. test/docs-code-blocks.test.ts type-checks them.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO, runTypeScript } from "./support/run-typescript.ts";
import { startAnthropicServer } from "./support/anthropic-wire-server.ts";
import { startGeminiServer } from "./support/gemini-wire-server.ts";
import { startOllamaServer } from "./support/ollama-wire-server.ts";
import { startCheckedOpenAIServer } from "./support/openai-wire-checks.ts";
import { NOTEBOOK_TURNS } from "./support/provider-scenarios.ts";
import type { WireServer } from "./support/wire-server.ts";

const KEY = "doc-example-key";
const servers: Record<string, { start: () => Promise<WireServer>; env: (url: string) => Record<string, string> }> = {
  anthropic: { start: () => startAnthropicServer({ turns: NOTEBOOK_TURNS, apiKey: KEY }), env: (url) => ({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url }) },
  gemini: { start: () => startGeminiServer({ turns: NOTEBOOK_TURNS, apiKey: KEY }), env: (url) => ({ GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: url }) },
  ollama: { start: () => startOllamaServer({ turns: NOTEBOOK_TURNS }), env: (url) => ({ OLLAMA_HOST: url }) },
  openai: { start: () => startCheckedOpenAIServer(NOTEBOOK_TURNS), env: (url) => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${url}/v1` }) },
};

const MARK = /^\/\/ Runs against a provider: (\w+)\n/;
const text = readFileSync(join(REPO, "docs", "providers.md"), "utf8");
const blocks = [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)]
  .map((match) => match[1] as string)
  .filter((code) => MARK.test(code))
  .map((code) => ({
    provider: (MARK.exec(code) as RegExpExecArray)[1] as string,
    code,
    prints: [...code.matchAll(/\/\/ prints: (.*)$/gm)].map((m) => (m[1] as string).trimEnd()),
  }));
const dir = join(REPO, ".stepflow", "doc-providers", String(process.pid));
mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("docs/providers.md", () => {
  it("has an example for each provider", () => {
    expect([...new Set(blocks.map((block) => block.provider))].sort()).toEqual(Object.keys(servers).sort());
  });

  // A provider's second example is "anthropic #2", and so on.
  const named = blocks.map((block, index) => {
    const nth = blocks.slice(0, index + 1).filter((other) => other.provider === block.provider).length;
    return { ...block, index, name: nth === 1 ? block.provider : `${block.provider} #${nth}` };
  });
  it.each(named)(
    "the $name example answers through the provider's wire format",
    async ({ provider, code, prints, index }) => {
      const setup = servers[provider];
      if (!setup) throw new Error(`docs/providers.md names a provider without a wire server: ${provider}`);
      const file = join(dir, `${provider}-${index}.ts`);
      writeFileSync(file, code);
      const server = await setup.start();
      try {
        const run = await runTypeScript(relative(REPO, file), 60_000, setup.env(server.url));
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        expect(run.stdout.trimEnd().split("\n")).toEqual(prints);
        expect(server.requests).toHaveLength(3);
        expect(server.refused).toEqual([]);
      } finally {
        await server.close();
      }
    },
    120_000,
  );
});
