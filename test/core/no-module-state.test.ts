/**
 * The engine core keeps no module-level mutable state (docs/architecture.md, "Where per-run
 * state lives"): `npm run lint` fails on it. This test runs the repository's ESLint config on a
 * file placed in src/core that declares each kind of module state, and on the same
 * declarations outside src/core and inside functions, where they are fine. (`npm run lint` runs
 * the rule on the core itself.)
 */
import { join } from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const eslint = new ESLint({ cwd: root });

const STATEFUL = `
let count = 0;
export let current: string | undefined;
var legacy = 1;
const observers: string[] = [];
export const registry = new Map<string, number>();
const seen = new Set<object>();
const queue = new Array<number>();
const typed = [] as number[];
export class Scheduler { static pending = 0; }
export function touch(): number { return count + legacy + observers.length + registry.size + seen.size + queue.length + typed.length + (current?.length ?? 0); }
`;

const STATELESS = `
const LIMIT = 4;
const BUILT_IN: readonly string[] = Object.freeze(["Date"]);
const perObject = new WeakMap<object, number>();
export const shared = new (class Slices { pending = 0; })();
export class Workflow { static readonly fromOutside = {}; }
export function work(): number {
  let total = LIMIT;
  const list: number[] = [];
  const map = new Map<string, number>();
  list.push(total++);
  map.set("a", 1);
  return total + list.length + map.size + BUILT_IN.length + (perObject.get(list) ?? 0) + shared.pending;
}
`;

async function findings(code: string, file: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === "no-restricted-syntax").map((m) => `${m.line}: ${m.message.split(":")[0]}`);
}

describe("no module-level mutable state in src/core", { timeout: 60_000 }, () => {
  it("reports every module-level let, var, Map, Set, array and mutable static field in src/core", async () => {
    expect(await findings(STATEFUL, "src/core/module-state-probe.ts")).toEqual([
      "2: No module-level let/var in src/core",
      "3: No module-level let/var in src/core",
      "4: No module-level let/var in src/core",
      "5: No module-level Map, Set or array in src/core",
      "6: No module-level Map, Set or array in src/core",
      "7: No module-level Map, Set or array in src/core",
      "8: No module-level Map, Set or array in src/core",
      "9: No module-level Map, Set or array in src/core",
      "10: No mutable static field in src/core",
    ]);
  });

  it("allows constants, frozen lists, WeakMaps, objects and state inside functions", async () => {
    expect(await findings(STATELESS, "src/core/module-state-probe.ts")).toEqual([]);
  });

  it("leaves the layers above the core alone", async () => {
    expect(await findings(STATEFUL, "src/tools/module-state-probe.ts")).toEqual([]);
  });
});
