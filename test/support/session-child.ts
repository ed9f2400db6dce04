/**
 * A process that runs one agent turn on a stored session, for the crash tests:
 * `node --import tsx session-child.ts STORE_URL SESSION_ID "message"`. Its multiply tool
 * prints TOOL_STARTED and never returns, so the parent can SIGKILL it mid-turn.
 */
import { tool } from "@llamaindex/core/tools";
import { z } from "zod";
import { OfflineDemoLLM } from "../../src/llm/offline-model.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import { add } from "../../workflows/tools/calculator.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

const [storeUrl, sessionId, input] = process.argv.slice(2) as [string, string, string];
const hangingMultiply = tool({
  name: "multiply",
  description: "Multiply two numbers (hangs: for the crash test).",
  parameters: z.object({ x: z.number(), y: z.number() }),
  execute: () => {
    process.stdout.write("TOOL_STARTED\n");
    return new Promise<number>(() => {});
  },
});
const store = await openSessionStore(storeUrl);
const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: [add, hangingMultiply], timeout: null });
const { response } = await new Sessions(agent, store).run(sessionId, { input });
process.stdout.write(`${String(response.content)}\n`);
await store.close();
