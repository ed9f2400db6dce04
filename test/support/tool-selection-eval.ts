/**
 * The tool selection evaluation: the business suite's 300 operations as tools, the labelled
 * questions, and for each k the share of questions whose operation is among the k tools
 * selected (recall@k) and the prompt tokens a request then carries. Shared by the test that
 * holds a recall floor and by `npm run bench -- tools`.
 */
import { tokenizers } from "@llamaindex/env/tokenizers";
import type { BaseTool } from "@llamaindex/core/llms";
import { toolSpecTokens } from "../../src/llm/token-usage.ts";
import { bm25ToolSelector, toolsForCall } from "../../src/tools/tool-selection.ts";
import type { ToolSelector } from "../../src/tools/tool-selection.ts";
import { openApiTools, restApiTool } from "../../workflows/tools/rest-api.ts";
import { businessSuiteOpenApi } from "./business-suite-openapi.ts";
import { TOOL_SELECTION_QUESTIONS } from "./tool-selection-questions.ts";
import type { LabelledQuestion } from "./tool-selection-questions.ts";

export interface SelectionAtK {
  readonly k: number;
  /** Share of questions whose operation was selected, 0–1. */
  readonly recall: number;
  /** Mean tokens of the selected tools' specs per request. */
  readonly toolSpecTokens: number;
  /** Mean prompt tokens per request: the question and the selected tools' specs. */
  readonly promptTokens: number;
  /** The questions whose operation was not selected. */
  readonly misses: readonly LabelledQuestion[];
}

export interface SelectionEvaluation {
  readonly operations: number;
  readonly questions: number;
  /** Every operation's spec sent on every request. */
  readonly all: { readonly toolSpecTokens: number; readonly promptTokens: number };
  /** The one `call_rest_api` tool, its path argument listing all 300 endpoints. */
  readonly singleTool: { readonly toolSpecTokens: number; readonly promptTokens: number };
  readonly atK: readonly SelectionAtK[];
  /** Milliseconds to index the 300 tools, and per selection (mean). */
  readonly indexMs: number;
  readonly selectMs: number;
}

const tokens = (text: string) => tokenizers.tokenizer().encode(text).length;

/**
 * Runs the evaluation for each k.
 * @example evaluateToolSelection([5, 10, 20]).atK.map((row) => row.recall);
 */
export function evaluateToolSelection(
  ks: readonly number[],
  makeSelector: (tools: readonly BaseTool[]) => ToolSelector = bm25ToolSelector,
): SelectionEvaluation {
  const openApi = businessSuiteOpenApi();
  const tools = openApiTools({ openApi, baseURL: "https://api.acme.example" });
  const started = performance.now();
  const selector = makeSelector(tools);
  const indexMs = performance.now() - started;
  const questionTokens = TOOL_SELECTION_QUESTIONS.reduce((sum, { question }) => sum + tokens(question), 0) / TOOL_SELECTION_QUESTIONS.length;
  const allSpecs = toolSpecTokens(tools);
  const singleSpec = toolSpecTokens([restApiTool({ baseURL: "https://api.acme.example", openApi })]);
  let selections = 0;
  let selecting = 0;
  const atK = ks.map((k): SelectionAtK => {
    let specs = 0;
    const misses: LabelledQuestion[] = [];
    for (const labelled of TOOL_SELECTION_QUESTIONS) {
      const start = performance.now();
      const sent = toolsForCall([{ role: "user", content: labelled.question }], tools, selector, k);
      selecting += performance.now() - start;
      selections++;
      specs += toolSpecTokens(sent);
      if (!sent.some((tool) => tool.metadata.name === labelled.operationId)) misses.push(labelled);
    }
    const n = TOOL_SELECTION_QUESTIONS.length;
    return { k, recall: (n - misses.length) / n, toolSpecTokens: specs / n, promptTokens: questionTokens + specs / n, misses };
  });
  return {
    operations: tools.length,
    questions: TOOL_SELECTION_QUESTIONS.length,
    all: { toolSpecTokens: allSpecs, promptTokens: questionTokens + allSpecs },
    singleTool: { toolSpecTokens: singleSpec, promptTokens: questionTokens + singleSpec },
    atK,
    indexMs,
    selectMs: selecting / selections,
  };
}
