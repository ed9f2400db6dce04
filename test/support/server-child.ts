/**
 * A server in its own process, for the restart tests: `node --import tsx server-child.ts STORE
 * NAMESPACE` serves `hr`, an agent whose `fire_employee` calls need approval, prints its URL,
 * and stops cleanly on SIGTERM (SIGKILL is the crash).
 */
import { z } from "zod";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";

const [store, namespace] = process.argv.slice(2);
const fireEmployee = tool({
  name: "fire_employee",
  description: "Remove an employee from the HR system.",
  parameters: z.object({ id: z.number() }),
  execute: ({ id }) => `employee ${id} removed by process ${process.pid}`,
});
// The model asks to fire employee 7, then reports: the same answers in every process.
const llm = new ScriptedLLM((request) =>
  request.messages.some((m) => toolResultIdOf(m) !== undefined)
    ? { text: "Lawson has been let go." }
    : { toolCalls: [{ name: "fire_employee", input: { id: 7 } }] },
);
const hr = new FunctionCallingAgent({ llm, tools: [fireEmployee], needsApproval: ["fire_employee"], timeout: null });
const server = new WorkflowServer({ workflows: { hr }, ...(store ? { store } : {}), ...(namespace ? { namespace } : {}) });
const { url } = await server.listen({ port: 0 });
process.stdout.write(`${url}\n`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
