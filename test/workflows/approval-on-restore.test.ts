import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolApprovalEvent, ToolApprovalRequestEvent, ToolCallEvent } from "../../events/index.ts";
import { Context } from "../../src/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { saveOnEvent } from "../support/save-on-event.ts";

/** Look-ups are free; firing someone needs a human's yes. */
function hr() {
  const fired: number[] = [];
  const findEmployee = tool({
    name: "find_employee",
    description: "Find an employee by last name.",
    parameters: z.object({ lastName: z.string() }),
    execute: () => ({ id: 7 }),
  });
  const fireEmployee = tool({
    name: "fire_employee",
    description: "Remove an employee.",
    parameters: z.object({ id: z.number() }),
    execute: ({ id }) => (fired.push(id), `Employee ${id} removed.`),
  });
  return { fired, tools: [findEmployee, fireEmployee] };
}
const fireLawson = () =>
  new ScriptedLLM([
    {
      toolCalls: [
        { id: "call_find", name: "find_employee", input: { lastName: "Lawson" } },
        { id: "call_fire", name: "fire_employee", input: { id: 7 } },
      ],
    },
    { text: "Done." },
  ]);

/** Streams a run to its end, answering every approval request with `approved`; returns what was asked. */
async function answering(handler: ReturnType<FunctionCallingAgent["run"]>, approved: boolean): Promise<string[]> {
  const asked: string[] = [];
  for await (const ev of handler.streamEvents()) {
    if (ev instanceof ToolApprovalRequestEvent) {
      asked.push(ev.prefix);
      handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved }));
    }
  }
  await handler;
  return asked;
}

describe("approval survives save and restore into an agent without needsApproval", () => {
  it("a run saved as the model's call streamed, before the question was asked, asks it after restore", async () => {
    const { fired, tools } = hr();
    const handler = new FunctionCallingAgent({ llm: fireLawson(), tools, needsApproval: ["fire_employee"] }).run({ input: "Fire Lawson" });
    const saved = await saveOnEvent(handler, ToolCallEvent);
    expect(fired).toEqual([]);

    const plain = new FunctionCallingAgent({ llm: new ScriptedLLM([{ text: "Not fired." }]), tools });
    const asked = await answering(plain.run(undefined, { ctx: Context.fromJSON(plain, saved) }), false);
    expect(asked).toEqual(['Run fire_employee with {"id":7}? (yes/no)']);
    expect(fired).toEqual([]);
  });

  it("a run saved while the question waits asks it again after restore, and runs the call only once approved", async () => {
    const { fired, tools } = hr();
    const handler = new FunctionCallingAgent({ llm: fireLawson(), tools, needsApproval: ["fire_employee"] }).run({ input: "Fire Lawson" });
    const saved = await saveOnEvent(handler, ToolApprovalRequestEvent);

    const plain = new FunctionCallingAgent({ llm: new ScriptedLLM([{ text: "Fired." }]), tools });
    const asked = await answering(plain.run(undefined, { ctx: Context.fromJSON(plain, saved) }), true);
    expect(asked).toEqual(['Run fire_employee with {"id":7}? (yes/no)']);
    expect(fired).toEqual([7]);
  });

  it("a save at any microtask of the turn never lets the restored run fire without asking", async () => {
    for (let wait = 0; wait <= 80; wait++) {
      const { fired, tools } = hr();
      const handler = new FunctionCallingAgent({ llm: fireLawson(), tools, needsApproval: ["fire_employee"] }).run({ input: "Fire Lawson" });
      for (let i = 0; i < wait; i++) await Promise.resolve();
      const saved = handler.ctx.toJSON();
      handler.cancel();
      await handler.catch(() => undefined);
      if (!saved.running) continue;
      // The restored agent asks for nothing, and its model, if asked again, only answers.
      const plain = new FunctionCallingAgent({ llm: new ScriptedLLM(() => ({ text: "Not fired." })), tools });
      await answering(plain.run(undefined, { ctx: Context.fromJSON(plain, JSON.stringify(saved)) }), false);
      expect({ wait, fired }).toEqual({ wait, fired: [] });
    }
  });
});
