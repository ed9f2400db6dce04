/**
 * A process that resumes a saved "Fire Lawson" run waiting for approval, approves the DELETE
 * and finishes the run, recording its tool calls in a SQLite journal:
 * `node --import tsx resume-child.ts SNAPSHOT_FILE JOURNAL_DB HR_BASE_URL APPROVAL_ID`.
 * Prints what the model was told about the DELETE.
 */
import { readFileSync } from "node:fs";
import { ToolApprovalEvent } from "../../events/index.ts";
import { Context } from "../../src/core/context.ts";
import { SqliteJournal } from "../../src/journal/sqlite-journal.ts";
import { useJournal } from "../../src/core/journal/context-journal.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { restApiTool } from "../../workflows/tools/rest-api.ts";

const [snapshotFile, journalDb, baseURL, approvalId] = process.argv.slice(2) as [string, string, string, string];
const hr = restApiTool({ baseURL, description: "The HR API.", headers: { authorization: "Bearer hr-secret" } });
const agent = new FunctionCallingAgent({
  llm: new ScriptedLLM([{ text: "Done." }]),
  tools: [hr],
  needsApproval: (call) => (call.input as { method?: string }).method !== "GET",
});
const journal = await SqliteJournal.open(journalDb);
const ctx = Context.fromJSON(agent, readFileSync(snapshotFile, "utf8"));
useJournal(ctx, journal);
const handler = agent.run(undefined, { ctx });
handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId, approved: true }));
const { sources } = await handler;
process.stdout.write(`${sources.at(-1)?.content ?? ""}\n`);
journal.close();
