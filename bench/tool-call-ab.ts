/**
 * The agent's tool runner of this checkout against another's, in one process:
 * `node --import tsx --expose-gc bench/tool-call-ab.ts OTHER_CHECKOUT [ROUNDS] [CALLS]`. Each
 * round runs CALLS (default 10,000) calls of `runToolCall` on each side, rotating which goes
 * first, with each checkout's own `tool()` and runner and a zod tool that answers at once (the
 * runner's work: find the tool, check the arguments, run it, shape the result). Rows: arguments
 * with nothing to drop (`{ city, unit }`), and an optional field sent as `null` (a checkout
 * before null-arguments.ts refuses that call: the row compares a refusal with a run). Prints
 * each side's median ns/call over ROUNDS (default 60) and their ratio.
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { printTable } from "./measure.ts";

const [otherRoot, roundsArg, callsArg] = process.argv.slice(2);
if (!otherRoot) throw new Error("Usage: bench/tool-call-ab.ts OTHER_CHECKOUT [ROUNDS] [CALLS]");
const rounds = Number(roundsArg ?? 60);
const calls = Number(callsArg ?? 10_000);
const here = resolve(import.meta.dirname, "..");
const INPUTS: Record<string, Record<string, unknown>> = {
  "{ city, unit }": { city: "Paris", unit: "celsius" },
  "{ city, unit: null }": { city: "Paris", unit: null },
};

type Batch = (input: Record<string, unknown>, n: number) => Promise<number>;

/** `n` calls of the runner of the checkout at `root`, timed: ns per call. */
async function runnerOf(root: string): Promise<Batch> {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { tool } = (await load("src/tools/tool.ts")) as typeof import("../src/tools/tool.ts");
  const { runToolCall } = (await load("src/tools/tool-calls.ts")) as typeof import("../src/tools/tool-calls.ts");
  const weather = tool({
    name: "get_weather",
    description: "The weather in a city.",
    parameters: z.object({ city: z.string(), unit: z.enum(["celsius", "fahrenheit"]).optional() }),
    execute: ({ city }) => `Sunny in ${city}`,
  });
  const tools = [weather];
  return async (input, n) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const source = runToolCall({ id: "c", name: "get_weather", input: input as never }, tools);
      if (source instanceof Promise) await source;
    }
    return Number(process.hrtime.bigint() - start) / n;
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const sides = [await runnerOf(here), await runnerOf(resolve(otherRoot))];
const rows: string[][] = [];
for (const [name, input] of Object.entries(INPUTS)) {
  for (const side of sides) await side(input, calls); // warm-up
  const times: [number[], number[]] = [[], []];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const at of order) {
      globalThis.gc?.();
      times[at as 0 | 1].push(await (sides[at] as Batch)(input, calls));
    }
  }
  const [mine, other] = [median(times[0]), median(times[1])];
  rows.push([name, String(rounds), String(calls), mine.toFixed(0), other.toFixed(0), (mine / other).toFixed(3)]);
}
printTable(["arguments", "rounds", "calls/round", "ns/call, this checkout", `ns/call, ${otherRoot}`, "ratio (medians)"], rows);
