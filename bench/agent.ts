/**
 * Agent benchmark: one turn of "What is (2123 + 2321) * 312?" (3 LLM calls, 2 tool calls)
 * against the local OpenAI-compatible SSE server with no added latency: the
 * FunctionCallingAgent on stepflow vs a hand-written OpenAI-SDK tool loop (seed 000's shape),
 * same server, same replies, same tools.
 */
import { OpenAI } from "../src/llm/openai.ts";
import { startOpenAIServer, calculatorTurns } from "../test/support/openai-sse-server.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";
import { add, multiply } from "../workflows/tools/calculator.ts";
import { printTable } from "./measure.ts";

const QUESTION = "What is (2123 + 2321) * 312?";
const tools = [add, multiply];

// The OpenAI SDK client that @llamaindex/openai itself uses (openai 5.x), so both sides share one HTTP stack.
type OpenAISDK = Awaited<OpenAI["session"]>;
type CreateParams = Parameters<OpenAISDK["chat"]["completions"]["create"]>[0];
type ChatCompletionMessageParam = CreateParams["messages"][number];
type ChatCompletionTool = NonNullable<CreateParams["tools"]>[number];

/** The loop people write by hand: stream, gather tool calls by index, run them, repeat. */
async function handWrittenTurn(client: OpenAISDK): Promise<string> {
  const specs: ChatCompletionTool[] = tools.map((t) => ({ type: "function", function: { name: t.metadata.name, description: t.metadata.description, parameters: t.metadata.parameters } }));
  const messages: ChatCompletionMessageParam[] = [{ role: "user", content: QUESTION }];
  for (;;) {
    const stream = await client.chat.completions.create({ model: "gpt-4o-mini", messages, tools: specs, stream: true });
    let content = "";
    const calls: { id: string; name: string; arguments: string }[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) content += delta.content;
      for (const part of delta?.tool_calls ?? []) {
        const call = (calls[part.index] ??= { id: "", name: "", arguments: "" });
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name = part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
    }
    if (calls.length === 0) return content;
    messages.push({ role: "assistant", content, tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) });
    for (const call of calls) {
      const tool = tools.find((t) => t.metadata.name === call.name);
      const output = tool ? await tool.call(JSON.parse(call.arguments || "{}")) : `Tool ${call.name} does not exist`;
      messages.push({ role: "tool", tool_call_id: call.id, content: String(output) });
    }
  }
}

async function timeTurns(turns: number, runTurn: () => Promise<string>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < turns; i++) {
    const answer = await runTurn();
    if (!answer.includes("1386528")) throw new Error(`unexpected answer: ${answer}`);
  }
  return (performance.now() - started) / turns;
}

/** Runs the agent table: `rounds` alternating rounds of `turns` turns each, best round kept. */
export async function benchAgent(turns = 200, rounds = 5): Promise<void> {
  const total = 2 * turns * rounds + 2 * 20;
  const server = await startOpenAIServer({ turns: Array.from({ length: total }, () => calculatorTurns()).flat() });
  try {
    const llm = new OpenAI({ apiKey: "sk-bench", baseURL: server.baseURL, model: "gpt-4o-mini", maxRetries: 0 });
    const client = await llm.session;
    const agent = new FunctionCallingAgent({ llm, tools });
    const stepflowTurn = async () => String((await agent.run({ input: QUESTION })).response.content);
    await timeTurns(20, stepflowTurn); // warm-up, both paths
    await timeTurns(20, () => handWrittenTurn(client));
    let best = { stepflow: Infinity, hand: Infinity };
    for (let round = 0; round < rounds; round++) {
      best = { stepflow: Math.min(best.stepflow, await timeTurns(turns, stepflowTurn)), hand: Math.min(best.hand, await timeTurns(turns, () => handWrittenTurn(client))) };
    }
    printTable(
      ["run", "turns × rounds", "ms/turn (best round)", "× hand-written"],
      [
        ["hand-written OpenAI-SDK loop", `${turns} × ${rounds}`, best.hand.toFixed(3), "1.00"],
        ["stepflow FunctionCallingAgent", `${turns} × ${rounds}`, best.stepflow.toFixed(3), (best.stepflow / best.hand).toFixed(2)],
      ],
    );
  } finally {
    await server.close();
  }
}
