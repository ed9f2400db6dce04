/**
 * `npm run bench -- tools`: per-turn tool selection on the business suite's 300-operation
 * OpenAPI document, one tool per operation, asked the labelled questions of
 * test/support/tool-selection-questions.ts: recall@k of the BM25 selection, and the prompt
 * tokens per request (the question and the tool specs, cl100k_base) against sending every
 * tool, or the one call_rest_api tool that lists every endpoint.
 */
import { evaluateToolSelection } from "../test/support/tool-selection-eval.ts";
import { printTable } from "./measure.ts";

export function benchTools(): void {
  const evaluation = evaluateToolSelection([5, 10, 20]);
  const n = (value: number) => Math.round(value).toLocaleString("en-US");
  const share = (value: number) => `${((100 * value) / evaluation.all.promptTokens).toFixed(1)}%`;
  console.log(
    `${evaluation.operations} operations, ${evaluation.questions} questions; BM25 index built in ${evaluation.indexMs.toFixed(0)} ms, ${evaluation.selectMs.toFixed(2)} ms a selection.\n`,
  );
  printTable(
    ["tools sent per request", "recall (operation among them)", "tool-spec tokens", "prompt tokens per request", "of all tools'"],
    [
      ...evaluation.atK.map((row) => [
        `${row.k} selected (maxToolsPerCall: ${row.k})`,
        row.recall.toFixed(2),
        n(row.toolSpecTokens),
        n(row.promptTokens),
        share(row.promptTokens),
      ]),
      [`all ${evaluation.operations}`, "1.00", n(evaluation.all.toolSpecTokens), n(evaluation.all.promptTokens), "100%"],
      [
        "one call_rest_api tool listing every endpoint",
        "1.00",
        n(evaluation.singleTool.toolSpecTokens),
        n(evaluation.singleTool.promptTokens),
        share(evaluation.singleTool.promptTokens),
      ],
    ],
  );
  const misses = evaluation.atK.find((row) => row.k === 5)?.misses ?? [];
  if (misses.length > 0) console.log(`\nMissed at k = 5: ${misses.map((m) => `"${m.question}" (${m.operationId})`).join("; ")}`);
}
