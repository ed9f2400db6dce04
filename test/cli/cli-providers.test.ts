import { describe, expect, it } from "vitest";
import { runCli as cli } from "../support/cli-process.ts";
import { startAnthropicServer } from "../support/anthropic-wire-server.ts";
import { startGeminiServer } from "../support/gemini-wire-server.ts";
import { startOllamaServer } from "../support/ollama-wire-server.ts";
import { startCheckedOpenAIServer } from "../support/openai-wire-checks.ts";
import { NOTEBOOK_TURNS } from "../support/provider-scenarios.ts";
import type { WireServer } from "../support/wire-server.ts";

const KEY = "key-SECRET-0123456789";
const QUESTION = "What is (2123 + 2321) * 312?";

/** Each provider: its wire server, the environment that points the CLI at it, and the banner line. */
const providers: { name: string; start: () => Promise<WireServer>; env: (url: string) => Record<string, string>; banner: (url: string) => string }[] = [
  {
    name: "anthropic",
    start: () => startAnthropicServer({ turns: NOTEBOOK_TURNS, apiKey: KEY }),
    env: (url) => ({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url }),
    banner: (url) => `Using claude-sonnet-5-5 on Anthropic at ${url}.`,
  },
  {
    name: "gemini",
    start: () => startGeminiServer({ turns: NOTEBOOK_TURNS, apiKey: KEY }),
    env: (url) => ({ GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: url }),
    banner: (url) => `Using gemini-2.5-flash on Gemini at ${url}.`,
  },
  {
    name: "ollama",
    start: () => startOllamaServer({ turns: NOTEBOOK_TURNS }),
    env: (url) => ({ OLLAMA_HOST: url.replace("http://", "") }),
    banner: (url) => `Using llama3.1:8b on Ollama at ${url}.`,
  },
  {
    name: "openai",
    start: () => startCheckedOpenAIServer(NOTEBOOK_TURNS),
    env: (url) => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${url}/v1` }),
    banner: (url) => `Using gpt-4o-mini at ${url}/v1.`,
  },
];

describe("stepflow --provider", { timeout: 240_000 }, () => {
  it.each(providers)("--provider $name answers the notebook question through its wire server", async ({ name, start, env, banner }) => {
    const server = await start();
    try {
      const { code, stdout, stderr } = await cli(["--provider", name, QUESTION], { env: env(server.url) });
      expect({ code, stderr }).toMatchObject({ code: 0, stderr: expect.stringContaining(banner(server.url)) as unknown });
      expect(stdout.trim().split("\n").at(-1)).toBe("(2123 + 2321) * 312 = 1386528.");
      expect(server.requests).toHaveLength(3);
      expect(server.refused).toEqual([]);
      expect(stdout + stderr).not.toContain(KEY);
    } finally {
      await server.close();
    }
  });

  it("says which variable a provider needs, and refuses a provider it does not know", async () => {
    expect(await cli(["--provider", "anthropic", QUESTION])).toEqual({
      code: 2,
      stdout: "",
      stderr: "stepflow: --provider anthropic needs ANTHROPIC_API_KEY (create a key in the Anthropic Console); ANTHROPIC_BASE_URL sets another server.\n",
    });
    expect(await cli(["--provider", "gemini", QUESTION])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("needs GEMINI_API_KEY (or GOOGLE_API_KEY)") as unknown,
    });
    const unknown = await cli(["--provider", "mistral", QUESTION]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Allowed choices are anthropic, gemini, ollama, openai");
    expect(await cli(["--provider", "anthropic", "--llm", "offline", QUESTION], { env: { ANTHROPIC_API_KEY: KEY } })).toMatchObject({
      code: 2,
      stderr: "stepflow: --llm offline and --provider anthropic disagree: give one of them.\n",
    });
  });

  it("never prints the key, even when the server repeats it in its error", async () => {
    const server = await startAnthropicServer({ turns: [], apiKey: KEY, echoKey: true });
    try {
      const { code, stdout, stderr } = await cli(["--verbose", "--provider", "anthropic", QUESTION], {
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
      });
      expect(code).toBe(1);
      expect(stderr).toContain("invalid x-api-key");
      expect(stdout + stderr).not.toContain(KEY);
    } finally {
      await server.close();
    }
  });
});
