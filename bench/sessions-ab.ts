/**
 * CPU per `Sessions` turn of this checkout against another, in one process:
 * `node --import tsx --expose-gc bench/sessions-ab.ts OTHER_CHECKOUT [ROUNDS]`. Each round runs,
 * for each side in turn (rotating which goes first), a batch of 100 new sessions at once (one
 * agent turn each: 3 LLM calls answering at once, 2 tool calls), on the in-memory store, on
 * SQLite, and on SQLite without the store's journal (what its claims cost), then 20 turns on a
 * session of 1,000 stored turns (in-memory store). Prints the median
 * CPU milliseconds per turn (every thread of the process) of each side, and their ratio.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { printTable } from "./measure.ts";
import { agentTurn, withoutJournal, checkoutModules } from "./session-workload.ts";

const [otherRoot, roundsArg] = process.argv.slice(2);
if (!otherRoot) throw new Error("Usage: bench/sessions-ab.ts OTHER_CHECKOUT [ROUNDS]");
const rounds = Number(roundsArg ?? 15);
const here = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "stepflow-sessions-ab-"));

interface Turns {
  readonly name: string;
  /** Runs some turns; returns how many. */
  readonly run: (tag: string) => Promise<number>;
  readonly close: () => Promise<void>;
}

/** The three workloads of the checkout at `root`, each with that checkout's own modules. */
async function sideOf(root: string, side: string): Promise<Turns[]> {
  const { openSessionStore, Sessions, FunctionCallingAgent, ScriptedLLM, add, multiply } = await checkoutModules(root);
  const agent = () => new FunctionCallingAgent({ llm: new ScriptedLLM(agentTurn, { record: false }), tools: [add, multiply], timeout: null });
  const question = { input: "What is (2123 + 2321) * 312?" };
  const newSessions = async (name: string, url: string, withJournal = true): Promise<Turns> => {
    const store = await openSessionStore(url);
    // Without the store's journal: what the journal's claims of each ctx.once cost.
    const target = withJournal ? store : withoutJournal(store);
    const sessions = new Sessions(agent(), target);
    return {
      name,
      run: async (tag) => {
        await Promise.all(Array.from({ length: 100 }, (_, i) => sessions.run(`${side}-${tag}-${i}`, question)));
        return 100;
      },
      close: () => store.close(),
    };
  };
  const longStore = await openSessionStore("memory:");
  const long = new Sessions(agent(), longStore);
  await long.run("long", question);
  const first = await longStore.load("long", { newest: 0 });
  const rows = Array.from({ length: 999 * 6 }, (_, i) => JSON.stringify({ role: i % 2 ? "assistant" : "user", content: `Message ${i} of a long session.` }));
  await longStore.save("long", { expectedVersion: first.version, snapshot: first.snapshot, append: rows });
  return [
    await newSessions("100 new sessions at once, in-memory store", "memory:"),
    await newSessions("100 new sessions at once, SQLite", `sqlite:${join(dir, `${side}.db`)}`),
    await newSessions("100 new sessions at once, SQLite, the store's journal left off", `sqlite:${join(dir, `${side}-no-journal.db`)}`, false),
    {
      name: "a turn on a 1,000-turn session, in-memory store",
      run: async (tag) => {
        for (let i = 0; i < 20; i++) await long.run("long", { input: `Turn ${tag} ${i}` });
        return 20;
      },
      close: () => longStore.close(),
    },
  ];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

try {
  const sides = [await sideOf(otherRoot, "other"), await sideOf(here, "this")];
  const names = [`other (${otherRoot})`, `this (${here})`];
  const cpu: number[][][] = sides.map((workloads) => workloads.map(() => []));
  for (let round = -3; round < rounds; round++) {
    for (let k = 0; k < sides.length; k++) {
      const s = (round + 3 + k) % sides.length;
      for (const [w, workload] of (sides[s] as Turns[]).entries()) {
        (globalThis as { gc?: () => void }).gc?.();
        const before = process.cpuUsage();
        const turns = await workload.run(`r${round}`);
        const used = process.cpuUsage(before);
        if (round >= 0) cpu[s]?.[w]?.push((used.user + used.system) / 1000 / turns); // the first 3 rounds warm up
      }
    }
  }
  printTable(
    ["workload", ...names.map((n) => `${n}: CPU ms per turn`), "this / other"],
    (sides[0] as Turns[]).map((workload, w) => {
      const [a, b] = cpu.map((side) => median(side[w] as number[])) as [number, number];
      return [workload.name, a.toFixed(3), b.toFixed(3), (b / a).toFixed(2)];
    }),
  );
  for (const side of sides) for (const workload of side) await workload.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
