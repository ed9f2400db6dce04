import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { builtPackageDist } from "../../src/core/built-package.ts";

const root = mkdtempSync(join(tmpdir(), "stepflow-built-package-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function project(name: string, packageName: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "dist", "src", "chunks"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: packageName }));
  return dir;
}

describe("builtPackageDist", () => {
  it("finds the installed package's dist/ from its entries and its chunks", () => {
    const stepflow = project("node_modules-stepflow", "stepflow");
    expect(builtPackageDist(join(stepflow, "dist", "src", "chunks", "chunk-AB12CD34.js"))).toBe(join(stepflow, "dist"));
    expect(builtPackageDist(join(stepflow, "dist", "src", "server", "index.js"))).toBe(join(stepflow, "dist"));
  });

  it("is undefined for an application's own bundle, the sources, and a file of another depth", () => {
    const app = project("app", "my-app");
    expect(builtPackageDist(join(app, "dist", "src", "chunks", "server.js"))).toBeUndefined();
    const stepflow = project("clone", "stepflow");
    expect(builtPackageDist(join(stepflow, "src", "server", "served-handler.ts"))).toBeUndefined();
    expect(builtPackageDist(join(stepflow, "dist", "cli", "main.js"))).toBeUndefined();
    expect(builtPackageDist(join(root, "nowhere", "dist", "src", "x", "y.js"))).toBeUndefined();
  });
});
