/**
 * What the agent's steps share during one run: the conversation (memory, and the history sent
 * to the model), the tool outputs and the tokens used so far. Kept per run and not saved: a run
 * restored mid-way makes it again from `ctx.store`, where memory, sources and usage live.
 */
import type { ToolCallLLM } from "@llamaindex/core/llms";
import { RunLocal } from "../src/index.ts";
import type { Context } from "../src/index.ts";
// From the core, not stepflow/journal, whose SQLite and PostgreSQL journals a run that only
// uses a journal it was given does not need loaded (they add 7 files to the CLI's cold start).
import { useJournal } from "../src/core/internal.ts";
import type { Journal } from "../src/core/internal.ts";
import type { ToolSource } from "../src/tools/tool-calls.ts";
import { runHistory } from "./agent-history.ts";
import type { RunHistory } from "./agent-history.ts";
import { agentMemory } from "./agent-memory.ts";
import type { Conversation } from "./agent-memory.ts";
import { legacyTurn } from "./agent-saved-by-0.1.ts";
import type { UsageRecord } from "./agent-usage.ts";

/**
 * One run's shared state.
 * @example const run = await agentRun(ctx, settings); run.history.wellFormed();
 */
export interface AgentRun extends Conversation<RunHistory> {
  /** LLM calls made by this run (in this process: a restored run counts afresh). */
  llmCalls: number;
  /** The tool outputs of this run: the array at ctx.store "sources". */
  readonly sources: ToolSource[];
  readonly usage: UsageRecord;
}

/** What making a run's state needs of the agent. */
interface RunSetup {
  readonly llm: ToolCallLLM;
  readonly tokenLimit: number;
  readonly journal: Journal | undefined;
}

const runs = new RunLocal<AgentRun>();

/**
 * The state of the run `ctx` belongs to, once a step of the run made it (with {@link agentRun}).
 * Read without an await: every step asks, and all but a run's first find it made.
 * @example const run = runOf(ctx) ?? (await agentRun(ctx, settings));
 */
export function runOf(ctx: Context): AgentRun | undefined {
  return runs.get(ctx);
}

/**
 * Makes the state of the run `ctx` belongs to: by the run's first step (`starting`: a new run,
 * whose sources and usage start empty) or the first step a restored run executes.
 * @example const run = await agentRun(ctx, { llm, tokenLimit: 89_600, journal: undefined }, true);
 */
export async function agentRun(ctx: Context, setup: RunSetup, starting = false): Promise<AgentRun> {
  if (setup.journal) useJournal(ctx, setup.journal);
  // What a 0.1.0 run kept of a tool turn belongs to that run, resumed: in a new run (a conversation a
  // client sent, say) its results would stand for calls never made. Checked without an await: most have none.
  const legacy = starting ? legacyTurn(ctx) : undefined;
  if (legacy) await legacy.done();
  const memory = await agentMemory(ctx, setup.llm);
  let sources = starting ? undefined : await ctx.store.get<ToolSource[] | undefined>("sources", undefined);
  if (!Array.isArray(sources)) await ctx.store.set("sources", (sources = []));
  let usage = starting ? undefined : await ctx.store.get<UsageRecord | undefined>("usage", undefined);
  if (!Array.isArray(usage?.calls)) await ctx.store.set("usage", (usage = { calls: [], lastAt: -1 }));
  const history = await runHistory(memory, setup.tokenLimit);
  return runs.set(ctx, { llmCalls: 0, memory, size: history.size, sources, usage, history });
}
