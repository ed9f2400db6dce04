/**
 * What users stored with earlier versions must load and continue: contexts and a SQLite
 * sessions file saved by stepflow 0.1.0 in each saved format (test/fixtures/format-N, made by
 * test/fixtures/make-fixtures.ts on the commit that wrote that format).
 */
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatMessage } from "@llamaindex/core/llms";
import { describe, expect, it } from "vitest";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../events/index.ts";
import { Context } from "../src/index.ts";
import { ScriptedLLM } from "../src/llm/scripted-llm.ts";
import type { ScriptedReply } from "../src/llm/scripted-llm.ts";
import { Sessions, openSessionStore } from "../src/sessions/index.ts";
import { calculatorTools } from "../workflows/tools/calculator.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";
import { Answer, Question, StockCount, hrTools } from "./fixtures/workflows.ts";

const FORMATS = ["format-1", "format-2"];
const fixture = (format: string, name: string) => join(import.meta.dirname, "fixtures", format, name);

/** The conversation as the model must see it after the two stored turns. */
const CONVERSATION = [
  "user: Hello! My name is Logan.",
  "assistant: Hello Logan! How can I help?",
  "user: What is (2123 + 2321) * 312?",
  "assistant: calls add",
  "user: result of call_add: 4444",
  "assistant: calls multiply",
  "user: result of call_multiply: 1386528",
  "assistant: (2123 + 2321) * 312 = 1386528",
];

function describeMessage(message: ChatMessage): string {
  const options = message.options as { toolCall?: { name: string }[]; toolResult?: { id: string; result: string } } | undefined;
  if (options?.toolCall) return `${message.role}: calls ${options.toolCall.map((call) => call.name).join(", ")}`;
  if (options?.toolResult) return `${message.role}: result of ${options.toolResult.id}: ${options.toolResult.result}`;
  return `${message.role}: ${String(message.content)}`;
}

/** A model that answers from the history it is sent, and keeps what it was sent. */
function listeningModel(reply: (history: string[]) => ScriptedReply) {
  const seen: string[][] = [];
  const llm = new ScriptedLLM((request) => {
    const history = request.messages.map(describeMessage);
    seen.push(history);
    return reply(history);
  });
  return { llm, seen };
}

describe.each(FORMATS)("contexts saved by 0.1.0 in %s", (format) => {
  it("an agent's conversation continues: the model sees every earlier message, tool calls included", async () => {
    const { llm, seen } = listeningModel((history) => ({ text: history.some((line) => line.includes("Logan")) ? "Your name is Logan." : "I do not know." }));
    const agent = new FunctionCallingAgent({ llm, tools: calculatorTools });
    const ctx = Context.fromJSON(agent, readFileSync(fixture(format, "agent-conversation.json"), "utf8"));
    const { response } = await agent.run({ input: "What is my name?" }, { ctx });
    expect(response.content).toBe("Your name is Logan.");
    expect(seen).toEqual([[...CONVERSATION, "user: What is my name?"]]);

    // Saved again by this version, it loads again.
    const again = Context.fromJSON(agent, JSON.stringify(ctx.toJSON()));
    const { llm: next, seen: nextSeen } = listeningModel(() => ({ text: "Still Logan." }));
    const later = new FunctionCallingAgent({ llm: next, tools: calculatorTools });
    await later.run({ input: "And now?" }, { ctx: Context.fromJSON(later, JSON.stringify(again.toJSON())) });
    expect(nextSeen[0]?.slice(-3)).toEqual(["user: What is my name?", "assistant: Your name is Logan.", "user: And now?"]);
  });

  it("an agent's run saved while a human was asked continues: approved, the call runs once, the finished look-up is not repeated", async () => {
    const { fired, looked, tools } = hrTools();
    const { llm, seen } = listeningModel(() => ({ text: "Done." }));
    const agent = new FunctionCallingAgent({ llm, tools, needsApproval: ["fire_employee"] });
    const ctx = Context.fromJSON(agent, readFileSync(fixture(format, "agent-awaiting-approval.json"), "utf8"));
    const handler = agent.run(undefined, { ctx });
    const asked: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        asked.push(ev.prefix);
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
      }
    }
    const { response } = await handler;
    expect(asked).toEqual(['Run fire_employee with {"id":7}? (yes/no)']);
    expect(fired).toEqual([7]);
    expect(looked).toEqual([]);
    expect(response.content).toBe("Done.");
    expect(seen).toEqual([
      [
        "user: Fire Lawson",
        "assistant: calls find_employee, fire_employee",
        'user: result of call_find: {"id":7,"lastName":"Lawson"}',
        "user: result of call_fire: Employee 7 removed.",
      ],
    ]);
  });

  it("a workflow saved with two events collected and a step waiting for a human continues to the right total", async () => {
    const flow = new StockCount({ timeout: 30 });
    const ctx = Context.fromJSON(flow, readFileSync(fixture(format, "stock-count-waiting.json"), "utf8"));
    const handler = flow.run(undefined, { ctx });
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof Question) handler.ctx.sendEvent(new Answer({ response: "4" }));
    }
    expect(await handler).toBe("9 chairs in Berlin, Lyon, Porto");
  });

  it("a SQLite sessions file continues: the next turn sees the stored conversation and is appended", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "stepflow-upgrade-")), "sessions.db");
    copyFileSync(fixture(format, "sessions.db"), file);
    const store = await openSessionStore(`sqlite:${file}`);
    try {
      const { llm, seen } = listeningModel((history) => ({ text: history.some((line) => line.includes("Logan")) ? "Your name is Logan." : "I do not know." }));
      const sessions = new Sessions(new FunctionCallingAgent({ llm, tools: calculatorTools }), store);
      const { response } = await sessions.run("logan", { input: "What is my name?" });
      expect(response.content).toBe("Your name is Logan.");
      expect(seen).toEqual([[...CONVERSATION, "user: What is my name?"]]);
      const stored = (await sessions.messages("logan")).map((m) => describeMessage(m.message));
      expect(stored).toEqual([...CONVERSATION, "user: What is my name?", "assistant: Your name is Logan."]);
      expect((await sessions.list()).map((s) => [s.id, s.version])).toEqual([["logan", 3]]);
    } finally {
      await store.close();
    }
  });
});
