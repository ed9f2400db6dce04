#!/usr/bin/env node
// The `stepflow` command: runs the compiled CLI in dist/ (`npm run build` writes it; in a
// checkout, `npm start` runs the sources instead).
let cli;
try {
  cli = await import("../dist/src/cli/main.js");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/src/cli/main.js")) throw error;
  console.error(
    "stepflow: the compiled command is missing (dist/src/cli/main.js). In a checkout of stepflow, run `npm run build` first, or `npm start -- …` to run the sources.",
  );
  process.exit(1);
}
await cli.runAndExit(process.argv.slice(2), "stepflow");
