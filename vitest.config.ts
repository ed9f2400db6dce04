import { transform } from "esbuild";
import { defineConfig, type Plugin } from "vitest/config";

/**
 * Vite's own transform lowers only legacy decorators. stepflow's `@step` is a standard
 * (TC39) decorator, so files that use decorators are lowered by esbuild first. Files named
 * `*.legacy.test.ts` are compiled with `experimentalDecorators`, to prove `@step` works under
 * both conventions.
 */
function decorators(): Plugin {
  return {
    name: "stepflow:decorators",
    enforce: "pre",
    async transform(code, id) {
      if (!/\.ts$/.test(id) || id.includes("/node_modules/") || !/^\s*@\w/m.test(code)) return null;
      const legacy = id.endsWith(".legacy.test.ts");
      const result = await transform(code, {
        loader: "ts",
        target: "es2022",
        sourcemap: true,
        sourcefile: id,
        tsconfigRaw: { compilerOptions: { experimentalDecorators: legacy, useDefineForClassFields: true } },
      });
      return { code: result.code, map: result.map };
    },
  };
}

/**
 * Suites that start processes (the CLI, servers, notebooks' programs), a browser, PostgreSQL or
 * DBOS: minutes of a loaded machine's time. `npm test` leaves them out; `npm run test:slow` runs
 * them, and CI runs both.
 */
export const SLOW_SUITES = [
  "test/cli/cli*.test.ts",
  "test/cli/dbos-*.test.ts",
  "test/cli/serve.test.ts",
  "test/cli/dev.test.ts",
  "test/dbos/**/*.test.ts",
  "test/web/**/*.test.ts",
  "test/bundles/**/*.test.ts",
  "test/server/restart.test.ts",
  "test/workflows/exactly-once.test.ts",
  "test/sessions/sessions.test.ts",
  "test/sessions/session-drivers.test.ts",
  "test/docs-code-blocks.test.ts",
  "test/docs-providers.test.ts",
  "test/examples.test.ts",
  "test/layers.test.ts",
];

// `npm test` is `vitest run --project fast`; `npm run test:slow` is `vitest run --project slow`; `npm run test:all` runs both.
export default defineConfig({
  plugins: [decorators()],
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "fast",
          include: ["test/**/*.test.ts"],
          exclude: ["**/node_modules/**", ...SLOW_SUITES],
          // The stores' shared contract runs on SQLite and in memory, and on PostgreSQL too when DATABASE_URL is set (CI sets it).
          // Limits catch a hang, not a slow machine: a loaded machine must not fail a test.
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: "slow",
          include: SLOW_SUITES,
          // Builds the web page once for every suite that serves it, instead of in a test's own time limit.
          globalSetup: ["test/support/build-web-page-once.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
