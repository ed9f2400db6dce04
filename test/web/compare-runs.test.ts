/**
 * The inspector's comparison of two runs' events: what both wrote in the same order lines up,
 * ids each run makes anew and times do not count, and what differs pairs up or stands alone.
 */
import { expect, it } from "vitest";
import type { StreamedEvent } from "../../src/client/types.ts";

// The page's modules are type-checked with the DOM library (src/web/page/tsconfig.json): imported
// by a path tsc does not follow, with the types used here.
interface DiffRow {
  readonly kind: "same" | "changed" | "left" | "right";
  readonly left?: StreamedEvent;
  readonly right?: StreamedEvent;
}
const page = "../../src/web/page/";
const { diffEvents } = (await import(`${page}compare.ts`)) as { diffEvents(a: readonly StreamedEvent[], b: readonly StreamedEvent[]): DiffRow[] };

let seq = 0;
const ev = (type: string, data: StreamedEvent["data"]): StreamedEvent => ({
  seq: ++seq,
  type,
  data,
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
});
const kinds = (rows: DiffRow[]) => rows.map((row) => [row.kind, row.left?.type ?? null, row.right?.type ?? null]);

it("lines up equal events, whatever their run, approval and call ids and their times", () => {
  const a = [
    ev("RunStartedEvent", { runId: "a", workflow: "hr" }),
    ev("agent.ToolApprovalRequestEvent", { approvalId: "x", toolCall: { id: "c1", name: "fire" } }),
  ];
  const b = [
    ev("RunStartedEvent", { runId: "b", workflow: "hr" }),
    ev("agent.ToolApprovalRequestEvent", { approvalId: "y", toolCall: { id: "c2", name: "fire" } }),
  ];
  expect(kinds(diffEvents(a, b))).toEqual([
    ["same", "RunStartedEvent", "RunStartedEvent"],
    ["same", "agent.ToolApprovalRequestEvent", "agent.ToolApprovalRequestEvent"],
  ]);
});

it("pairs the events that differ between two matches, and shows the rest as one run's only", () => {
  const start = { runId: "r", workflow: "hr" };
  const a = [
    ev("RunStartedEvent", start),
    ev("ApprovalDecision", { approved: true }),
    ev("agent.FunctionOutputEvent", { output: "removed" }),
    ev("RunEndedEvent", { status: "succeeded" }),
  ];
  const b = [ev("RunStartedEvent", start), ev("ApprovalDecision", { approved: false }), ev("RunEndedEvent", { status: "succeeded" })];
  expect(kinds(diffEvents(a, b))).toEqual([
    ["same", "RunStartedEvent", "RunStartedEvent"],
    ["changed", "ApprovalDecision", "ApprovalDecision"],
    ["left", "agent.FunctionOutputEvent", null],
    ["same", "RunEndedEvent", "RunEndedEvent"],
  ]);
  expect(kinds(diffEvents(b, a)).map(([kind]) => kind)).toEqual(["same", "changed", "right", "same"]);
  expect(diffEvents([], [])).toEqual([]);
  expect(kinds(diffEvents([], b)).map(([kind]) => kind)).toEqual(["right", "right", "right"]);
});

it("lines up the same answer sent in to two runs, and shows a different answer, or sender, as a difference", async () => {
  const { summary } = (await import(`${page}timeline.ts`)) as { summary(ev: StreamedEvent): string };
  const answer = (runId: string, response: string, by: string) =>
    ev("EventReceivedEvent", { runId, type: "HumanResponseEvent", data: { response }, by, label: "web page" });
  const a = [answer("a", "yes", "alice"), ev("StopEvent", { result: "done" })];
  expect(kinds(diffEvents(a, [answer("b", "yes", "alice"), ev("StopEvent", { result: "done" })])).map(([kind]) => kind)).toEqual(["same", "same"]);
  const rows = diffEvents(a, [answer("b", "no", "alice"), answer("b", "yes", "bob"), ev("StopEvent", { result: "done" })]);
  expect(rows.map((row) => [row.kind, row.left && summary(row.left), row.right && summary(row.right)])).toEqual([
    ["changed", 'HumanResponseEvent from alice (web page): {"response":"yes"}', 'HumanResponseEvent from alice (web page): {"response":"no"}'],
    ["right", undefined, 'HumanResponseEvent from bob (web page): {"response":"yes"}'],
    ["same", '{"result":"done"}', '{"result":"done"}'],
  ]);
  // A run that waits for outside input says so in its timeline.
  expect(summary(ev("WorkflowIdleEvent", { runId: "a" }))).toBe("Waiting for input");
});
