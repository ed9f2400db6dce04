/**
 * A run whose server stalled past its lease: another server sharing the store takes the run
 * over, and the first server's save of the run's end then loses to it. Run-and-wait on the
 * first server answers 409 `held_by_another_server` rather than a result the store does not
 * have; the store keeps the other server's run.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import { StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import { MemorySessionStore } from "../../src/sessions/memory-store.ts";
import type { SessionSave } from "../../src/sessions/types.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";

const open: WorkflowServer[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** A one-step workflow whose step goes on when the test says so. */
class Held extends Workflow<{ n: number }, number> {
  /** Resolves once the step has begun. */
  readonly entered: Promise<void>;
  /** Lets the step finish. */
  readonly release: () => void;
  readonly #enter: () => void;
  readonly #go: Promise<void>;
  constructor() {
    super({ timeout: null });
    let enter = () => {};
    let release = () => {};
    this.entered = new Promise((resolve) => (enter = resolve));
    this.#go = new Promise((resolve) => (release = resolve));
    this.#enter = enter;
    this.release = release;
  }

  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async answer(_ctx: unknown, ev: StartEvent<{ n: number }>): Promise<StopEvent<number>> {
    this.#enter();
    await this.#go;
    return new StopEvent({ result: ev.n + 1 });
  }
}

/** A memory store that says when a handler is first written, and which. */
class WatchedStore extends MemorySessionStore {
  readonly firstSave: Promise<string>;
  #saved: (session: string) => void = () => {};
  constructor() {
    super();
    this.firstSave = new Promise((resolve) => (this.#saved = resolve));
  }
  override async save(id: string, save: SessionSave): Promise<number> {
    const version = await super.save(id, save);
    this.#saved(id);
    return version;
  }
}

describe("a run another server took over while this one saved its end", () => {
  it("answers run-and-wait 409 held_by_another_server, and the store keeps the other server's run", { timeout: 60_000 }, async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const store = new WatchedStore();
    const held = new Held();
    const errors: unknown[] = [];
    const first = new WorkflowServer({ workflows: { held }, store, onError: (error) => errors.push(error) });
    const second = new WorkflowServer({ workflows: { held: new Held() }, store });
    open.push(first, second);
    const firstUrl = (await first.listen({ port: 0 })).url;
    const secondUrl = (await second.listen({ port: 0 })).url;

    const answer = fetch(`${firstUrl}/api/workflows/held/run`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ input: { n: 41 } }),
    });
    await held.entered;
    const id = (await store.firstSave).replace(/^handler:/, "");

    // The first server's step runs past its lease (30 s) without renewing it: the second takes the run over.
    vi.setSystemTime(Date.now() + 31_000);
    const takenOver = await new WorkflowClient({ baseUrl: secondUrl }).getHandler(id);
    expect(takenOver).toMatchObject({ id, status: "failed", error: { message: expect.stringContaining("could not continue after a restart") } });

    held.release();
    const response = await answer;
    expect(response.status).toBe(409);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error).toEqual({
      code: "held_by_another_server",
      message: `Handler ${id} ended here (succeeded), but another server sharing the store took it over as this one saved its end (this server's lease had ended): the store has that server's run, not this result. Read it with GET /api/handlers/${id}.`,
    });
    // Not a failure of the store: nothing is reported to onError, and the first server holds nothing of the run.
    expect(errors).toEqual([]);
    expect(first.stats()).toMatchObject({ live: 0, handlers: 0 });
    // Either server answers with what the store has: the second server's run, not the first's result.
    const stored = await new WorkflowClient({ baseUrl: firstUrl }).getHandler(id);
    expect(stored).toEqual(takenOver);
    expect(stored.result).toBeUndefined();
  });
});
