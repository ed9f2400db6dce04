/**
 * Engine benchmark: ping-pong between two steps until N events, and a fan-out collected by one step.
 * stepflow vs @llamaindex/workflow-core (deprecated upstream) vs the same work with no engine
 * (engine-floors.ts: a bare `await` loop, a bare promise pool).
 *
 * The workflows keep their per-run values in public fields, not `#private` ones: tsx compiles a
 * class with decorators with its private fields lowered to WeakMap lookups, which made the
 * plain counter, the floor of a fan-in, cost a third more than the engine work it is set against.
 */
import { createWorkflow, workflowEvent } from "@llamaindex/workflow-core";
import { type Context, Event, StartEvent, StopEvent, Workflow, step } from "../src/index.ts";
import { barePool, floor, stepsPool } from "./engine-floors.ts";
import { collectYoungGarbage, measure, perEventMicros, printTable } from "./measure.ts";
import type { Measurement } from "./measure.ts";

export { barePool, floor, stepsPool } from "./engine-floors.ts";

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

/** How the fan-in step takes one `Done`: the count of all of them once they are in, else `undefined`. */
type FanIn = (ctx: Context, ev: Done) => number | undefined;

/**
 * Fan-out, fan-in: the start step sends `events` items, a step with 8 workers handles each, one
 * step takes them in with `fanIn` (each workload below passes its own).
 */
class FanOut extends Workflow<{ events: number }, number> {
  constructor(
    readonly events: number,
    readonly fanIn: FanIn,
  ) {
    super({ timeout: null });
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
    const taken = (this as FanOut).fanIn(ctx, ev);
    return taken === undefined ? undefined : new StopEvent({ result: taken });
  }
}

/** Runs a fan-out of `events` taken in by `fanIn`, and checks that every event arrived. */
async function fannedIn(events: number, fanIn: FanIn): Promise<number> {
  const taken = await new FanOut(events, fanIn).run({ events });
  if (taken !== events) throw new Error(`took in ${taken} events, expected ${events}`);
  return taken;
}

/** Fan-out of `events` counted by a plain counter in place of collectEvents (the floor of the collected fan-in). */
export function fanInCounter(events: number): Promise<number> {
  let seen = 0;
  return fannedIn(events, () => (++seen === events ? seen : undefined));
}

/** Fan-out of `events` collected with `collectEvents(ev, Done, { count })`. */
export function fanInCount(events: number): Promise<number> {
  return fannedIn(events, (ctx, ev) => ctx.collectEvents(ev, Done, { count: events })?.length);
}

/** Fan-out of `events` collected with a fresh `Array(n).fill(Done)` at each call, as people write it. */
export function fanInFresh(events: number): Promise<number> {
  return fannedIn(events, (ctx, ev) => ctx.collectEvents(ev, new Array<typeof Done>(events).fill(Done))?.length);
}

/** Fan-out of `events` collected with `collectEvents(ev, list)`, one list for every call (collectEvents reads it once). */
export function fanOut(events: number): Promise<number> {
  const all = new Array<typeof Done>(events).fill(Done);
  return fannedIn(events, (ctx, ev) => ctx.collectEvents(ev, all)?.length);
}

/**
 * Ping-pong between two steps with a `timeout`, each reading `ctx.signal` (as a step passes it
 * to an HTTP or LLM call) when `readSignal`: what a timed attempt costs the engine.
 */
class TimedPingPong extends Workflow<{ events: number }, number> {
  constructor(
    readonly limit: number,
    readonly readSignal: boolean,
  ) {
    super({ timeout: null });
  }

  @step({ accepts: [StartEvent, Pong], emits: [Ping, StopEvent], timeout: 10 })
  async ping(ctx: Context, ev: StartEvent<{ events: number }> | Pong) {
    if ((this as TimedPingPong).readSignal && ctx.signal.aborted) throw new Error("aborted");
    const n = ev instanceof Pong ? ev.n : 0;
    return n >= (this as TimedPingPong).limit ? new StopEvent({ result: n }) : new Ping({ n: n + 1 });
  }

  @step({ accepts: [Ping], emits: [Pong], timeout: 10 })
  async pong(ctx: Context, ev: Ping) {
    if ((this as TimedPingPong).readSignal && ctx.signal.aborted) throw new Error("aborted");
    return new Pong({ n: ev.n + 1 });
  }
}

/** Ping-pong of steps with `timeout: 10` that each read `ctx.signal`. */
export async function timedSignal(events: number): Promise<number> {
  return new TimedPingPong(events, true).run({ events });
}

