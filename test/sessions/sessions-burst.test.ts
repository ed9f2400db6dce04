import { describe, expect, it } from "vitest";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";

describe("many sessions at once", () => {
  it("leave the event loop a turn before all of them ran, and each is stored whole", async () => {
    // An LLM that answers at once: without time slices, every turn would run in microtasks
    // before any other callback of the process got a turn.
    const llm = new ScriptedLLM(
      (request) =>
        request.messages.some((m) => (m.options as { toolResult?: unknown } | undefined)?.toolResult)
          ? { text: "4444" }
          : { toolCalls: [{ name: "add", input: { x: 2123, y: 2321 } }] },
      { record: false },
    );
    const store = await openSessionStore("memory:");
    const sessions = new Sessions(new FunctionCallingAgent({ llm, tools: calculatorTools, timeout: null }), store);
    let finished = 0;
    const atFirstTurn = new Promise<number>((resolve) => setImmediate(() => resolve(finished)));
    const turns = Array.from({ length: 400 }, (_, i) =>
      sessions.run(`s${i}`, { input: "What is 2123 + 2321?" }).then((result) => {
        finished++;
        return result.response.content;
      }),
    );
    expect(await atFirstTurn).toBeLessThan(400);
    expect(new Set(await Promise.all(turns))).toEqual(new Set(["4444"]));
    for (const i of [0, 199, 399]) {
      const messages = await sessions.messages(`s${i}`);
      expect(messages.map((m) => m.message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    }
    await store.close();
  });
});
