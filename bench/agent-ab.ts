/**
 * The agent of this checkout against the agent of another, in one process:
 * `node --import tsx --expose-gc bench/agent-ab.ts OTHER_CHECKOUT [ROUNDS]`. Each round runs one
 * turn of "What is (2123 + 2321) * 312?" per side, rotating which goes first, against the same
 * local SSE server (see README.md: interleaved single turns put both sides under the same drift
 * of a shared machine). Prints each side's median and mean, and their ratios, and the median
 * time from a turn's start to its first HTTP request (undici's `undici:request:create`), the
 * part of the turn before the model is asked: the run's start and the agent's set-up.
 */
import diagnostics from "node:diagnostics_channel";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { calculatorTurns, startOpenAIServer } from "../test/support/openai-sse-server.ts";
import type { ServerTurn } from "../test/support/openai-sse-server.ts";
import { printTable } from "./measure.ts";

const QUESTION = "What is (2123 + 2321) * 312?";
const [otherRoot, roundsArg] = process.argv.slice(2);
if (!otherRoot) throw new Error("Usage: bench/agent-ab.ts OTHER_CHECKOUT [ROUNDS]");
const rounds = Number(roundsArg ?? 4000);
const here = resolve(import.meta.dirname, "..");

type Turn = () => Promise<string>;

/** A turn of the agent of the checkout at `root`, with that checkout's own OpenAI class. */
async function agentOf(root: string, baseURL: string): Promise<Turn> {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { OpenAI } = await load("src/llm/openai.ts");
  const { FunctionCallingAgent } = await load("workflows/function-calling-agent.ts");
  const { add, multiply } = await load("workflows/tools/calculator.ts");
  const llm = new OpenAI({ apiKey: "sk-bench", baseURL, model: "gpt-4o-mini", maxRetries: 0 });
  const agent = new FunctionCallingAgent({ llm, tools: [add, multiply] });
  return async () => String((await agent.run({ input: QUESTION })).response.content);
}

let started = 0;
let firstRequest: number | undefined;
const onRequest = () => void (firstRequest ??= performance.now() - started);

/** The turn's milliseconds; its milliseconds to the first request go to `firsts`. */
async function timed(turn: Turn, firsts: number[]): Promise<number> {
  firstRequest = undefined;
  started = performance.now();
  const answer = await turn();
  const ms = performance.now() - started;
  if (!answer.includes("1386528")) throw new Error(`unexpected answer: ${answer}`);
  firsts.push(firstRequest ?? Number.NaN);
  return ms;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

const calculator = calculatorTurns();
const server = await startOpenAIServer({ turns: (_body, index) => calculator[index % calculator.length] as ServerTurn, keepRequests: false });
diagnostics.subscribe("undici:request:create", onRequest);
try {
  const sides = [await agentOf(otherRoot, server.baseURL), await agentOf(here, server.baseURL)];
  const names = [`other (${otherRoot})`, `this (${here})`];
  const take = async (n: number) => {
    const ms: number[][] = sides.map(() => []);
    const firsts: number[][] = sides.map(() => []);
    for (let round = 0; round < n; round++) {
      for (let k = 0; k < sides.length; k++) {
        const side = (round + k) % sides.length;
        (ms[side] as number[]).push(await timed(sides[side] as Turn, firsts[side] as number[]));
      }
    }
    return { ms, firsts };
  };
  await take(2000); // warm-up (README.md: V8 takes ~2,000 turns to optimize the agent)
  const { ms, firsts } = await take(rounds);
  const [a, b] = ms as [number[], number[]];
  printTable(
    ["agent", "turns", "ms/turn (median)", "ms/turn (mean)", "× other (medians)", "× other (means)", "start → request 1 (µs, median)"],
    names.map((name, i) => {
      const side = ms[i] as number[];
      const first = median(firsts[i] as number[]) * 1000;
      return [
        name,
        rounds,
        median(side).toFixed(3),
        mean(side).toFixed(3),
        (median(side) / median(a)).toFixed(3),
        (mean(side) / mean(a)).toFixed(3),
        first.toFixed(1),
      ];
    }),
  );
  const quarter = Math.floor(rounds / 4);
  const ratios = [0, 1, 2, 3].map((q) => (median(b.slice(q * quarter, (q + 1) * quarter)) / median(a.slice(q * quarter, (q + 1) * quarter))).toFixed(3));
  console.log(`\nThis / other, medians by quarter of the rounds: ${ratios.join(", ")}`);
} finally {
  diagnostics.unsubscribe("undici:request:create", onRequest);
  await server.close();
}
