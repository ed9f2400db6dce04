/** Servers for the server tests: the offline agent, and an agent whose firing tool needs approval. */
import { z } from "zod";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import type { ScriptedReply, ScriptedReplyFn } from "../../src/llm/scripted-llm.ts";
import { OfflineDemoLLM } from "../../src/llm/offline-model.ts";
import { tool } from "../../src/tools/tool.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import type { WorkflowServerOptions } from "../../src/server/workflow-server.ts";
import { Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context, FromOutside } from "../../src/index.ts";

/** The answer to `ThreeQuestions`' first two questions. */
export class Decision extends Event<{ yes: boolean }> {}

/** Asks two questions answered by a `Decision` each, then one answered by a `HumanResponseEvent`. */
export class ThreeQuestions extends Workflow<object, string> {
  static override readonly fromOutside: FromOutside = { events: [Decision] };

  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async ask(ctx: Context) {
    const first = await ctx.waitForEvent(Decision, { waiterEvent: new InputRequiredEvent({ prefix: "First?" }) });
    const second = await ctx.waitForEvent(Decision, { waiterEvent: new InputRequiredEvent({ prefix: "Second?" }) });
    const third = await ctx.waitForEvent(HumanResponseEvent, { waiterEvent: new InputRequiredEvent({ prefix: "Third?" }) });
    return new StopEvent({ result: `${first.yes} ${second.yes} ${String(third.response)}` });
  }
}

/** What `Gated` writes to its stream. */
export class Tick extends Event<{ i: number }> {}

/** Asks which plan; once answered and `gate` opens, writes ten ticks and asks again. */
export class Gated extends Workflow<object, string> {
  gate: Promise<void> = Promise.resolve();

  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async work(ctx: Context) {
    const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: "Which plan?" }) });
    await this.gate;
    for (let i = 0; i < 10; i++) ctx.writeEventToStream(new Tick({ i }));
    await ctx.waitForEvent(HumanResponseEvent, { waiterEvent: new InputRequiredEvent({ prefix: "Sure?" }) });
    return new StopEvent({ result: answer.response });
  }
}

/** A `Gated` whose ticks wait for `gate`. */
export function gated(gate: Promise<void>): Gated {
  const wf = new Gated({ timeout: null });
  wf.gate = gate;
  return wf;
}

export const QUESTION = "What is (2123 + 2321) * 312?";

/** An HR agent: the model asks to fire employee 7, which a human must approve, then says `finalText`. */
export function firingAgent(
  fired: number[],
  replies: ScriptedReply[] | ScriptedReplyFn = [{ toolCalls: [{ name: "fire_employee", input: { id: 7 } }] }, { text: "Lawson has been let go." }],
) {
  const fireEmployee = tool({
    name: "fire_employee",
    description: "Remove an employee from the HR system.",
    parameters: z.object({ id: z.number() }),
    execute: ({ id }) => {
      fired.push(id);
      return `employee ${id} removed`;
    },
  });
  return new FunctionCallingAgent({ llm: new ScriptedLLM(replies), tools: [fireEmployee], needsApproval: ["fire_employee"], timeout: null });
}

/** Starts a server on a free port of 127.0.0.1 with the offline agent (`agent`) and whatever else is given. */
export async function startServer(options: Partial<WorkflowServerOptions> = {}): Promise<{ server: WorkflowServer; url: string }> {
  const server = new WorkflowServer({
    store: "memory:",
    ...options,
    workflows: {
      agent: {
        workflow: new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: null }),
        description: "The offline agent.",
        inputSchema: z.object({ input: z.string().min(1) }),
      },
      ...options.workflows,
    },
  });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  return { server, url };
}

/** The frames of an SSE body: `{ id, event, data }` each. */
export function sseFrames(text: string): { id?: string; event?: string; data: string }[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() && !block.startsWith(":"))
    .map((block) => {
      const frame: { id?: string; event?: string; data: string } = { data: "" };
      for (const line of block.split("\n")) {
        const [field, ...rest] = line.split(":");
        const value = rest.join(":").replace(/^ /, "");
        if (field === "id") frame.id = value;
        else if (field === "event") frame.event = value;
        else if (field === "data") frame.data += value;
      }
      return frame;
    });
}
