#!/usr/bin/env node
// The `stepflow` command: runs the TypeScript CLI through tsx (no build step).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
