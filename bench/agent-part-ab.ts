/**
 * One part of the agent's turn, this checkout's against another's, timed where it runs: in
 * the middle of agent turns against the local SSE server, where every network round trip has
 * pushed stepflow's code and data out of the CPU caches (README.md: "Cold code, not CPU work").
 * `node --import tsx bench/agent-part-ab.ts OTHER_CHECKOUT encode|chat [TURNS]`: the agent of
 * this checkout runs its turns; each call to the part (`encode`: `Codecs.encode`, the
 * `ctx.once` records of a turn; `chat`: stepflow's `OpenAI.chat`, building a streaming request)
 * is made by both checkouts' code in turn, rotating which goes first, and only this
 * checkout's answer is used. Prints each side's median microseconds per turn after the first
 * half of the turns (warm-up). Add `--import OTHER_CHECKOUT/bench/use-build.mjs --import
 * ./bench/use-build.mjs` to time both builds (`npm run build` in each) instead of the sources.
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { calculatorTurns, startOpenAIServer } from "../test/support/openai-sse-server.ts";
import type { ServerTurn } from "../test/support/openai-sse-server.ts";
import { printTable } from "./measure.ts";

const [otherRoot, part, turnsArg] = process.argv.slice(2);
if (!otherRoot || (part !== "encode" && part !== "chat")) throw new Error("Usage: bench/agent-part-ab.ts OTHER_CHECKOUT encode|chat [TURNS]");
const turns = Number(turnsArg ?? 6000);
const here = resolve(import.meta.dirname, "..");
const load = (root: string, path: string) => import(pathToFileURL(join(root, path)).href);

type Method = (this: unknown, ...args: unknown[]) => unknown;
const calculator = calculatorTurns();
const server = await startOpenAIServer({ turns: (_body, index) => calculator[index % calculator.length] as ServerTurn, keepRequests: false });
try {
  const { OpenAI } = await load(here, "src/llm/openai.ts");
  const { FunctionCallingAgent } = await load(here, "workflows/function-calling-agent.ts");
  const { add, multiply } = await load(here, "workflows/tools/calculator.ts");
  const { memoryCodec } = await load(here, "workflows/agent-memory.ts");
  const options = { apiKey: "sk-bench", baseURL: server.baseURL, model: "gpt-4o-mini", maxRetries: 0 };
  const llm = new OpenAI(options);
  // The part of each side: its method, and the object the other side's is called on.
  const [owner, otherOwner] =
    part === "encode"
      ? [
          (await load(here, "src/core/serialize.ts")).Codecs.prototype,
          new (await load(otherRoot, "src/core/serialize.ts")).Codecs({ "llamaindex.Memory": memoryCodec(llm) }),
        ]
      : [OpenAI.prototype, new (await load(otherRoot, "src/llm/openai.ts")).OpenAI(options)];
  const name = part === "encode" ? "encode" : "chat";
  const mine = owner[name] as Method;
  const other = otherOwner[name] as Method;
  const spent = [0, 0];
  let calls = 0;
  owner[name] = function (this: unknown, ...args: unknown[]) {
    let answer: unknown;
    const first = calls++ & 1;
    for (let k = 0; k < 2; k++) {
      const side = (first + k) & 1;
      const started = performance.now();
      if (side === 0) other.apply(otherOwner, args);
      else answer = mine.apply(this, args);
      spent[side] = (spent[side] as number) + performance.now() - started;
    }
    return answer;
  };
  const agent = new FunctionCallingAgent({ llm, tools: [add, multiply] });
  const perTurn: number[][] = [[], []];
  for (let turn = 0; turn < turns; turn++) {
    spent.fill(0);
    await agent.run({ input: "What is (2123 + 2321) * 312?" });
    for (let side = 0; side < 2; side++) (perTurn[side] as number[]).push((spent[side] as number) * 1000);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  const [a, b] = perTurn.map((values) => median(values.slice(Math.floor(turns / 2)))) as [number, number];
  printTable(
    [`${part}, µs per turn (median)`, `other (${otherRoot})`, `this (${here})`, "this / other"],
    [[part, a.toFixed(1), b.toFixed(1), (b / a).toFixed(3)]],
  );
} finally {
  await server.close();
}
