/**
 * A DBOS worker process for the tests of sessions on DBOS:
 * `node --import tsx dbos-session-worker-child.ts DATABASE_URL WORKER_ID HR_BASE_URL GATE_BASE_URL [approval] [options as JSON]`
 * (options: `takeoverAfter`; it prints "took over ID: RUNS" when it takes a dead worker's runs over).
 * Its agent's model answers "Heard: " and every user message it was sent, so a test sees the
 * history a turn carried; asked "fire N", it first calls the tool that DELETEs employee N
 * (which, with `approval`, must be approved first).
 * Each model reply first passes the gate `llm`, the tool the gate `tool` (before its DELETE).
 * Prints "ready" once it takes runs; SIGTERM stops it cleanly.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import { DbosWorker } from "../../src/dbos/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { fireEmployeeTool } from "./fire-employee-tool.ts";

const [database, workerId, hrURL, gateURL, mode = "", more = "{}"] = process.argv.slice(2) as [string, string, string, string, string?, string?];
const options = JSON.parse(more) as { takeoverAfter?: number | false };

const pass = async (name: string) => {
  const response = await fetch(`${gateURL}/gate/${name}?worker=${workerId}`);
  if (!response.ok) throw new Error(`gate ${name}: ${response.status}`);
};

const text = (message: ChatMessage) => (typeof message.content === "string" ? message.content : "");

class GatedLLM extends ScriptedLLM {
  protected override async reply(messages: ChatMessage[], tools: string[]) {
    await pass("llm");
    return super.reply(messages, tools);
  }
}

const fire = fireEmployeeTool(hrURL, pass);

const agent = new FunctionCallingAgent({
  llm: new GatedLLM(({ messages }) => {
    const last = messages.at(-1);
    const order = last?.role === "user" ? /^fire (\d+)$/.exec(text(last)) : null;
    if (order) return { toolCalls: [{ id: `fire-${order[1]}`, name: "fire_employee", input: { id: Number(order[1]) } }] };
    const heard = messages.filter((m) => m.role === "user" && !(m.options && "toolResult" in m.options)).map(text);
    return { text: `Heard: ${heard.join(" | ")}` };
  }),
  tools: [fire],
  ...(mode === "approval" ? { needsApproval: ["fire_employee"] } : {}),
  timeout: 60,
});

const worker = await DbosWorker.start({
  database,
  workflows: { agent },
  workerId,
  pollingInterval: 100,
  connections: 3,
  ...(options.takeoverAfter !== undefined ? { takeoverAfter: options.takeoverAfter } : {}),
  onTakeover: ({ workerId: dead, runs }) => process.stdout.write(`took over ${dead}: ${runs.join(",")}\n`),
});
process.on("SIGTERM", () => {
  void worker.stop().then(() => process.exit(0));
});
process.stdout.write("ready\n");
