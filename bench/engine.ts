/**
 * Engine benchmark: ping-pong between two steps until N events, and a fan-out collected by one step.
 * stepflow vs @llamaindex/workflow-core (deprecated upstream) vs a bare `await` loop (the floor).
 */
import { createWorkflow, workflowEvent } from "@llamaindex/workflow-core";
import { type Context, Event, StartEvent, StopEvent, Workflow, step } from "../src/index.ts";
import { measure, perEventMicros, printTable } from "./measure.ts";
import type { Measurement } from "./measure.ts";

class Ping extends Event<{ n: number }> {}
class Pong extends Event<{ n: number }> {}

class PingPong extends Workflow<{ events: number; stream: boolean }, number> {
  @step({ accepts: [StartEvent, Pong], emits: [Ping, StopEvent] })
  async ping(ctx: Context, ev: StartEvent<{ events: number; stream: boolean }> | Pong) {
    const n = ev instanceof Pong ? ev.n : 0;
    const limit = (this as PingPong).limit;
    if (n >= limit) return new StopEvent({ result: n });
    const next = new Ping({ n: n + 1 });
    if ((this as PingPong).streamEvents) ctx.writeEventToStream(next);
    return next;
  }

  @step({ accepts: [Ping], emits: [Pong] })
  async pong(ctx: Context, ev: Ping) {
    const next = new Pong({ n: ev.n + 1 });
    if ((this as PingPong).streamEvents) ctx.writeEventToStream(next);
    return next;
  }

  constructor(
    readonly limit: number,
    readonly streamEvents: boolean,
  ) {
    super({ timeout: null });
  }
}

class Item extends Event<{ n: number }> {}
class Done extends Event<{ n: number }> {}

/** Fan-out, fan-in: the start step sends `events` items, a step with 8 workers handles each, one step collects them all. */
class FanOut extends Workflow<{ events: number }, number> {
  // One array for every call: collectEvents reads a list of types once, not at each call.
  readonly #all: readonly (typeof Done)[];

  constructor(readonly events: number) {
    super({ timeout: null });
    this.#all = new Array<typeof Done>(events).fill(Done);
  }

  @step({ accepts: [StartEvent], emits: [Item] })
  async start(ctx: Context) {
    for (let n = 0; n < (this as FanOut).events; n++) ctx.sendEvent(new Item({ n }));
  }

  @step({ accepts: [Item], emits: [Done], numWorkers: 8 })
  async work(_ctx: Context, ev: Item) {
    await Promise.resolve(); // an await, as real work has: the 8 workers overlap
    return new Done({ n: ev.n * 2 });
  }

  @step({ accepts: [Done], emits: [StopEvent] })
  async collect(ctx: Context, ev: Done) {
    const all = ctx.collectEvents(ev, (this as FanOut).#all);
    return all ? new StopEvent({ result: all.length }) : undefined;
  }
}

/** The same fan-out with a plain counter in place of collectEvents: what a fan-in costs at least. */
class FanOutCounted extends Workflow<{ events: number }, number> {
  #seen = 0;

  constructor(readonly events: number) {
    super({ timeout: null });
  }

  @step({ accepts: [StartEvent], emits: [Item] })
  async start(ctx: Context) {
    for (let n = 0; n < (this as FanOutCounted).events; n++) ctx.sendEvent(new Item({ n }));
  }

  @step({ accepts: [Item], emits: [Done], numWorkers: 8 })
  async work(_ctx: Context, ev: Item) {
    await Promise.resolve();
    return new Done({ n: ev.n * 2 });
  }

