/**
 * The shape check of a saved context (current format), hand-written rather than a zod schema:
 * zod is 95 modules, a quarter of what `import("stepflow")` would load for a check most
 * programs never make, and loading it on first use would need a runtime `require("zod")`, which
 * a bundled application cannot resolve. The check is the format's few fields; its messages are
 * part of the contract (`Cannot restore the context: <path> should be …`).
 */

/** A field of a saved context that is not what the format says, at `path`. @example `new ContextShapeError(["run", "unclaimed"], "should be a list")` */
export class ContextShapeError extends Error {
  override name = "ContextShapeError";
  constructor(
    readonly path: readonly PropertyKey[],
    readonly problem: string,
  ) {
    super(problem);
  }
}

type Data = Record<string, unknown>;

/**
 * `value` checked against the saved-context format (version `version`), with unknown fields of
 * the context and of its run left out; throws `ContextShapeError` at the first bad field.
 * @example const data = checkContextShape(JSON.parse(text), 3);
 */
export function checkContextShape(value: unknown, version: number): Data {
  const data = object(value, []);
  if (data.version !== version) bad(["version"], `should be ${version}`);
  text(data.workflow, ["workflow"]);
  object(data.store, ["store"]);
  if (typeof data.running !== "boolean") bad(["running"], "should be a boolean");
  return { version, workflow: data.workflow, store: data.store, running: data.running, run: data.run === null ? null : savedRun(data.run, ["run"]) };
}

function savedRun(value: unknown, path: PropertyKey[]): Data {
  const run = object(value, path);
  const at = (key: string) => [...path, key];
  if (run.runId !== undefined) text(run.runId, at("runId"));
  for (const key of ["queued", "inFlight"]) eachOf(run[key], at(key), (events, p) => eachIn(events, p, delivery));
  if (run.once !== undefined) eachOf(run.once, at("once"), (records, p) => eachOf(records, p, onceRecord));
  eachOf(run.collected, at("collected"), (buffers, p) => eachOf(buffers, p, (events, q) => eachIn(events, q, savedEvent)));
  eachIn(run.unclaimed, at("unclaimed"), savedEvent);
  const waiters = run.waiters ?? [];
  eachIn(waiters, at("waiters"), (waiter, p) => {
    const fields = object(waiter, p);
    if (typeof fields.type !== "string") bad([...p, "type"], "should be a string");
    json(fields.requirements, [...p, "requirements"]);
  });
  const known = { queued: run.queued, inFlight: run.inFlight, collected: run.collected, unclaimed: run.unclaimed, waiters };
  return { ...(run.runId === undefined ? {} : { runId: run.runId }), ...known, ...(run.once === undefined ? {} : { once: run.once }) };
}

function savedEvent(value: unknown, path: PropertyKey[]): void {
  text(object(value, path).type, [...path, "type"]);
}

function delivery(value: unknown, path: PropertyKey[]): void {
  savedEvent(value, path);
  const execution = (value as Data).execution;
  if (execution !== undefined) text(execution, [...path, "execution"]);
}

function onceRecord(value: unknown, path: PropertyKey[]): void {
  const record = value as Data | null;
  if (record?.state === "started") return;
  if (record?.state === "finished" && "value" in record && isJson(record.value)) return;
  bad(path, 'is not a record ctx.once writes ({ state: "started" } or { state: "finished", value })');
}

function object(value: unknown, path: readonly PropertyKey[]): Data {
  if (typeof value !== "object" || value === null || Array.isArray(value)) bad(path, "should be an object");
  return value as Data;
}

function text(value: unknown, path: readonly PropertyKey[]): void {
  if (typeof value !== "string") bad(path, "should be a string");
  if (value === "") bad(path, "should not be empty");
}

function eachOf(value: unknown, path: PropertyKey[], check: (item: unknown, path: PropertyKey[]) => void): void {
  for (const [key, item] of Object.entries(object(value, path))) check(item, [...path, key]);
}

function eachIn(value: unknown, path: PropertyKey[], check: (item: unknown, path: PropertyKey[]) => void): void {
  if (!Array.isArray(value)) bad(path, "should be a list");
  value.forEach((item, i) => check(item, [...path, i]));
}

function json(value: unknown, path: readonly PropertyKey[]): void {
  if (!isJson(value)) bad(path, "should be JSON (null, a boolean, a number, a string, a list or an object of these)");
}

function isJson(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value === "object") return Object.values(value).every(isJson);
  return false;
}

function bad(path: readonly PropertyKey[], problem: string): never {
  throw new ContextShapeError(path, problem);
}
