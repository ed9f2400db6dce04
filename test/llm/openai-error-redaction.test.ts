import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAI, describeOpenAIError } from "../../src/llm/openai.ts";
import { startOpenAIServer } from "../support/openai-sse-server.ts";
import type { OpenAIServer } from "../support/openai-sse-server.ts";

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const KEY = "sk-test-9d8c7b6a5f4e";

/** Everything about an error a user could print or log. */
function printed(error: unknown): string {
  const e = error as Error;
  return [
    e.message,
    e.stack,
    String(e),
    inspect(e, { depth: 10 }),
    JSON.stringify(e),
    describeOpenAIError(e, { baseURL: server?.baseURL ?? "", model: "m" }),
  ].join("\n");
}

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("the call did not fail");
}

describe("OpenAI: the API key never appears in an error, even when the server echoes it", () => {
  for (const status of [400, 401, 500]) {
    it(`a ${status} whose body repeats the key, streaming and not`, async () => {
      server = await startOpenAIServer({ turns: [], status, echoKey: true });
      const llm = new OpenAI({ baseURL: server.baseURL, apiKey: KEY, model: "gpt-4o-mini", maxRetries: 0 });
      const streamed = await failure(async () => {
        for await (const _ of await llm.chat({ messages: [{ role: "user", content: "Hi" }], stream: true }));
      });
      const whole = await failure(() => llm.chat({ messages: [{ role: "user", content: "Hi" }] }));
      for (const error of [streamed, whole]) {
        expect((error as { status?: number }).status).toBe(status);
        expect((error as Error).message).toContain("Incorrect API key provided: ***");
        expect(printed(error)).not.toContain(KEY);
        expect(printed(error)).not.toContain(KEY.slice(3)); // nor its part after "sk-"
      }
    });
  }

  it("an error the server sends mid-stream, repeating the key", async () => {
    server = await startOpenAIServer({ turns: [], errorMidStream: true });
    const llm = new OpenAI({ baseURL: server.baseURL, apiKey: KEY, model: "gpt-4o-mini", maxRetries: 0 });
    const error = await failure(async () => {
      for await (const _ of await llm.chat({ messages: [{ role: "user", content: "Hi" }], stream: true }));
    });
    expect((error as Error).message).toContain("Key *** is over quota");
    expect(printed(error)).not.toContain(KEY);
  });
});
