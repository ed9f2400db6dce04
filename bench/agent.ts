/**
 * Agent benchmark: one turn of "What is (2123 + 2321) * 312?" (3 LLM calls, 2 tool calls)
 * against the local OpenAI-compatible SSE server with no added latency: the
 * FunctionCallingAgent on stepflow vs a hand-written OpenAI-SDK tool loop (seed 000's shape),
 * same server, same replies, same tools.
 */
import diagnostics from "node:diagnostics_channel";
import { OpenAI } from "../src/llm/openai.ts";
import { openChatStream } from "../src/llm/openai-stream.ts";
import type { ChatStream } from "../src/llm/openai-stream.ts";
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

type ChatCompletionChunk = {
  choices: { delta?: { content?: string | null; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] } }[];
};
type StreamParams = CreateParams & { stream: true };

/** The SDK's own stream, as people use it (iterated directly: no generator added). */
const sdkChunks = (client: OpenAISDK, params: StreamParams): Promise<AsyncIterable<ChatCompletionChunk>> => client.chat.completions.create(params);

/** The response body read as stepflow's `OpenAI` reads it, to separate that from the rest of stepflow's cost. */
const stepflowReaderChunks = async (client: OpenAISDK, params: StreamParams): Promise<AsyncIterable<ChatCompletionChunk>> =>
  chunksOf(await openChatStream(client, params, undefined));

async function* chunksOf(stream: ChatStream): AsyncIterable<ChatCompletionChunk> {
  for (let chunks = await stream.next(); chunks; chunks = await stream.next()) yield* chunks as ChatCompletionChunk[];
}

/** The loop people write by hand: stream, gather tool calls by index, run them, repeat. */
async function handWrittenTurn(client: OpenAISDK, chunks: typeof sdkChunks): Promise<string> {
  const specs: ChatCompletionTool[] = tools.map((t) => ({
    type: "function",
    function: { name: t.metadata.name, description: t.metadata.description, parameters: t.metadata.parameters },
  }));
  const messages: ChatCompletionMessageParam[] = [{ role: "user", content: QUESTION }];
  let tokens = 0; // a loop that keeps track of cost asks for usage, as stepflow's OpenAI does
  for (;;) {
    let content = "";
    const calls: { id: string; name: string; arguments: string }[] = [];
    for await (const chunk of await chunks(client, { model: "gpt-4o-mini", messages, tools: specs, stream: true, stream_options: { include_usage: true } })) {
      const usage = (chunk as { usage?: { total_tokens: number } | null }).usage;
      if (usage) tokens += usage.total_tokens;
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) content += delta.content;
      for (const part of delta?.tool_calls ?? []) {
        const call = (calls[part.index] ??= { id: "", name: "", arguments: "" });
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name = part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
    }
    if (calls.length === 0) {
      if (tokens === 0) throw new Error("the server reported no token usage");
      return content;
    }
    messages.push({
      role: "assistant",
      content,
      tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
    });
    for (const call of calls) {
      const tool = tools.find((t) => t.metadata.name === call.name);
      const output = tool ? await tool.call(JSON.parse(call.arguments || "{}")) : `Tool ${call.name} does not exist`;
      messages.push({ role: "tool", tool_call_id: call.id, content: String(output) });
    }
  }
}

const WARM_UP_ROUNDS = 2000;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

/**
 * The phases of a turn, timed from undici's diagnostics channels (`undici:request:create`,
 * `:headers`, `:trailers`): before the first request, each request until its response headers,
 * the response body, the client's work between one body and the next request, and after the
 * last body. Which phase grows shows whose code the extra time is in.
 */
const PHASES = [
  "start → request 1",
  "request 1 → headers",
  "body 1",
  "body 1 → request 2",
  "request 2 → headers",
  "body 2",
  "body 2 → request 3",
  "request 3 → headers",
  "body 3",
  "body 3 → answer",
];
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
  if (marks.length !== HTTP_EVENTS.length * 3)
    throw new Error(`expected 3 requests (${HTTP_EVENTS.length * 3} HTTP events) in a turn, saw ${marks.length} events`);
  const times = [started, ...marks, ended];
  return { ms: ended - started, phases: times.slice(1).map((t, i) => t - (times[i] as number)) };
}

/** `rounds` rounds of one turn per side, rotating which side goes first. */
async function takeTurns(rounds: number, sides: readonly (() => Promise<string>)[], marks?: number[]): Promise<TimedTurn[][]> {
  const turns: TimedTurn[][] = sides.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < sides.length; k++) {
      const side = (round + k) % sides.length;
      (turns[side] as TimedTurn[]).push(await timedTurn(sides[side] as () => Promise<string>, marks));
    }
  }
  return turns;
}

