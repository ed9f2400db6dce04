/**
 * Migrations of saved contexts from every earlier format version to the current one, one step
 * per version. Each takes the plain JSON of version n and returns that of version n + 1; the
 * schema check comes after the last. Add one here with every format change, and keep a context
 * saved in the old format under test/fixtures/.
 */
import { ContextSerdeError } from "./serialize.ts";

/** What a migration may need to know of the workflow a context is restored into. @example `{ name: "Flow", steps: [{ name: "a", accepts: ["StartEvent"] }] }` */
export interface WorkflowShape {
  readonly name: string;
  readonly steps: readonly { readonly name: string; readonly accepts: readonly string[] }[];
}

type Plain = Record<string, unknown>;
type Migration = (context: Plain, workflow: WorkflowShape) => Plain;

const isPlain = (value: unknown): value is Plain => typeof value === "object" && value !== null && !Array.isArray(value);

/** `MIGRATIONS[n]` turns version n into version n + 1. */
const MIGRATIONS: Readonly<Record<number, Migration>> = {
  1: (context, workflow) => withRun(context, (run) => ({ ...run, collected: collectedByStep(run.collected, workflow) })),
  2: (context) => withRun(context, withoutRecollected),
};

/**
 * Migrates `context` (of any version up to the current one) to the current version.
 * @example const current = migrateContextJSON(JSON.parse(text), { name: "Flow", steps: [] });
 */
export function migrateContextJSON(context: Plain, workflow: WorkflowShape): Plain {
  let out = context;
  for (let version = out.version as number; MIGRATIONS[version]; version++) {
    out = { ...(MIGRATIONS[version] as Migration)(out, workflow), version: version + 1 };
  }
  return out;
}

function withRun(context: Plain, change: (run: Plain) => Plain): Plain {
  return context.running === true && isPlain(context.run) ? { ...context, run: change(context.run) } : context;
}

/**
 * 1 → 2. Format 1 kept one `collectEvents` buffer per list of types for the whole run, `{ [types]:
 * events }`; format 2 keeps them per step, `{ [step]: { [bufferId]: events } }`. Each old buffer
 * goes to the one step that accepts every type it lists (the step that collected it); when
 * several steps could have, it cannot be told.
 */
function collectedByStep(collected: unknown, workflow: WorkflowShape): Record<string, Record<string, unknown[]>> {
  if (!isPlain(collected)) throw new ContextSerdeError("Cannot restore the context: run.collected should be an object.", { path: "run.collected" });
  const byStep: Record<string, Record<string, unknown[]>> = {};
  for (const [key, events] of Object.entries(collected)) {
    if (!Array.isArray(events) || events.length === 0) continue;
    const types = key.split("|");
    const steps = workflow.steps.filter((s) => types.every((type) => s.accepts.includes(type)));
    if (steps.length !== 1) {
      throw new ContextSerdeError(
        `Cannot restore the context: it holds events collected by collectEvents (${key}) in the format of an older stepflow, which kept one buffer for all steps, and ${steps.length === 0 ? "no step" : `${steps.length} steps (${steps.map((s) => s.name).join(", ")})`} of ${workflow.name} could have collected them. Finish that run with the version that saved it, or start the run again with a new Context.`,
        { path: `run.collected[${JSON.stringify(key)}]` },
      );
    }
    (byStep[(steps[0] as { name: string }).name] ??= {})[key] = events;
  }
  return byStep;
}

/**
 * 2 → 3. Formats 1 and 2 saved a step's event both as in flight and in the step's collect
 * buffer when the step had collected it and not yet returned; run again after restore, the step
 * collected it a second time. One copy per in-flight event leaves the buffer. Events get no
 * execution ids: the restored run gives them new ones.
 */
function withoutRecollected(run: Plain): Plain {
  if (!isPlain(run.collected) || !isPlain(run.inFlight)) return run;
  const collected: Plain = { ...run.collected };
  for (const [step, events] of Object.entries(run.inFlight)) {
    const buffers = collected[step];
    if (!Array.isArray(events) || !isPlain(buffers)) continue;
    const copy: Plain = { ...buffers };
    for (const event of events) {
      const text = JSON.stringify(event);
      for (const [id, list] of Object.entries(copy)) {
        if (!Array.isArray(list)) continue;
        const at = list.findIndex((saved) => JSON.stringify(saved) === text);
        if (at >= 0) {
          copy[id] = list.filter((_, i) => i !== at);
          break;
        }
      }
    }
    collected[step] = copy;
  }
  return { ...run, collected };
}
