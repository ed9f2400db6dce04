#!/usr/bin/env node
// The `stepflow` command: runs the TypeScript CLI through tsx (no build step).
import { register } from "tsx/esm/api";

register();
const { runAndExit } = await import("../src/cli/main.ts");
await runAndExit(process.argv.slice(2));
