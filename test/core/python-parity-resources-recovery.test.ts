/**
 * Behaviours ported from Python llama-index-workflows' tests (tests/test_resource.py and the
 * recovery-step checks of validation), in the style of engine-parity.test.ts: resources that
 * are not cached, resources read from a JSON config file and checked by a schema, a step
 * learning its attempt, the previous attempt's error and its execution context from `ctx`,
 * and validate() refusing recovery steps that compete for one failure.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ConfigurationError,
  Context,
  Event,
  StartEvent,
  StepFailedEvent,
  StopEvent,
  Workflow,
  WorkflowValidationError,
  resource,
  resourceConfig,
  step,
} from "../../src/index.ts";

class Next extends Event<{}> {}

describe("test_resource: cache=False", () => {
  it("test_resource_not_cached: the factory is called for every step execution that needs it", async () => {
    let made = 0;
    const counter = resource(() => ({ n: ++made }), { cache: false });
    class Flow extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Next], resources: { counter } })
      async first(_ctx: Context, _ev: StartEvent, { counter }: { counter: { n: number } }) {
        counter.n *= 10;
        return new Next();
      }
      @step({ accepts: [Next], emits: [StopEvent], resources: { counter } })
      async second(_ctx: Context, _ev: Next, { counter }: { counter: { n: number } }) {
        return new StopEvent({ result: `second sees ${counter.n}` });
      }
    }
    expect(await new Flow().run({})).toBe("second sees 2");
    expect(made).toBe(2);
  });

  it("test_resource_not_cached_shared_within_one_resolution: two resources of one step that use it get one value", async () => {
    let made = 0;
    const conn = resource(() => ({ id: ++made }), { cache: false });
    const users = resource(({ conn }) => conn.id, { resources: { conn } });
    const orders = resource(({ conn }) => conn.id, { resources: { conn }, cache: false });
    class Flow extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent], resources: { users, orders } })
      async go(_ctx: Context, _ev: StartEvent, r: { users: number; orders: number }) {
        return new StopEvent({ result: `${r.users} ${r.orders}` });
      }
    }
    expect(await new Flow().run({})).toBe("1 1");
    expect(made).toBe(1);
  });

  it("refuses a cache value it does not know", () => {
    expect(() => resource(() => 1, { cache: "step" as never })).toThrow(/cache must be "run", "workflow" or false/);
  });
});

describe("test_resource: ResourceConfig", () => {
  const dir = mkdtempSync(join(tmpdir(), "stepflow-resource-config-"));
  const file = join(dir, "config.json");
  writeFileSync(file, JSON.stringify({ services: { db: { url: "postgres://db", pool: 5 }, name: "x" } }));
  const Db = z.object({ url: z.string(), pool: z.number() });

  it("test_resource_config: a step receives the part of the file the selector names, parsed by the schema", async () => {
    const db = resourceConfig(Db, { configFile: file, pathSelector: "services.db" });
    class Flow extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent], resources: { db } })
      async go(_ctx: Context, _ev: StartEvent, { db }: { db: z.infer<typeof Db> }) {
        return new StopEvent({ result: `${db.url} ×${db.pool}` });
      }
    }
    expect(await new Flow().run({})).toBe("postgres://db ×5");
  });

  it("test_resource_config_missing_file / not_json: refused when declared", () => {
    expect(() => resourceConfig(Db, { configFile: join(dir, "missing.json") })).toThrow(/no such file: .*missing\.json/);
    const yaml = join(dir, "config.yaml");
    writeFileSync(yaml, "url: x");
    expect(() => resourceConfig(Db, { configFile: yaml })).toThrow(/only JSON files/);
  });

  it("test_resource_config_bad_selector / invalid_data: the step fails with a ConfigurationError naming the file and path", async () => {
    const notObject = resourceConfig(Db, { configFile: file, pathSelector: "services.name" });
    const invalid = resourceConfig(z.object({ url: z.number() }), { configFile: file, pathSelector: "services.db" });
    const failure = async (cfg: typeof notObject) => {
      class Flow extends Workflow<{}, string> {
        @step({ accepts: [StartEvent], emits: [StopEvent], resources: { cfg } })
        async go() {
          return new StopEvent({ result: "ran" });
        }
      }
      return new Flow().run({}).catch((e: unknown) => e as Error);
    };
    const selectorError = await failure(notObject);
    expect(selectorError).toBeInstanceOf(ConfigurationError);
    expect(String(selectorError)).toContain("at path services.name, got string");
    const schemaError = await failure(invalid as never);
    expect(schemaError).toBeInstanceOf(ConfigurationError);
    expect(String(schemaError)).toMatch(/config\.json at path services\.db does not match its schema:[\s\S]*expected number/);
  });
});

describe("test_retry_policy: a step's attempt and the previous attempt's error", () => {
  it("test_step_learns_its_attempt_number_and_the_previous_error", async () => {
    const seen: [number, string | undefined][] = [];
    class Flaky extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: { maxAttempts: 3 } })
      async fetch(ctx: Context) {
        const { attempt, previousError } = ctx.stepExecution ?? { attempt: 0, previousError: undefined };
        seen.push([attempt, (previousError as Error | undefined)?.message]);
        if (attempt < 3) throw new Error(`503 on attempt ${attempt}`);
        return new StopEvent({ result: `ok on attempt ${attempt}` });
      }
    }
    expect(await new Flaky().run({})).toBe("ok on attempt 3");
    expect(seen).toEqual([
      [1, undefined],
      [2, "503 on attempt 1"],
      [3, "503 on attempt 2"],
    ]);
  });
});

describe("test_context: a step finds its own execution context", () => {
  it("test_step_execution_context: the step's name, attempt and an execution id kept across attempts and unique per execution", async () => {
    const infos: { stepName: string; attempt: number; executionId: string }[] = [];
    class Item extends Event<{ n: number }> {}
    class Flow extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Item] })
      async start(ctx: Context) {
        ctx.sendEvent(new Item({ n: 1 }));
        ctx.sendEvent(new Item({ n: 2 }));
      }
      @step({ accepts: [Item], emits: [StopEvent], retry: { maxAttempts: 2 }, numWorkers: 2 })
      async work(ctx: Context, ev: Item) {
        const info = ctx.stepExecution;
        if (!info) throw new Error("no execution context in a step");
        infos.push({ stepName: info.stepName, attempt: info.attempt, executionId: info.executionId });
        if (info.attempt === 1 && ev.n === 1) throw new Error("once");
        if (ev.n === 1) return new StopEvent({ result: "done" });
      }
    }
    const flow = new Flow();
    const ctx = new Context(flow);
    expect(await flow.run({}, { ctx })).toBe("done");
    expect(ctx.stepExecution).toBeUndefined();
    expect(infos.every((info) => info.stepName === "work")).toBe(true);
    const byId = new Map<string, typeof infos>();
    for (const info of infos) byId.set(info.executionId, [...(byId.get(info.executionId) ?? []), info]);
    expect(byId.size).toBe(2);
    expect([...byId.values()].map((attempts) => attempts.map((a) => a.attempt)).sort()).toEqual([[1], [1, 2]]);
  });
});

describe("validation of recovery steps", () => {
  class Work extends Event<{}> {}
  const validationMessage = (flow: Workflow): string => {
    try {
      flow.validate();
    } catch (e) {
      expect(e).toBeInstanceOf(WorkflowValidationError);
      return (e as Error).message;
    }
    throw new Error("expected a WorkflowValidationError");
  };

  it("refuses two wildcard recovery steps", () => {
    class Flow extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async go(): Promise<StopEvent<string>> {
        throw new Error("down");
      }
      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: {} })
      async recoverA() {
        return new StopEvent({ result: "a" });
      }
      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: {} })
      async recoverB() {
        return new StopEvent({ result: "b" });
      }
    }
    expect(validationMessage(new Flow())).toContain('Steps "recoverA" and "recoverB" both catch the errors of every step');
  });

  it("refuses two recovery steps claiming the same step, and accepts one wildcard with one specific", () => {
    class Claimed extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [Work] })
      async start() {
        return new Work();
      }
      @step({ accepts: [Work], emits: [StopEvent] })
      async fetch(): Promise<StopEvent<string>> {
        throw new Error("down");
      }
      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { forSteps: ["fetch"] } })
      async recoverA() {
        return new StopEvent({ result: "a" });
      }
      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { forSteps: ["start", "fetch"] } })
      async recoverB() {
        return new StopEvent({ result: "b" });
      }
    }
    expect(validationMessage(new Claimed())).toContain('Step "fetch" is claimed by more than one recovery step: "recoverA" and "recoverB"');

    class Fine extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async go(): Promise<StopEvent<string>> {
        throw new Error("down");
      }
      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { forSteps: ["go"] } })
      async recoverGo(_ctx: Context, ev: StepFailedEvent) {
        return new StopEvent({ result: `recovered ${ev.step}` });
      }
      @step({ accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: {} })
      async recoverAny() {
        return new StopEvent({ result: "any" });
      }
    }
    expect(() => new Fine().validate()).not.toThrow();
  });
});
