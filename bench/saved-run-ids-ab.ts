/**
 * What the rest of a run costs once it has been saved, this checkout against another:
 * `node --import tsx bench/saved-run-ids-ab.ts OTHER_CHECKOUT [PROCESSES] [EVENTS] [RUNS]`.
 * A ping-pong between two steps of EVENTS events (default 20,000) is saved with `ctx.toJSON()`
 * right after it starts, then either goes on ("saved, going on") or is cancelled and restored
 * from the save ("restored"): every execution after the save gets an id made from the saved one
 * (a hash), as every restorer of the save makes it. Each side runs in processes of its own
 * (PROCESSES per side and way, default 3, the sides taking turns), each RUNS runs (default 6);
 * printed: each process's median µs of CPU per event over its runs after the first three.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const args = process.argv.slice(2);

/** One process: the median µs of CPU per event of its warm runs. */
async function measure(root: string, events: number, runs: number, restored: boolean): Promise<number> {
  const stepflow = (await import(pathToFileURL(resolve(root, "src/index.ts")).href)) as typeof import("../src/index.ts");
  const { Context, Event, StartEvent, StopEvent, Workflow, step } = stepflow;
  class Ping extends Event<{ n: number }> {}
  class Pong extends Event<{ n: number }> {}
  class PingPong extends Workflow<Record<string, never>, number> {
    @step({ accepts: [StartEvent, Pong], emits: [Ping, StopEvent] })
    async ping(_ctx: unknown, ev: InstanceType<typeof StartEvent> | Pong) {
      const n = ev instanceof Pong ? ev.n : 0;
      return n >= events ? new StopEvent({ result: n }) : new Ping({ n: n + 1 });
    }

    @step({ accepts: [Ping], emits: [Pong] })
    async pong(_ctx: unknown, ev: Ping) {
      return new Pong({ n: ev.n + 1 });
    }
  }
  const flow = new PingPong({ timeout: null });
  const perEvent: number[] = [];
  for (let r = 0; r < runs; r++) {
    let handler = flow.run({});
    await Promise.resolve();
    await Promise.resolve();
    const saved = JSON.stringify(handler.ctx.toJSON());
    if (restored) {
      handler.cancel();
      await handler.catch(() => undefined);
      handler = flow.run(undefined, { ctx: Context.fromJSON(flow, saved) });
    }
    const start = process.cpuUsage();
    await handler;
    const used = process.cpuUsage(start);
    perEvent.push((used.user + used.system) / events);
  }
  const warm = perEvent.slice(3).sort((a, b) => a - b);
  return warm[Math.floor(warm.length / 2)] ?? Number.NaN;
}

if (args[4] === "child") {
  const [root, events, runs, way] = args;
  process.stdout.write(String(await measure(root as string, Number(events), Number(runs), way === "restored")));
} else {
  const [other, processesArg, eventsArg, runsArg] = args;
  if (!other) throw new Error("usage: node --import tsx bench/saved-run-ids-ab.ts OTHER_CHECKOUT [PROCESSES] [EVENTS] [RUNS]");
  const here = resolve(fileURLToPath(import.meta.url), "../..");
  const [processes, events, runs] = [Number(processesArg ?? 3), Number(eventsArg ?? 20_000), Number(runsArg ?? 6)];
  for (const way of ["going-on", "restored"]) {
    const readings: Record<string, string[]> = { other: [], this: [] };
    for (let p = 0; p < processes; p++) {
      for (const [side, root] of [
        ["other", resolve(other)],
        ["this", here],
      ] as const) {
        const out = execFileSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), root, String(events), String(runs), way, "child"], {
          cwd: here,
          encoding: "utf8",
        });
        readings[side]?.push(Number(out).toFixed(2));
      }
    }
    console.log(
      `${way === "restored" ? "restored" : "saved, going on"}: µs of CPU per event, other ${readings.other?.join(" ")}; this ${readings.this?.join(" ")}`,
    );
  }
}
