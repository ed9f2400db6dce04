// Lint rules for `npm run lint` (docs/architecture.md). The recommended sets of ESLint and
// typescript-eslint, plus the rules below; a rule turned off says why. To silence one finding,
// put `// eslint-disable-next-line RULE -- why` on the line before it.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  // Generated or installed, not written here: the build, notebooks, saved fixtures, bench's and the LlamaIndex test's own packages,
  // and upstream's test suites, kept as upstream wrote them (test/compat/upstream/README.md).
  { ignores: ["dist/", ".build/", "notebooks/", "test/fixtures/", "**/node_modules/", ".stepflow/", "test/compat/upstream/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { console: "readonly", process: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setImmediate: "readonly", URL: "readonly" },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      // `typeof import("pg")` names an optional driver's types without importing it.
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports", disallowTypeAnnotations: false }],
      // A parameter a step or callback must take but does not use is named with a leading _.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      // `{}` is how TypeScript spells "an event with no fields" (`Event<{}>`, `{} extends T`).
      "@typescript-eslint/no-empty-object-type": ["error", { allowObjectTypes: "always" }],
    },
  },
  {
    // No module-level mutable state in the engine core (docs/architecture.md, "Where per-run
    // state lives"): what a run, a workflow or a context needs lives on that object, so that two
    // workflows (or two tests) in one process never share it by accident. A process-wide default
    // is an object of its own (`sharedTimeSlices`, `sharedRunObservers`, `sharedCodecRegistry`)
    // that workflows are given, never a variable the engine reads. WeakMaps keyed by an object
    // are that object's state, and frozen arrays are constants: both are allowed.
    files: ["src/core/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: ":matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration[kind=/^(let|var)$/]",
          message: "No module-level let/var in src/core: keep the state on the run, workflow or context that owns it.",
        },
        {
          selector:
            ":matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator > :matches(NewExpression[callee.name=/^(Map|Set|Array)$/], ArrayExpression)",
          message:
            "No module-level Map, Set or array in src/core: keep the state on the run, workflow or context that owns it (Object.freeze a constant list).",
        },
        {
          selector:
            ":matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator > :matches(TSAsExpression, TSSatisfiesExpression) > :matches(NewExpression[callee.name=/^(Map|Set|Array)$/], ArrayExpression)",
          message:
            "No module-level Map, Set or array in src/core: keep the state on the run, workflow or context that owns it (Object.freeze a constant list).",
        },
        {
          selector: "PropertyDefinition[static=true][readonly!=true]",
          message: "No mutable static field in src/core: it is module state by another name. Make it readonly, or keep it on an instance.",
        },
      ],
    },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", module: "writable" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
