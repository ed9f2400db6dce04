/**
 * Resources: values a step needs (a database client, an LLM, a cache) made by a factory and
 * handed to the step as its third argument, typed by the factory. Cached once per run (the
 * default) or once per workflow instance, or made afresh for every step execution; a factory
 * may use other resources.
 */
import { ConfigurationError } from "./errors.ts";

/**
 * How long a resource's value is kept: made once per run, once per workflow instance for all
 * its runs, or (`false`) not kept: made for every step execution that needs it (once per
 * execution, however many of its resources use it), as Python's `Resource(…, cache=False)`.
 * @example `resource(openDb, { cache: "workflow" })`
 */
export type ResourceCache = "run" | "workflow" | false;

/** Resources by the names a step receives them under. @example `const resources: ResourceMap = { db: resource(openDb) };` */
export type ResourceMap = { readonly [name: string]: Resource<unknown> };

/** The values of a map of resources, as a step receives them. @example `type Values = ResourceValues<{ db: Resource<Db> }>; // { db: Db }` */
export type ResourceValues<R extends ResourceMap> = { -readonly [K in keyof R]: R[K] extends Resource<infer T> ? T : never };

const RESOURCE = Symbol.for("stepflow.resource");

/** A resource made by {@link resource}. @example `const db: Resource<Db> = resource(() => new Db());` */
export interface Resource<T> {
  readonly [RESOURCE]: true;
  /** For error messages: the option `name`, else the factory's name. */
  readonly name: string;
  readonly cache: ResourceCache;
  readonly resources: ResourceMap;
  readonly factory: (resources: never) => T | Promise<T>;
}

/**
 * Declares a resource for `@step({ resources: { name: resource(factory) } })`. `factory`
 * receives the values of `options.resources`, if any; a step receives the values of its
 * resources as its third argument. A cycle of resources using each other is refused when
 * the workflow's graph is built.
 * @example
 * const db = resource(async () => openDatabase(), { cache: "workflow" });
 * const users = resource(({ db }) => new UserRepo(db), { resources: { db } });
 * // @step({ accepts: [StartEvent], emits: [StopEvent], resources: { users } })
 * // async find(ctx: Context, ev: StartEvent, { users }: { users: UserRepo }) { … }
 */
export function resource<T, const R extends ResourceMap = {}>(
  factory: (resources: ResourceValues<R>) => T | Promise<T>,
  options: { readonly cache?: ResourceCache; readonly resources?: R; readonly name?: string } = {},
): Resource<T> {
  if (typeof factory !== "function")
    throw new ConfigurationError(`resource() needs a factory function, got ${factory === null ? "null" : typeof factory}.`, "factory", factory);
  const cache = options.cache ?? "run";
  if (cache !== "run" && cache !== "workflow" && cache !== false)
    throw new ConfigurationError(
      `resource(${factory.name || "factory"}): cache must be "run", "workflow" or false (a new value for every step execution), got ${JSON.stringify(cache)}.`,
      "cache",
      cache,
    );
  return {
    [RESOURCE]: true,
    name: options.name ?? (factory.name || "(anonymous resource)"),
    cache,
    resources: options.resources ?? {},
    factory: factory as (resources: never) => T | Promise<T>,
  };
}

/** True for what {@link resource} returns. @example `isResource(value) || fail()` */
export function isResource(value: unknown): value is Resource<unknown> {
  return typeof value === "object" && value !== null && (value as Resource<unknown>)[RESOURCE] === true;
}

/**
 * Problems with the resources of a step: values that are not resources, and cycles.
 * @example
 * resourceProblems("fetch", { db }); // []
 */
export function resourceProblems(stepName: string, resources: ResourceMap): string[] {
  const problems: string[] = [];
  const visit = (map: ResourceMap, path: Resource<unknown>[]): void => {
    for (const [key, value] of Object.entries(map)) {
      if (!isResource(value)) {
        problems.push(`Step "${stepName}": resource "${key}" is not made by resource(factory).`);
        continue;
      }
      if (path.includes(value)) {
        const cycle = [...path.slice(path.indexOf(value)), value].map((r) => r.name).join(" → ");
        problems.push(`Step "${stepName}": resources depend on each other in a cycle: ${cycle}. Break the cycle: a resource cannot need itself.`);
        continue;
      }
      visit(value.resources, [...path, value]);
    }
  };
  visit(resources, []);
  return [...new Set(problems)];
}

/**
 * Makes the values of `resources`, each at most once per cache: `runCache` for this run,
 * `workflowCache` for the workflow instance, and `scope` (this one resolution, for one step
 * execution) for those not cached. A factory that fails is not cached (the next attempt tries again).
 */
export async function resolveResources(
  resources: ResourceMap,
  runCache: Map<Resource<unknown>, Promise<unknown>>,
  workflowCache: Map<Resource<unknown>, Promise<unknown>>,
  scope: Map<Resource<unknown>, Promise<unknown>> = new Map(),
): Promise<Record<string, unknown>> {
  const make = (r: Resource<unknown>): Promise<unknown> => {
    const cache = r.cache === "workflow" ? workflowCache : r.cache === false ? scope : runCache;
    let value = cache.get(r);
    if (!value) {
      value = resolveResources(r.resources, runCache, workflowCache, scope).then((deps) => r.factory(deps as never));
      cache.set(r, value);
      value.catch(() => cache.delete(r));
    }
    return value;
  };
  const entries = Object.entries(resources);
  const values = await Promise.all(entries.map(([, r]) => make(r)));
  return Object.fromEntries(entries.map(([key], i) => [key, values[i]]));
}
