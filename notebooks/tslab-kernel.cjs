#!/usr/bin/env node
/**
 * The tslab kernel, started so that notebook cells can use stepflow as its users do: imports
 * from "stepflow" and its subpaths, `@step` classes in cells. `.ci/notebooks.sh` registers it as
 * the Jupyter kernel "tslab-stepflow" (`--install-kernel` for your Jupyter); Jupyter starts it in
 * the notebook's folder, and it takes tslab's own arguments (`kernel --config-path FILE`).
 * tslab itself is installed in notebooks/kernel/ (`npm ci --prefix notebooks/kernel`), apart
 * from the project, whose TypeScript its bundled one would otherwise shadow.
 *
 * tslab (1.0.22, the last release) compiles each cell with its own TypeScript 5.0 and fixed
 * compiler options: legacy `experimentalDecorators`, Node10 module resolution (which ignores a
 * package's `exports`, so `stepflow/sessions` has no types), ES2022 libraries, `rootDir` = the
 * notebook's folder. Four changes:
 *
 * 1. Files on disk that a cell imports are type-checked for the cell (full types in cells)
 *    but not compiled or diagnosed by tslab: Node loads them, through tsx's require hook for
 *    ES modules and TypeScript.
 * 2. Cells resolve packages by their `exports` (`moduleResolution: "bundler"`), and accept
 *    `.ts` extensions in import paths.
 * 3. Decorators in cells are standard (TC39) decorators, as stepflow's `@step` expects, and
 *    cells get the ES2023 library (`findLast`, …), not tslab's ES2022.
 * 4. A variable of an earlier cell can be used as a shorthand property (`{ ctx }`): tslab
 *    rewrites references to earlier cells' variables but misses that form (a ReferenceError).
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const tslabDir = path.dirname(require.resolve("tslab/package.json", { paths: [path.join(__dirname, "kernel")] }));
const tsPath = require.resolve("@tslab/typescript-for-tslab", { paths: [tslabDir] });
const realTs = require(tsPath);
// The TypeScript bundle's exports are read-only getters: tslab gets a copy with two replaced.
const ts = {};
for (const key of Object.keys(realTs)) {
  Object.defineProperty(ts, key, { enumerable: true, configurable: true, get: () => realTs[key] });
}
const replace = (key, fn) => Object.defineProperty(ts, key, { enumerable: true, value: fn });
require.cache[tsPath].exports = ts;
require("tsx/cjs/api").register();

/** Diagnostics that only say tslab's fixed options do not fit this repository. */
const IGNORED = new Set([
  5096, // allowImportingTsExtensions needs noEmit (tslab emits the cell only)
  6059, // a file is not under rootDir (the notebook's folder)
]);

const onDisk = (fileName) => !fileName.endsWith(".d.ts") && fs.existsSync(fileName);

/** `{ ctx }` → `{ ctx: exports.ctx }` when `ctx` was declared by an earlier cell, as tslab does for other references. */
const expandShorthand = (checker) => (context) => (sourceFile) => {
  const f = context.factory;
  const visit = (node) => {
    if (realTs.isShorthandPropertyAssignment(node) && !node.objectAssignmentInitializer) {
      const declarations = checker.getShorthandAssignmentValueSymbol(node)?.declarations ?? [];
      if (declarations.some((d) => path.basename(d.getSourceFile().fileName) === "__prev__.d.ts")) {
        const name = node.name.text;
        return f.createPropertyAssignment(name, f.createPropertyAccessExpression(f.createIdentifier("exports"), name));
      }
    }
    return realTs.visitEachChild(node, visit, context);
  };
  return realTs.visitNode(sourceFile, visit);
};

replace("createWatchCompilerHost", function (rootFiles, options, system, _createProgram, ...rest) {
  const createProgram = (...args) => {
    const builder = realTs.createEmitAndSemanticDiagnosticsBuilderProgram(...args);
    const getAllDependencies = builder.getAllDependencies.bind(builder);
    // tslab emits and diagnoses a cell's dependencies: keep the cell and tslab's in-memory
    // files (not on disk), leave files on disk to tsx.
    builder.getAllDependencies = (sourceFile) => getAllDependencies(sourceFile).filter((f) => !onDisk(f));
    // tslab emits a cell with its own transformers; ours runs first, on the checked source.
    const emit = builder.emit.bind(builder);
    builder.emit = (sourceFile, writeFile, cancel, onlyDts, transformers) =>
      emit(sourceFile, writeFile, cancel, onlyDts, transformers && { ...transformers, before: [expandShorthand(builder.getProgram().getTypeChecker()), ...(transformers.before ?? [])] });
    return builder;
  };
  const patched = {
    ...options,
    moduleResolution: realTs.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    experimentalDecorators: false,
    lib: ["lib.es2023.d.ts"],
  };
  return realTs.createWatchCompilerHost(rootFiles, patched, system, createProgram, ...rest);
});

replace("getPreEmitDiagnosticsOfFiles", (...args) =>
  realTs.getPreEmitDiagnosticsOfFiles(...args).filter((d) => !IGNORED.has(d.code)),
);

require(path.join(tslabDir, "dist", "main.js")).main();