  @step({ accepts: [Done], emits: [StopEvent] })
  async count(_ctx: Context, _ev: Done) {
    const self = this as FanOutCounted;
    return ++self.#seen === self.events ? new StopEvent({ result: self.#seen }) : undefined;
  }
}

/** Fan-out of `events` counted by a plain counter (the floor of the collected fan-in). */
export async function fanInCounter(events: number): Promise<number> {
  const counted = await new FanOutCounted(events).run({ events });
  if (counted !== events) throw new Error(`counted ${counted} events, expected ${events}`);
  return counted;
}

export async function fanOut(events: number): Promise<number> {
  const collected = await new FanOut(events).run({ events });
  if (collected !== events) throw new Error(`collected ${collected} events, expected ${events}`);
  return collected;
}

/** stepflow's ping-pong, no stream reader. */
export async function stepflow(events: number): Promise<number> {
  return new PingPong(events, false).run({ events, stream: false });
}

/** stepflow's ping-pong, every event written to the stream and read by a `for await`. */
export async function stepflowConsumed(events: number): Promise<number> {
  const handler = new PingPong(events, true).run({ events, stream: true });
  let seen = 0;
  for await (const _ev of handler.streamEvents()) seen++;
  const result = await handler;
  if (seen !== events + 1) throw new Error(`stream saw ${seen} events, expected ${events + 1}`);
  return result;
}

/** The floor: a bare `await` loop handing an object from one async function to the next. */
export async function floor(events: number): Promise<number> {
  const handle = async (n: number) => ({ n: n + 1 });
  let ev = { n: 0 };
  while (ev.n < events) ev = await handle(ev.n);
  return ev.n;
}

/** The same ping-pong on @llamaindex/workflow-core, as its docs write it. */
export async function workflowCore(events: number): Promise<number> {
  const start = workflowEvent<number>();
  const ping = workflowEvent<number>();
  const pong = workflowEvent<number>();
  const stop = workflowEvent<number>();
  const wf = createWorkflow();
  wf.handle([start], async (_ctx, ev) => ping.with(ev.data + 1));
  wf.handle([ping], async (_ctx, ev) => pong.with(ev.data + 1));
  wf.handle([pong], async (_ctx, ev) => (ev.data >= events ? stop.with(ev.data) : ping.with(ev.data + 1)));
  const { stream, sendEvent } = wf.createContext();
  sendEvent(start.with(0));
  const all = await stream.until(stop).toArray();
  return (all.at(-1) as { data: number }).data;
}

/** Runs the engine table; returns the rows for the README. */
export async function benchEngine(events = 1_000_000): Promise<Measurement[]> {
  const rows: Measurement[] = [];
  rows.push(await measure("bare await loop (floor)", events, () => floor(events)));
  rows.push(await measure("stepflow", events, () => stepflow(events)));
  rows.push(await measure("stepflow + streamEvents() consumer", events, () => stepflowConsumed(events)));
  for (let i = 0; i < 3; i++) await fanOut(10_000); // warm-up: 10,000 events are too few to reach compiled code in one run
  rows.push(await measure("stepflow fan-out: 10,000 events through a numWorkers: 8 step, collected", 10_000, () => fanOut(10_000)));
  for (let i = 0; i < 3; i++) await fanInCounter(10_000);
  rows.push(await measure("the same fan-out counted by a plain counter (the floor of a fan-in)", 10_000, () => fanInCounter(10_000)));
  // workflow-core grows quadratically (measured here: 2k events 0.19 s, 10k events 2.4 s), so
  // 1M events would take hours: it is measured at growing N, capped at 20k, to show the trend.
  for (const n of [2_000, 5_000, 10_000, 20_000]) {
    try {
      rows.push(await measure(`@llamaindex/workflow-core N=${n.toLocaleString("en")}`, n, () => workflowCore(n)));
    } catch (error) {
      rows.push({
        name: `@llamaindex/workflow-core N=${n}`,
        events: n,
        ms: NaN,
        heapGrowthMB: NaN,
        retainedMB: NaN,
        note: `failed: ${(error as Error).message}`,
      });
      break;
    }
  }
  const base = rows[1] as Measurement;
  printTable(
    ["run", "events", "µs/event", "× stepflow", "heap growth, before GC (MB)", "retained after GC (MB)"],
    rows.map((r) => [
      r.name,
      r.events.toLocaleString("en"),
      perEventMicros(r).toFixed(3),
      (perEventMicros(r) / perEventMicros(base)).toFixed(2),
      r.note ?? r.heapGrowthMB.toFixed(1),
      r.note ? "" : r.retainedMB.toFixed(1),
    ]),
  );
  return rows;
}
