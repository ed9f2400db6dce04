/**
 * A process that answers a durable run's approval question and exits:
 * `node --import tsx dbos-answer-child.ts DATABASE_URL RUN_ID APPROVAL_ID`.
 */
import { ToolApprovalEvent } from "../../events/index.ts";
import { DbosRuns } from "../../src/dbos/index.ts";

const [database, runId, approvalId] = process.argv.slice(2) as [string, string, string];
const runs = await DbosRuns.connect({ database });
await runs.respond(runId, new ToolApprovalEvent({ approvalId, approved: true }));
await runs.close();
