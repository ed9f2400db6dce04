/** Runs one benchmark in this process: `node --import tsx --expose-gc bench/one.ts agent`. */
import { BENCHMARKS, isBenchmarkName } from "./benchmarks.ts";

const name = process.argv[2] ?? "";
if (!isBenchmarkName(name)) throw new Error(`Unknown benchmark "${name}". Choose from: ${Object.keys(BENCHMARKS).join(", ")}.`);
await BENCHMARKS[name].run();
