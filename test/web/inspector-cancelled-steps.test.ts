/**
 * A step that fails the run while a sibling step is still executing: the sibling's state ends
 * as "cancelled" in the lifecycle events, and the inspector's timeline and graph show it so,
 * not as running forever.
 */
import { expect, it } from "vitest";
import { type Context, Event, StartEvent, StepStateChangedEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { StreamedEvent } from "../../src/client/types.ts";

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

class Slow extends Event<{ n: number }> {}
class Fast extends Event<{ n: number }> {}

class Siblings extends Workflow<Record<string, never>, string> {
  @step({ accepts: [StartEvent], emits: [Slow, Fast] })
  async start(ctx: Context) {
    ctx.sendEvent(new Slow({ n: 1 }));
    ctx.sendEvent(new Fast({ n: 2 }));
  }

  @step({ accepts: [Slow], emits: [StopEvent] })
  async slow(ctx: Context, _ev: Slow) {
    // Never finishes by itself: it ends with the run.
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    return new StopEvent({ result: "late" });
  }

  @step({ accepts: [Fast], emits: [StopEvent] })
  async fast(_ctx: Context, _ev: Fast): Promise<StopEvent> {
    await new Promise((resolve) => setImmediate(resolve)); // after the start step has finished
    throw new Error("fast step failed");
  }
}

it("a failed step's sibling still executing ends cancelled, and the inspector shows it cancelled", async () => {
  const handler = new Siblings({ timeout: null }).run({}, { lifecycleEvents: true });
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