/**
 * Runs the agent table: `rounds` rounds of one turn per side, rotating which side goes first.
 * A shared machine's speed drifts over seconds; interleaving single turns puts every side under
 * the same drift (blocks of 50 turns with a forced GC between them gave ratios from 1.08 to 1.23
 * on the same code; interleaved turns repeat within ±0.02). Then as many rounds again, timed by
 * phase. The middle side is the hand-written loop reading the response body as stepflow's
 * `OpenAI` does: stepflow's reader is cheaper than the SDK's stream, and that row separates
 * the saving from the rest of stepflow's cost.
 */
export async function benchAgent(rounds = 2000): Promise<void> {
  const calculator = calculatorTurns();
  const server = await startOpenAIServer({ turns: (_body, index) => calculator[index % calculator.length] as ServerTurn, keepRequests: false });
  const marks: number[] = [];
  const mark = () => void marks.push(performance.now());
  try {
    const llm = new OpenAI({ apiKey: "sk-bench", baseURL: server.baseURL, model: "gpt-4o-mini", maxRetries: 0 });
    const client = await llm.session;
    const agent = new FunctionCallingAgent({ llm, tools });
    const names = ["hand-written OpenAI-SDK loop", "the same loop, body read by stepflow's reader", "stepflow FunctionCallingAgent"];
    const sides = [
      () => handWrittenTurn(client, sdkChunks),
      () => handWrittenTurn(client, stepflowReaderChunks),
      async () => String((await agent.run({ input: QUESTION })).response.content),
    ];
    // Warm-up, every side: the agent runs far more functions than the hand loop, and V8 takes a
    // while to optimize them all: after 300 warm-up turns, the median ratio of the next 2,000
    // pairs was 0.02 above that of the 6,000 after them. The table is the steady state.
    await takeTurns(WARM_UP_ROUNDS, sides);
    const ms = (await takeTurns(rounds, sides)).map((turns) => turns.map((turn) => turn.ms));
    const hand = ms[0] as number[];
    printTable(
      ["run", "turns", "ms/turn (mean)", "ms/turn (median)", "× hand-written (means)", "× hand-written (medians)"],
      names.map((name, i) => {
        const side = ms[i] as number[];
        return [name, rounds, mean(side).toFixed(3), median(side).toFixed(3), (mean(side) / mean(hand)).toFixed(2), (median(side) / median(hand)).toFixed(2)];
      }),
    );

    // Stepflow's ratios per quarter of the rounds: how far they move within one run on one build.
    const quarter = Math.floor(rounds / 4);
    if (quarter >= 100) {
      const ratio = (side: number, base: number, q: number) =>
        median((ms[side] as number[]).slice(q * quarter, (q + 1) * quarter)) / median((ms[base] as number[]).slice(q * quarter, (q + 1) * quarter));
      const quarters = (side: number, base: number) => [0, 1, 2, 3].map((q) => ratio(side, base, q).toFixed(2)).join(", ");
      console.log(
        `\nStepflow's medians' ratio by quarter of those rounds (${quarter.toLocaleString("en")} each): ${quarters(2, 0)} to the hand-written loop; ${quarters(2, 1)} to the same loop with stepflow's reader.`,
      );
    }

    // Then more rounds with undici's diagnostics channels on (they cost a little on every side,
    // so the table above is measured without them).
    for (const name of HTTP_EVENTS) diagnostics.subscribe(name, mark);
    const phased = await takeTurns(rounds, sides, marks);
    const microseconds = (side: number, phase: number) => median((phased[side] as TimedTurn[]).map((turn) => turn.phases[phase] as number)) * 1000;
    console.log(`\nThe same turn by phase, from another ${rounds.toLocaleString("en")} rounds with undici's diagnostics channels on:\n`);
    printTable(
      ["phase of the turn", "hand-written (µs, median)", "hand-written, stepflow's reader (µs)", "stepflow (µs, median)", "stepflow − hand-written (µs)"],
      PHASES.map((phase, i) => [phase, ...[0, 1, 2].map((side) => microseconds(side, i).toFixed(1)), (microseconds(2, i) - microseconds(0, i)).toFixed(1)]),
    );
  } finally {
    for (const name of HTTP_EVENTS) diagnostics.unsubscribe(name, mark);
    await server.close();
  }
}
