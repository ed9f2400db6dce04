/**
 * Counting a Node process's instructions with valgrind's callgrind, for the benchmarks that
 * compare checkouts by work done rather than by time (engine-instructions.ts,
 * session-instructions.ts): a count does not move with the machine's load.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * Throws a clear error when valgrind is not installed.
 * @example requireValgrind();
 */
export function requireValgrind(): void {
  try {
    execFileSync("valgrind", ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error("valgrind was not found: install it (apt-get install valgrind) to count instructions.");
  }
}

/**
 * Total instructions (`Ir`, all threads) callgrind counts for `node ARGS`. Rejects as the child
 * does (its exit code in the error's `code`).
 * @example const total = await callgrindInstructions(["--import", "tsx", "child.ts"]);
 */
export async function callgrindInstructions(nodeArgs: readonly string[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "callgrind-"));
  const out = join(dir, "callgrind.out");
  try {
    await promisify(execFile)("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, process.execPath, ...nodeArgs], { maxBuffer: 2 ** 26 });
    const totals = /^(?:totals|summary): (\d+)/m.exec(readFileSync(out, "utf8"));
    if (!totals) throw new Error(`no totals in ${out}`);
    return Number(totals[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
