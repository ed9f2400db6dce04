/**
 * A resource read from a JSON configuration file and checked by a schema: Python Workflows'
 * `ResourceConfig(config_file, path_selector)`. The file must exist and be JSON when the
 * resource is declared; it is read, and the part the selector names checked, when a step first
 * needs it (once per workflow instance).
 */
import { extname, resolve } from "node:path";
import { ConfigurationError } from "./errors.ts";
import { nodeFs } from "./node-builtins.ts";
import { resource } from "./resource.ts";
import type { Resource } from "./resource.ts";

/** What `resourceConfig` needs of a schema: zod's `safeParse` (zod 3 or 4). @example `const schema: ConfigSchema<{ url: string }> = z.object({ url: z.string() });` */
export interface ConfigSchema<T> {
  safeParse(input: unknown): { success: true; data: T } | { success: false; error: unknown };
}

/** Options of {@link resourceConfig}. @example `{ configFile: "config.json", pathSelector: "services.db" }` */
export interface ResourceConfigOptions {
  /** The JSON file, relative to the working directory or absolute. */
  readonly configFile: string;
  /** Dot-separated keys to the object to check, e.g. `"services.db"`; default: the whole file. */
  readonly pathSelector?: string;
}

/**
 * A resource whose value is `schema`'s parse of a JSON file (or of the object at `pathSelector`
 * in it). Refused at once when the file does not exist or is not `.json`; a selector that does
 * not lead to an object, or a value the schema refuses, fails the step that needs it with a
 * `ConfigurationError` naming the file, the path and what was wrong.
 * @example
 * const dbConfig = resourceConfig(z.object({ url: z.string(), pool: z.number() }), { configFile: "config.json", pathSelector: "db" });
 * // @step({ accepts: [StartEvent], emits: [StopEvent], resources: { dbConfig } })
 * // async go(ctx: Context, ev: StartEvent, { dbConfig }: { dbConfig: { url: string; pool: number } }) { … }
 */
export function resourceConfig<T>(schema: ConfigSchema<T>, options: ResourceConfigOptions): Resource<T> {
  if (typeof schema?.safeParse !== "function")
    throw new ConfigurationError("resourceConfig(schema, options) needs a zod schema first, e.g. z.object({ url: z.string() }).", "schema", schema);
  const file = resolve(options.configFile);
  if (!nodeFs().existsSync(file) || !nodeFs().statSync(file).isFile())
    throw new ConfigurationError(`resourceConfig: no such file: ${options.configFile} (looked for ${file}).`, "configFile", options.configFile);
  if (extname(file) !== ".json")
    throw new ConfigurationError(`resourceConfig: only JSON files can be read as configuration; got ${options.configFile}.`, "configFile", options.configFile);
  const selector = options.pathSelector;
  const name = selector === undefined ? file : `${file}.${selector}`;
  return resource(() => parse(schema, file, selector), { cache: "workflow", name });
}

function parse<T>(schema: ConfigSchema<T>, file: string, selector: string | undefined): T {
  let value: unknown;
  try {
    value = JSON.parse(nodeFs().readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigurationError(`resourceConfig: ${file} is not valid JSON: ${(error as Error).message}`, "configFile", file, { cause: error });
  }
  const path: string[] = [];
  for (const key of selector === undefined ? [] : selector.split(".")) {
    path.push(key);
    value = (value as Record<string, unknown>)[key];
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new ConfigurationError(
        `resourceConfig: expected an object for the configuration from ${file} at path ${path.join(".")}, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}.`,
        "pathSelector",
        selector,
      );
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = issuesText(parsed.error);
  throw new ConfigurationError(
    `resourceConfig: the configuration from ${file}${selector === undefined ? "" : ` at path ${selector}`} does not match its schema:\n${issues}`,
    "configFile",
    file,
  );
}

/**
 * zod's issues one per line, `✖ message → at path` as `z.prettifyError` writes them, read off
 * the error rather than through zod itself so that `import("stepflow")` does not load zod.
 */
function issuesText(error: unknown): string {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues)) return String(error);
  return issues
    .map((issue: { message?: unknown; path?: unknown }) => {
      const path = Array.isArray(issue.path) && issue.path.length > 0 ? `\n  → at ${issue.path.map(String).join(".")}` : "";
      return `✖ ${String(issue.message)}${path}`;
    })
    .join("\n");
}
