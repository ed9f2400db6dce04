// The command as `npm install stepflow` users run it (bin/stepflow.js: the bundled CLI in
// dist/cli/, which hands the subcommands that load users' modules to dist/src/), but with the
// hints in its messages naming `npm start --`, as the sources' CLI does, so that one set of
// assertions holds for both. test/support/cli-process.ts starts it when STEPFLOW_TEST_CLI=build
// (`npm run test:slow` sets it, after building).
const cli = await import("../../dist/cli/main.js");
await cli.runAndExit(process.argv.slice(2), "npm start --", async (argv, env, command) =>
  (await import("../../dist/src/cli/main.js")).main(argv, env, command),
);
