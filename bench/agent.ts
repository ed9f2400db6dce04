/**
 * Agent benchmark: one turn of "What is (2123 + 2321) * 312?" (3 LLM calls, 2 tool calls)
 * against the local OpenAI-compatible SSE server with no added latency: the
 * FunctionCallingAgent on stepflow vs a hand-written OpenAI-SDK tool loop (seed 000's shape),
 * same server, same replies, same tools.
 */
import diagnostics from "node:diagnostics_channel";
import { OpenAI } from "../src/llm/openai.ts";
import { calculatorTurns, startOpenAIServer } from "../test/support/openai-sse-server.ts";
import type { ServerTurn } from "../test/support/openai-sse-server.ts";
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

const WARM_UP_TURNS = 2000;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

/**
 * The phases of a turn, timed from undici's diagnostics channels (`undici:request:create`,
 * `:headers`, `:trailers`): before the first request, each request until its response headers,
 * the response body, the client's work between one body and the next request, and after the
 * last body. Which phase grows shows whose code the extra time is in.
 */
const PHASES = ["start → request 1", "request 1 → headers", "body 1", "body 1 → request 2", "request 2 → headers", "body 2", "body 2 → request 3", "request 3 → headers", "body 3", "body 3 → answer"];
const HTTP_EVENTS = ["undici:request:create", "undici:request:headers", "undici:request:trailers"];

interface TimedTurn {
  readonly ms: number;
  /** Milliseconds per phase, in PHASES order. */
  readonly phases: number[];
}

async function timedTurn(runTurn: () => Promise<string>, marks: number[] | undefined): Promise<TimedTurn> {
  if (marks) marks.length = 0;
  const started = performance.now();
  const answer = await runTurn();
  const ended = performance.now();
  if (!answer.includes("1386528")) throw new Error(`unexpected answer: ${answer}`);
  if (!marks) return { ms: ended - started, phases: [] };
  if (marks.length !== HTTP_EVENTS.length * 3) throw new Error(`expected 3 requests (${HTTP_EVENTS.length * 3} HTTP events) in a turn, saw ${marks.length} events`);
  const times = [started, ...marks, ended];
  return { ms: ended - started, phases: times.slice(1).map((t, i) => t - (times[i] as number)) };
}

/** `pairs` pairs of turns, one turn on each side per pair, alternating which side goes first. */
async function takeTurns(pairs: number, handTurn: () => Promise<string>, stepflowTurn: () => Promise<string>, marks?: number[]) {
  const hand: TimedTurn[] = [];
  const stepflow: TimedTurn[] = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) {
      hand.push(await timedTurn(handTurn, marks));
      stepflow.push(await timedTurn(stepflowTurn, marks));
    } else {
      stepflow.push(await timedTurn(stepflowTurn, marks));
      hand.push(await timedTurn(handTurn, marks));
    }
  }
  return { hand, stepflow };
}

/**
 * Runs the agent table: `pairs` pairs of turns, one turn on each side per pair, alternating
 * which side goes first. A shared machine's speed drifts over seconds; interleaving single
 * turns puts both sides under the same drift (blocks of 50 turns with a forced GC between
 * them gave ratios from 1.08 to 1.23 on the same code; pairs repeat within ±0.02). Then as
 * many pairs again, timed by phase.
 */
export async function benchAgent(pairs = 2000): Promise<void> {
  const calculator = calculatorTurns();
  const server = await startOpenAIServer({ turns: (_body, index) => calculator[index % calculator.length] as ServerTurn, keepRequests: false });
  const marks: number[] = [];
  const mark = () => void marks.push(performance.now());
  try {
    const llm = new OpenAI({ apiKey: "sk-bench", baseURL: server.baseURL, model: "gpt-4o-mini", maxRetries: 0 });
    const client = await llm.session;
    const agent = new FunctionCallingAgent({ llm, tools });
    const stepflowTurn = async () => String((await agent.run({ input: QUESTION })).response.content);
    const handTurn = () => handWrittenTurn(client);
    // Warm-up, both paths: the agent runs far more functions than the hand loop, and V8 takes a
    // while to optimize them all: after 300 warm-up turns, the median ratio of the next 2,000
    // pairs was 0.02 above that of the 6,000 after them. The table is the steady state.
    await takeTurns(WARM_UP_TURNS / 2, handTurn, stepflowTurn);
    const { hand, stepflow } = await takeTurns(pairs, handTurn, stepflowTurn);
    const handMs = hand.map((turn) => turn.ms);
    const stepflowMs = stepflow.map((turn) => turn.ms);
    printTable(
      ["run", "turns", "ms/turn (mean)", "ms/turn (median)", "× hand-written (means)", "× hand-written (medians)"],
      [
        ["hand-written OpenAI-SDK loop", pairs, mean(handMs).toFixed(3), median(handMs).toFixed(3), "1.00", "1.00"],
        ["stepflow FunctionCallingAgent", pairs, mean(stepflowMs).toFixed(3), median(stepflowMs).toFixed(3), (mean(stepflowMs) / mean(handMs)).toFixed(2), (median(stepflowMs) / median(handMs)).toFixed(2)],
      ],
    );

    // The same ratio per quarter of the pairs: how far it moves within one run on one build.
    const quarter = Math.floor(pairs / 4);
    if (quarter >= 100) {
      const ratio = (q: number) => median(stepflowMs.slice(q * quarter, (q + 1) * quarter)) / median(handMs.slice(q * quarter, (q + 1) * quarter));
      console.log(`\nThe medians' ratio by quarter of those pairs (${quarter.toLocaleString("en")} pairs each): ${[0, 1, 2, 3].map((q) => ratio(q).toFixed(2)).join(", ")}.`);
    }

    // Then more pairs with undici's diagnostics channels on (they cost a little on both sides,
    // so the table above is measured without them).
    for (const name of HTTP_EVENTS) diagnostics.subscribe(name, mark);
    const phased = await takeTurns(pairs, handTurn, stepflowTurn, marks);
    const microseconds = (turns: TimedTurn[], phase: number) => median(turns.map((turn) => turn.phases[phase] as number)) * 1000;
    console.log(`\nThe same turn by phase, from another ${pairs.toLocaleString("en")} pairs with undici's diagnostics channels on:\n`);
    printTable(
      ["phase of the turn", "hand-written (µs, median)", "stepflow (µs, median)", "stepflow − hand-written (µs)"],
      PHASES.map((phase, i) => [phase, microseconds(phased.hand, i).toFixed(1), microseconds(phased.stepflow, i).toFixed(1), (microseconds(phased.stepflow, i) - microseconds(phased.hand, i)).toFixed(1)]),
    );
  } finally {
    for (const name of HTTP_EVENTS) diagnostics.unsubscribe(name, mark);
    await server.close();
  }
}
