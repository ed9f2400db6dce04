import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Context, ContextSerdeError, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import { CONTEXT_FORMAT_VERSION } from "../../src/core/context.ts";
import { migrateContextJSON } from "../../src/core/context-format-migrations.ts";
import { StockCount } from "../fixtures/workflows.ts";

class Slow extends Workflow<{ text: string }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async slow(_ctx: Context, ev: StartEvent<{ text: string }>) {
    return new StopEvent({ result: ev.text });
  }
}

/** A context saved before its first step started: the StartEvent is queued. */
function savedQueued(): Record<string, unknown> {
  const flow = new Slow();
  const handler = flow.run({ text: "hi" });
  const saved = JSON.parse(JSON.stringify(handler.ctx.toJSON())) as Record<string, unknown>;
  handler.cancel();
  handler.catch(() => undefined);
  return saved;
}

function restoreError(saved: unknown): ContextSerdeError {
  try {
    Context.fromJSON(new Slow(), saved as never);
  } catch (error) {
    if (error instanceof ContextSerdeError) return error;
    throw error;
  }
  throw new Error("it restored");
}

describe("the saved context format", () => {
  it("names the path of a bad field and says what to do", () => {
    const saved = savedQueued() as { run: { queued: { slow: { type: unknown }[] } } };
    (saved.run.queued.slow[0] as { type: unknown }).type = 7;
    const error = restoreError(saved);
    expect(error.path).toBe("run.queued.slow[0].type");
    expect(error.message).toBe(
      "Cannot restore the context: run.queued.slow[0].type should be a string. The saved context was changed or damaged; restore it from a copy saved by ctx.toJSON(), or start over with a new Context.",
    );
  });

  it("checks ctx.once records and execution ids, quoting keys that are not identifiers", () => {
    const saved = savedQueued() as { run: Record<string, unknown> };
    saved.run.once = { "a.1": { charge: { state: "done" } } };
    expect(restoreError(saved).path).toBe('run.once["a.1"].charge');
    const other = savedQueued() as { run: { queued: { slow: Record<string, unknown>[] } } };
    (other.run.queued.slow[0] as Record<string, unknown>).execution = 3;
    expect(restoreError(other)).toMatchObject({ path: "run.queued.slow[0].execution", message: expect.stringContaining("should be a string") });
  });

  it("says what each kind of field should be, and leaves unknown fields of the context and its run out", () => {
    const problem = (edit: (saved: { run: Record<string, unknown> } & Record<string, unknown>) => void) => {
      const saved = savedQueued() as { run: Record<string, unknown> } & Record<string, unknown>;
      edit(saved);
      const error = restoreError(saved);
      return `${error.path}: ${error.message.replace(/^Cannot restore the context: \S+ /, "").replace(/\. The saved context .*$/, "")}`;
    };
    expect(problem((s) => (s.workflow = ""))).toBe("workflow: should not be empty");
    expect(problem((s) => (s.store = []))).toBe("store: should be an object");
    expect(problem((s) => (s.running = "yes"))).toBe("running: should be a boolean");
    expect(problem((s) => (s.run.unclaimed = {}))).toBe("run.unclaimed: should be a list");
    expect(problem((s) => (s.run.collected = { slow: { "A,B": [{ data: {} }] } }))).toBe('run.collected.slow["A,B"][0].type: should be a string');
    expect(problem((s) => (s.run.waiters = [{ type: "Answer", requirements: { at: () => 1 } }]))).toBe(
      "run.waiters[0].requirements: should be JSON (null, a boolean, a number, a string, a list or an object of these)",
    );
    const saved = savedQueued() as { run: Record<string, unknown> } & Record<string, unknown>;
    const restored = Context.fromJSON(new Slow(), { ...saved, extra: 1, run: { ...saved.run, extra: 2 } } as never).toJSON() as unknown as Record<
      string,
      unknown
    >;
    expect(restored.extra).toBeUndefined();
    expect((restored.run as Record<string, unknown>).extra).toBeUndefined();
  });

  it("refuses a newer version, naming the field", () => {
    expect(restoreError({ ...savedQueued(), version: CONTEXT_FORMAT_VERSION + 1 })).toMatchObject({ path: "version" });
  });

  it("migrates version 2 to 3: a restored context saves in the current version", () => {
    const v2 = JSON.parse(readFileSync(join(import.meta.dirname, "..", "fixtures", "format-2", "stock-count-waiting.json"), "utf8")) as Record<string, unknown>;
    const flow = new StockCount();
    const ctx = Context.fromJSON(flow, v2 as never);
    const again = ctx.toJSON();
    expect(again.version).toBe(3);
    expect(Object.keys(again.run?.inFlight ?? {}).sort()).toEqual(["ask", "gather"]);
    // Format 2 had the Part in flight in gather also in gather's buffer; version 3 keeps it once.
    expect(JSON.stringify(again.run?.collected)).not.toContain(JSON.stringify(again.run?.inFlight.gather?.[0]?.data));
  });

  it("migrates format 1's shared collect buffers to the one step that accepts their types", () => {
    const v1 = {
      version: 1,
      workflow: "Flow",
      store: {},
      running: true,
      run: { queued: {}, inFlight: {}, collected: { "A|B": [{ type: "A", data: {} }] }, unclaimed: [], waiters: [] },
    };
    const migrated = migrateContextJSON(v1, {
      name: "Flow",
      steps: [
        { name: "join", accepts: ["A", "B"] },
        { name: "other", accepts: ["A"] },
      ],
    });
    expect(migrated).toMatchObject({ version: 3, run: { collected: { join: { "A|B": [{ type: "A", data: {} }] } } } });
    expect(() =>
      migrateContextJSON(v1, {
        name: "Flow",
        steps: [
          { name: "x", accepts: ["A", "B"] },
          { name: "y", accepts: ["A", "B"] },
        ],
      }),
    ).toThrow(/2 steps \(x, y\) of Flow could have collected them/);
  });
});
