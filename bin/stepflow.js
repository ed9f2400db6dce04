#!/usr/bin/env node
// The `stepflow` command: runs the compiled CLI in dist/ (`npm run build` writes it; in a
// checkout, `npm start` runs the sources instead). dist/cli/ is the CLI bundled with its
// packages, which starts several times faster than the hundreds of files it is made of. It
// hands `draw`, `run`, `dev` and `serve` to dist/src/cli/main.js, built with the package's
// exports: those may load your workflow modules, and with them `stepflow`, whose classes must
// be the ones the subcommand uses.
let cli;
try {
  cli = await import("../dist/cli/main.js");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/cli/main.js")) throw error;
  console.error(
    "stepflow: the compiled command is missing (dist/cli/main.js). In a checkout of stepflow, run `npm run build` first, or `npm start -- …` to run the sources.",
  );
  process.exit(1);
}
await cli.runAndExit(process.argv.slice(2), "stepflow", async (argv, env, command) => (await import("../dist/src/cli/main.js")).main(argv, env, command));