/** Ping-pong of steps with `timeout: 10` that never read `ctx.signal`. */
export async function timedQuiet(events: number): Promise<number> {
  return new TimedPingPong(events, false).run({ events });
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

/** A row of the table: its name, its events, and one run of it. */
type Workload = readonly [name: string, events: number, run: () => Promise<number>];

/**
 * Times each of `workloads` `rounds` times, after `warmups` untimed runs of it; each row is the
 * run of median time. Engine and floor alike, each timed run comes after the same warm-up and a
 * young-generation GC, and after runs of its own workload only:
 * - not a full GC: with no run alive, it frees the hidden classes of the run's objects and V8
 *   throws away the engine's optimized code (the floors have almost none to lose), so that a
 *   10,000-event fan-out after it measured cold, 7–15 µs of CPU per event against 0.6–1.0 warm;
 * - not in turns with the other workloads: a pool of 10,000 items takes well under a
 *   millisecond, and after the fan-out workloads, in the same process, it took 4× that (cause
 *   not found). So the floors, measured first, are as fast as in a process of their own.
 * The heap columns come from one more run of each, between full GCs.
 */
async function timedRows(workloads: readonly Workload[], rounds: number, warmups: number): Promise<Measurement[]> {
  const rows: Measurement[] = [];
  for (const [name, events, run] of workloads) {
    const times: number[] = [];
    for (let round = -warmups; round < rounds; round++) {
      collectYoungGarbage();
      const started = performance.now();
      await run();
      if (round >= 0) times.push(performance.now() - started);
    }
    const heap = await measure(name, events, run);
    rows.push({ ...heap, ms: times.sort((a, b) => a - b)[Math.floor(rounds / 2)] as number });
  }
  return rows;
}

/** Runs the engine table; returns the rows for the README. */
export async function benchEngine(events = 1_000_000): Promise<Measurement[]> {
  const rows: Measurement[] = [];
  rows.push(
    ...(await timedRows(
      [
        ["bare await loop (floor)", events, () => floor(events)],
        ["stepflow", events, () => stepflow(events)],
        ["stepflow + streamEvents() consumer", events, () => stepflowConsumed(events)],
      ],
      3,
      1,
    )),
  );
  // 10,000 events are too few to reach compiled code in one run: three rounds of warm-up.
  rows.push(
    ...(await timedRows(
      [
        ["bare promise pool: 8 async workers take 10,000 items (the floor of the fan-out)", 10_000, () => barePool(10_000)],
        ["the fan-out's own steps run by that pool, no engine (its two async steps per item, awaited)", 10_000, () => stepsPool(10_000)],
        [
          "stepflow fan-out: 10,000 events through a numWorkers: 8 step, counted by a plain counter (the floor of a fan-in)",
          10_000,
          () => fanInCounter(10_000),
        ],
        ["the same fan-out collected: collectEvents(ev, list) with one list for every call", 10_000, () => fanOut(10_000)],
        ["the same, collectEvents(ev, Done, { count: 10,000 })", 10_000, () => fanInCount(10_000)],
        ["the same, collectEvents(ev, Array(10,000).fill(Done)), a fresh array at each call", 10_000, () => fanInFresh(10_000)],
      ],
      7,
      3,
    )),
  );
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
  // Each engine row against the same work without an engine, measured in the same run.
  // Rows: 0 await loop, 1 ping-pong, 2 streamed, 3 pool, 4 the fan-out's steps in the pool, 5 counted, 6–8 collected.
  const floors = new Map<Measurement | undefined, Measurement | undefined>([
    [rows[1], rows[0]],
    [rows[4], rows[3]],
    [rows[5], rows[3]],
    [rows[6], rows[5]],
    [rows[7], rows[5]],
    [rows[8], rows[5]],
  ]);
  printTable(
    ["run", "events", "µs/event", "× stepflow", "× its floor", "heap growth, before GC (MB)", "retained after GC (MB)"],
    rows.map((r) => [
      r.name,
      r.events.toLocaleString("en"),
      perEventMicros(r).toFixed(3),
      (perEventMicros(r) / perEventMicros(base)).toFixed(2),
      floors.has(r) ? (perEventMicros(r) / perEventMicros(floors.get(r) as Measurement)).toFixed(2) : "",
      r.note ?? r.heapGrowthMB.toFixed(1),
      r.note ? "" : r.retainedMB.toFixed(1),
    ]),
  );
  return rows;
}
