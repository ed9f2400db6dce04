/**
 * A step that fails the run while a sibling step is still executing: the sibling's state ends
 * as "cancelled" in the lifecycle events, and the inspector's timeline and graph show it so,
 * not as running forever.
 */
import { expect, it } from "vitest";
import { StepStateChangedEvent } from "../../src/index.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { siblingsWorkflow } from "../support/inspector-workflows.ts";

// The page's modules are type-checked with the DOM library (src/web/page/tsconfig.json), not
// with this project's: imported by a path tsc does not follow, with the types used here.
interface Span {
  readonly step: string;
  readonly state: string;
  readonly end: number | undefined;
}
const page = "../../src/web/page/";
const { stepSpans } = (await import(`${page}timeline.ts`)) as { stepSpans(events: readonly StreamedEvent[]): Span[] };
const { markedGraph } = (await import(`${page}graph.ts`)) as { markedGraph(text: string, spans: readonly Span[]): string };

it("a failed step's sibling still executing ends cancelled, and the inspector shows it cancelled", async () => {
  const handler = siblingsWorkflow("fast step failed").run({}, { lifecycleEvents: true });
  const events: StreamedEvent[] = [];
  let seq = 0;
  for await (const ev of handler.streamEvents()) {
    events.push({ seq: seq++, type: ev.constructor.name, data: { ...ev } as StreamedEvent["data"], at: new Date().toISOString() });
  }
  await expect(handler).rejects.toThrow("fast step failed");
  const slow = events.filter((ev) => ev.type === StepStateChangedEvent.name && ev.data.step === "slow").map((ev) => ev.data.state);
  expect(slow).toEqual(["started", "cancelled"]);
  const spans = stepSpans(events);
  expect(spans.map((s) => [s.step, s.state])).toEqual([
    ["start", "finished"],
    ["slow", "cancelled"],
    ["fast", "failed"],
  ]);
  expect(spans.every((s) => s.end !== undefined)).toBe(true);
  expect(markedGraph("flowchart TD\n  step_slow[slow]", spans)).toContain("class step_slow cancelled");
});
