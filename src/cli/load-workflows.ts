/**
 * Loads a user's module of workflows for `stepflow dev|serve|run|draw <module>`: TypeScript
 * through tsx (its loader registered once, so `@step` decorators and `import type` work as in
 * `tsx file.ts`), JavaScript as it is. Every export that is a workflow, or `{ workflow,
 * inputSchema?, description? }`, is served under the export's name.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, extname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { StepflowError, Workflow } from "../core/internal.ts";
import type { ServedWorkflow } from "../server/served-workflow.ts";
import { UsageError } from "./errors.ts";

/**
 * The module could not be loaded, or exports no workflow: exit code 1, the message says which
 * file and what to change.
 * @example if (error instanceof WorkflowModuleError) console.error(error.message);
 */
export class WorkflowModuleError extends StepflowError {
  override name = "WorkflowModuleError";
}

/** What a module gave: its workflows by export name, and the file loaded. */
export interface LoadedWorkflows {
  readonly file: string;
  readonly workflows: Readonly<Record<string, ServedWorkflow>>;
}

const TYPESCRIPT = new Set([".ts", ".mts", ".cts", ".tsx"]);
const LOADABLE = new Set([...TYPESCRIPT, ".js", ".mjs", ".cjs"]);
let tsxRegistered = false;

/**
 * Imports `path` (relative to `cwd`) and collects the workflows it exports.
 * @example
 * const { workflows } = await loadWorkflows("./flows.ts");
 * console.log(Object.keys(workflows)); // ["orders", "support"]
 */
export async function loadWorkflows(path: string, cwd = process.cwd()): Promise<LoadedWorkflows> {
  const file = resolve(cwd, path);
  if (!existsSync(file) || !statSync(file).isFile())
    throw new UsageError(`There is no file ${path} (looked for ${file}). Give the path of a .ts or .js module that exports your workflows.`);
  if (!LOADABLE.has(extname(file)))
    throw new UsageError(`${path} is not a module stepflow can load: give a .ts, .mts, .js or .mjs file that exports your workflows.`);
  // tsx compiles a .ts file of a CommonJS package (npm init's default) to CommonJS, where the
  // ES module stepflow would be a second copy whose workflows this CLI does not recognise.
  if ([".ts", ".tsx"].includes(extname(file)) && packageType(dirname(file)) !== "module")
    throw new WorkflowModuleError(
      `${path} is loaded as CommonJS: no package.json above it says "type": "module". Add "type": "module" to your package.json (stepflow is an ES module package), or name the file ${basename(file).replace(/\.tsx?$/, ".mts")}.`,
    );
  if (TYPESCRIPT.has(extname(file)) && !tsxRegistered) {
    // tsx is an optional peer: a project of JavaScript modules, or one that never loads its own, needs none.
    const tsx = await import("tsx/esm/api").catch((error: unknown) => {
      throw new WorkflowModuleError(
        `${path} is TypeScript, which stepflow loads with tsx, and tsx is not installed: add it to your project (npm install --save-dev tsx), or give a .js or .mjs module.`,
        { cause: error },
      );
    });
    tsx.register();
    tsxRegistered = true;
  }
  let exports: Record<string, unknown>;
  try {
    exports = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new WorkflowModuleError(`Could not load ${path}: ${reason}`, { cause: error });
  }
  const workflows: Record<string, ServedWorkflow> = {};
  const entries = Object.entries(exports).flatMap(([name, value]): [string, unknown][] =>
    // `export default { orders, support }` names its workflows itself.
    name === "default" && isRecord(value) && !servedWorkflow(value) ? Object.entries(value) : [[name, value]],
  );
  for (const [name, value] of entries) {
    const served = servedWorkflow(value);
    if (served) workflows[name === "default" ? defaultName(file) : name] = served;
  }
  if (Object.keys(workflows).length === 0) {
    const names = Object.keys(exports);
    throw new WorkflowModuleError(
      `${path} exports no workflow${names.length > 0 ? ` (its exports: ${names.join(", ")})` : ""}. Export an instance, like \`export const orders = new OrderFlow();\`, or \`export const orders = { workflow: new OrderFlow(), inputSchema: z.object({ … }) };\` for a form in the web page.`,
    );
  }
  return { file: relative(cwd, file) || file, workflows };
}

/**
 * The workflow named `name` of `loaded`, or the only one when `name` is not given.
 * @example const { workflow } = pickWorkflow(await loadWorkflows("flows.ts"), "orders");
 */
export function pickWorkflow(loaded: LoadedWorkflows, name: string | undefined): ServedWorkflow & { readonly name: string } {
  const names = Object.keys(loaded.workflows);
  const chosen = name ?? (names.length === 1 ? names[0] : undefined);
  const served = chosen === undefined ? undefined : loaded.workflows[chosen];
  if (chosen === undefined || !served) {
    const which = name === undefined ? `${loaded.file} exports ${names.length} workflows: name one` : `${loaded.file} has no workflow "${name}"`;
    throw new UsageError(`${which} (${names.join(", ")}).`);
  }
  return { ...served, name: chosen };
}

function servedWorkflow(value: unknown): ServedWorkflow | undefined {
  if (value instanceof Workflow) return { workflow: value };
  if (isRecord(value) && value.workflow instanceof Workflow) return value as unknown as ServedWorkflow;
  return undefined;
}

/** The `type` of the nearest package.json above `dir` ("commonjs" when there is none, as Node has it). */
function packageType(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    const manifest = join(at, "package.json");
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, "utf8")) as { type?: string }).type ?? "commonjs";
      } catch {
        return "commonjs";
      }
    }
    if (dirname(at) === at) return "commonjs";
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `export default new OrderFlow()` in orders.ts is served as "orders". */
function defaultName(file: string): string {
  const base = file.replace(/^.*[\\/]/, "").replace(/\.[^.]+$/, "");
  return base.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "") || "workflow";
}
