/**
 * A starter project's workflows: `npm run dev` serves them with the web page, `npm start` in
 * production (see Dockerfile). Every export that is a workflow, or `{ workflow, inputSchema?,
 * description? }`, is served under its name.
 */
import { z } from "zod";
import { HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step, type Context } from "stepflow";
import { OfflineDemoLLM } from "stepflow/llm/offline";
import { OpenAI } from "stepflow/llm/openai";
import { calculatorTools } from "stepflow/tools/calculator";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";

const Order = z.object({
  item: z.string().min(1).describe("What to ship"),
  quantity: z.number().int().min(1).max(10).describe("How many (1 to 10)"),
  express: z.boolean().default(false).describe("Ship by express"),
});
type Order = z.infer<typeof Order>;

/** An order that waits for a clerk's yes: the page shows the question with a box to answer it. */
class OrderFlow extends Workflow<Order, { shipped: boolean; item: string; quantity: number; note: string }> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async confirm(ctx: Context, ev: StartEvent<Order>) {
    const question = new InputRequiredEvent({ prefix: `Ship ${ev.quantity} × ${ev.item}${ev.express ? " by express" : ""}? (yes/no)` });
    const answer = await ctx.waitForEvent(HumanResponseEvent, { waiterEvent: question });
    const shipped = String(answer.response).trim().toLowerCase() === "yes";
    return new StopEvent({ result: { shipped, item: ev.item, quantity: ev.quantity, note: shipped ? "on its way" : "cancelled by the clerk" } });
  }
}

class Greeting extends Workflow<{ name?: string }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async greet(_ctx: Context, ev: StartEvent<{ name?: string }>) {
    return new StopEvent({ result: `Hello, ${ev.name ?? "world"}!` });
  }
}

export const orders = { workflow: new OrderFlow({ timeout: null }), inputSchema: Order, description: "Ship an order once a clerk confirms it" };
export const greeting = new Greeting();
// A chat with calculator tools: OpenAI's model with OPENAI_API_KEY set, the offline demo model (arithmetic only) without.
export const agent = new FunctionCallingAgent({
  llm: process.env.OPENAI_API_KEY ? new OpenAI({ model: "gpt-4o-mini" }) : new OfflineDemoLLM(),
  tools: calculatorTools,
  timeout: null,
});
