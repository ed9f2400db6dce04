/**
 * CPU per saved run of the server's store (`HandlerStore`) of this checkout against another, in
 * one process, no HTTP and no engine: `node --import tsx --expose-gc bench/server-store-ab.ts
 * OTHER_CHECKOUT [ROUNDS] [RUNS]`. Each run is saved as the server saves a run that ends at once
 * (its record, context and events in one save), 32 at a time, then leaves memory; a trivial
 * run's five events and a run of 100, on the memory store and on SQLite, each side with its own
 * modules, the sides taking turns (which goes first moves on each round). Prints the median and
 * the lowest CPU µs per run (every thread: the SQLite worker included).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { StreamedEvent } from "../src/client/types.ts";
import { collectGarbage, printTable } from "./measure.ts";

const [otherRoot, roundsArg, runsArg] = process.argv.slice(2);
if (!otherRoot) throw new Error("Usage: bench/server-store-ab.ts OTHER_CHECKOUT [ROUNDS] [RUNS]");
const ROUNDS = Number(roundsArg ?? 15);
const RUNS = Number(runsArg ?? 1500);
const here = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "stepflow-server-store-ab-"));

const runId = "0b7a0d43-5b8e-4e64-9a4a-1f1f0c0e4f11";
const at = "2026-11-27T17:54:07.123Z";
/** The events a one-step run writes (with lifecycle events, as the server runs it). */
const trivial: StreamedEvent[] = [
  { seq: 1, type: "RunStartedEvent", data: { runId, resumed: false }, at },
  { seq: 2, type: "StepStateChangedEvent", data: { step: "answer", state: "started", runId }, at },
  { seq: 3, type: "StepStateChangedEvent", data: { step: "answer", state: "finished", runId }, at },
  { seq: 4, type: "StopEvent", data: { result: 2 }, at },
  { seq: 5, type: "RunEndedEvent", data: { runId, status: "succeeded" }, at },
];
const hundred: StreamedEvent[] = Array.from({ length: 100 }, (_, i) => ({ seq: i + 1, type: "Tick", data: { i }, at }));
const state = { workflow: "echo", runId, status: "succeeded", input: { n: 1 }, result: 2, createdAt: at, updatedAt: at, waitingFor: [], fromInput: true };
const context = { version: 2, state: {}, globals: {}, stepCounts: { answer: 1 } };

interface Side {
  readonly name: string;
  readonly one: () => Promise<void>;
  readonly close: () => Promise<void>;
}

async function sidesOf(root: string, label: string): Promise<Side[]> {
  const load = async <T>(path: string) => (await import(pathToFileURL(join(root, path)).href)) as T;
  const { HandlerStore } = await load<typeof import("../src/server/handler-store.ts")>("src/server/handler-store.ts");
  const { ServedHandler } = await load<typeof import("../src/server/served-handler.ts")>("src/server/served-handler.ts");
  const { SqliteSessionStore } = await load<typeof import("../src/sessions/sqlite-store.ts")>("src/sessions/sqlite-store.ts");
  const { MemorySessionStore } = await load<typeof import("../src/sessions/memory-store.ts")>("src/sessions/memory-store.ts");
  const sides: Side[] = [];
  for (const [events, what] of [
    [trivial, "5 events"],
    [hundred, "100 events"],
  ] as const) {
    for (const [storeName, sessions] of [
      ["memory", new MemorySessionStore()],
      ["SQLite", await SqliteSessionStore.open(join(dir, `${label}-${events.length}.db`))],
    ] as const) {
      const store = new HandlerStore(
        sessions,
        {
          onError: (error) => {
            throw error;
          },
          onTaken: () => {},
        },
        "bench",
      );
      let k = 0;
      sides.push({
        name: `${label}, ${storeName}, ${what}`,
        one: async () => {
          const id = `${label}-${k++}`;
          // Fresh events, as a run records them: their JSON is made by the save.
          const served = new ServedHandler(
            { ...state, id } as never,
            events.map((e) => ({ ...e, data: { ...e.data } })),
            events.length,
          );
          await store.save(served, context as never, false, true);
          store.ended(id, served.loadedEvents);
          served.unloadEvents();
          store.forget(id);
        },
        close: () => sessions.close(),
      });
    }
  }
  return sides;
}

async function cpuPerRun(side: Side, count: number): Promise<number> {
  collectGarbage();
  const before = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next++ < count) await side.one();
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

try {
  const sides = [...(await sidesOf(resolve(otherRoot), "other")), ...(await sidesOf(here, "this checkout"))];
  for (const side of sides) await cpuPerRun(side, 300);
  const results = sides.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < sides.length; k++) {
      const s = (round + k) % sides.length;
      const side = sides[s] as Side;
      results[s]?.push(await cpuPerRun(side, side.name.includes("100") ? Math.ceil(RUNS / 5) : RUNS));
    }
  }
  const sorted = results.map((r) => [...r].sort((a, b) => a - b));
  printTable(
    ["side", "CPU µs per run, median", "lowest"],
    sides.map((side, s) => [side.name, (sorted[s]?.[Math.floor(ROUNDS / 2)] ?? NaN).toFixed(0), (sorted[s]?.[0] ?? NaN).toFixed(0)]),
  );
  for (const side of sides) await side.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
