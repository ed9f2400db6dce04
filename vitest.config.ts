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

export default defineConfig({
  plugins: [decorators()],
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
