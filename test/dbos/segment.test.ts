/**
 * One part of a durable run, in process, with the database replaced by a log: the checkpoints
 * are taken at the run's transitions (a step execution finished), whatever the run streams; a
 * step's checkpoint is written after the events it streamed and before the side effects of the
 * steps after it, and holds none of their work half done; a run whose end is recorded is not run again.
 */
import { describe, expect, it } from "vitest";
import { Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import type { Checkpoint, Checkpoints, Found, JournalClaims, RecordedOutcome } from "../../src/dbos/checkpoints.ts";
import type { Fence } from "../../src/dbos/lease.ts";
import { runSegment } from "../../src/dbos/segment.ts";
import { encodeEvent } from "../../src/core/internal.ts";
import type { Journal, JournalClaim, SavedEvent } from "../../src/core/internal.ts";

class Drafted extends Event<{ text: string }> {}
class Progress extends Event<{ note: string }> {}

/** Drafts, then sends the draft once (a side effect), then stops. */
class Mailer extends Workflow<{ to: string }, string> {
  @step({ accepts: [StartEvent], emits: [Drafted] })
  async draft(ctx: Context, ev: StartEvent<{ to: string }>) {
    ctx.writeEventToStream(new Progress({ note: "drafted" }));
    return new Drafted({ text: `Hello ${ev.to}` });
  }

  @step({ accepts: [Drafted], emits: [StopEvent] })
  async send(ctx: Context, ev: Drafted) {
    const sent = await ctx.once("send", () => `sent: ${ev.text}`);
    return new StopEvent({ result: sent.status === "unknown" ? "unknown" : sent.value });
  }
}

/** Notes its progress, then asks a question: the part parks. */
class Asker extends Workflow<{}, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async ask(ctx: Context) {
    ctx.writeEventToStream(new Progress({ note: "asking" }));
    const answer = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>, { waiterEvent: new InputRequiredEvent({ prefix: "Go?" }) });
    return new StopEvent({ result: answer.response });
  }
}

/** Runs a child workflow and forwards its events, the child's step changes among them. */
class Parent extends Workflow<{}, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async delegate(ctx: Context) {
    const child = new Mailer().run({ to: "Ada" }, { lifecycleEvents: true });
    for await (const ev of child.streamEvents()) if (!(ev instanceof StopEvent)) ctx.writeEventToStream(ev);
    return new StopEvent({ result: `child: ${await child}` });
  }
}

/** What the part did to the database, in order. */
class Database implements Pick<Checkpoints, "load" | "save" | "end"> {
  readonly log: string[] = [];
  /** The types of the events streamed, in order. */
  readonly written: string[] = [];
  readonly saved: Checkpoint[] = [];
  ended: RecordedOutcome | undefined;
  /** The journal keys claimed, with a checkpoint or by the journal. */
  readonly claimed = new Set<string>();
  found: Found = { checkpoint: undefined, outcome: undefined };

  /** The run found, or (none found) `first`, written in the same statement. */
  async load(_runId: string, _fence: Fence, first?: Checkpoint): Promise<Found> {
    if (first === undefined || this.found.checkpoint !== undefined || this.found.outcome !== undefined) return this.found;
    this.saved.push(structuredClone(first));
    this.log.push(`checkpoint ${first.seq}`);
    return { checkpoint: first, outcome: undefined };
  }

  /** A checkpoint, and the events streamed before it and the journal claims that wait for it, written with it (in the same transaction). */
  async save(_runId: string, checkpoint: Checkpoint, _fence: Fence, events: readonly { type: string }[] = [], claims?: JournalClaims): Promise<string[]> {
    await Promise.resolve();
    this.stream(events);
    this.saved.push(structuredClone(checkpoint));
    this.log.push(`checkpoint ${checkpoint.seq}`);
    const claimed = (claims?.keys ?? []).filter((key) => !this.claimed.has(key));
    for (const key of claimed) {
      this.claimed.add(key);
      this.log.push(`claim ${key.split(":").at(-1) ?? key} with checkpoint ${checkpoint.seq}`);
    }
    return claimed;
  }

  async end(_runId: string, _last: unknown, outcome: RecordedOutcome, _fence: Fence, events: readonly { type: string }[] = []): Promise<void> {
    this.stream(events);
    this.ended = outcome;
    this.log.push(`end: ${outcome.kind}`);
  }

  stream(events: readonly { type: string }[]): void {
    for (const event of events) {
      this.written.push(event.type);
      this.log.push(`stream ${event.type}`);
    }
  }

  journal(): Journal {
    const results = new Map<string, string>();
    return {
      description: "the log",
      begin: async (key): Promise<JournalClaim> => {
        this.log.push(`claim ${key.split(":").at(-1) ?? key}`);
        const result = results.get(key);
        if (result !== undefined) return { claimed: false, entry: { state: "finished", result } };
        if (this.claimed.has(key)) return { claimed: false, entry: { state: "started" } };
        this.claimed.add(key);
        return { claimed: true };
      },
      finish: async (key, result) => void results.set(key, result),
      release: async () => undefined,
    };
  }
}

const fence: Fence = { lease: { holder: "w1", epoch: 1, signal: new AbortController().signal }, part: "run-1.part-1", owner: undefined };

function part(db: Database, workflow: Workflow<never, unknown> | Workflow<object, unknown>, input: object, answers: SavedEvent[] = []) {
  return {
    runId: "run-1",
    workflow: workflow as never,
    input: input as never,
    answers,
    checkpoints: db as unknown as Checkpoints,
    journal: db.journal(),
    fence,
    claimant: "w1@1/run-1.part-1:",
    streamed: () => true,
    write: async (events: readonly { type: string }[]) => db.stream(events),
  };
}

describe("a part of a durable run", () => {
  it("writes a step's checkpoint after its events and before the next step's side effect", async () => {
    const db = new Database();
    const outcome = await runSegment(part(db, new Mailer(), { to: "Ada" }));
    expect(outcome).toEqual({ kind: "finished", result: "sent: Hello Ada" });
    const stream = db.log.indexOf("stream Progress");
    const afterDraft = db.log.findIndex((line, i) => i > stream && line.startsWith("checkpoint 1"));
    // The next step claims its side effect while the checkpoint it waits for is not written yet: the claim goes with it.
    const claim = db.log.indexOf("claim send with checkpoint 1");
    expect(stream).toBeGreaterThan(-1);
    expect(afterDraft).toBeGreaterThan(stream);
    expect(claim).toBeGreaterThan(afterDraft);
    expect(db.log.at(-1)).toBe("end: finished");
    expect(db.written.filter((type) => type === "Progress")).toEqual(["Progress"]); // once, whichever write took it
  });

  it("streams its question once, with the checkpoint it parks on, and ends the part waiting", async () => {
    const db = new Database();
    const outcome = await runSegment(part(db, new Asker(), {}));
    expect(outcome).toEqual({ kind: "waiting" });
    expect(db.written.filter((type) => type === "InputRequiredEvent")).toEqual(["InputRequiredEvent"]);
    const asked = db.log.indexOf("stream InputRequiredEvent");
    expect(db.log.slice(asked + 1).some((line) => line.startsWith("checkpoint"))).toBe(true);
    expect(db.ended).toBeUndefined();
  });

  it("checkpoints at the run's own transitions: step changes it forwards from another run are streamed, not taken for its own", async () => {
    const db = new Database();
    const outcome = await runSegment(part(db, new Parent(), {}));
    const { written } = db;
    expect(outcome).toEqual({ kind: "finished", result: "child: sent: Hello Ada" });
    expect(written.filter((type) => type === "StepStateChangedEvent").length).toBeGreaterThanOrEqual(4); // the child's two steps, started and finished
    expect(written).toContain("Progress");
    // The parent's one step ended the run: its end is recorded, and no checkpoint is taken in the middle of that step.
    expect(db.saved.map((c) => c.seq)).toEqual([0]);
    expect(db.ended).toEqual({ kind: "finished", result: "child: sent: Hello Ada" });
  });

  it("checkpoints no step's work half done: a part run again from the newest checkpoint does the work, and ends the run", async () => {
    const db = new Database();
    await runSegment(part(db, new Mailer(), { to: "Ada" }));
    // A finished run is never a checkpoint (it would hold no StartEvent to start from): its end is recorded instead.
    expect(db.saved.every((c) => c.context.running)).toBe(true);
    // The worker died after the newest checkpoint, before the run's end was recorded: the part runs again from it.
    const last = db.saved.at(-1) as Checkpoint;
    const again = new Database();
    again.found = { checkpoint: last, outcome: undefined };
    const outcome = await runSegment(part(again, new Mailer(), { to: "Ada" }));
    expect(outcome).toEqual({ kind: "finished", result: "sent: Hello Ada" });
    expect(again.log.filter((line) => line.startsWith("stream Progress"))).toEqual([]); // the draft step did not run again
  });

  it("keeps a claim written with a checkpoint: the part run again from that checkpoint does not do the work again", async () => {
    const db = new Database();
    await runSegment(part(db, new Mailer(), { to: "Ada" }));
    expect(db.log).toContain("claim send with checkpoint 1");
    // The worker died in the middle of the send: its claim is in the journal, with no result; the part runs again from the checkpoint it came with.
    const again = new Database();
    for (const key of db.claimed) again.claimed.add(key);
    again.found = { checkpoint: db.saved.find((c) => c.seq === 1) as Checkpoint, outcome: undefined };
    const outcome = await runSegment(part(again, new Mailer(), { to: "Ada" }));
    expect(outcome).toEqual({ kind: "finished", result: "unknown" });
    expect(again.log.filter((line) => line.startsWith("claim"))).toEqual(["claim send"]);
  });

  it("ends waiting again, running nothing, when replayed after it parked; the part after the answer goes on from there", async () => {
    const db = new Database();
    await runSegment(part(db, new Asker(), {}));
    const parkedOn = db.saved.at(-1) as Checkpoint;
    expect(parkedOn.parked).toBe(true);
    // DBOS replays the run's workflow (its worker died while the run waited): the part that asked is not run again.
    const replayed = new Database();
    replayed.found = { checkpoint: parkedOn, outcome: undefined };
    expect(await runSegment(part(replayed, new Asker(), {}))).toEqual({ kind: "waiting" });
    expect(replayed.log).toEqual([]);
    // The part after the answer starts from the same checkpoint, with the answer, and finishes the run.
    const answer = encodeEvent(new HumanResponseEvent({ response: "go" }), "an answer");
    const next = new Database();
    next.found = { checkpoint: parkedOn, outcome: undefined };
    expect(await runSegment(part(next, new Asker(), {}, [answer]))).toEqual({ kind: "finished", result: "go" });
    // Replayed once a later part has written checkpoints (holding more answers), the part that asked ends waiting too.
    const later = new Database();
    later.found = { checkpoint: { ...parkedOn, answered: 1, parked: false }, outcome: undefined };
    expect(await runSegment(part(later, new Asker(), {}))).toEqual({ kind: "waiting" });
    expect(later.log).toEqual([]);
  });

  it("returns the recorded end of a run that another worker finished, and runs nothing", async () => {
    const db = new Database();
    db.found = { checkpoint: undefined, outcome: { kind: "finished", result: "sent: Hello Ada" } };
    const outcome = await runSegment(part(db, new Mailer(), { to: "Ada" }));
    expect(outcome).toEqual({ kind: "finished", result: "sent: Hello Ada" });
    expect(db.log).toEqual([]);
  });
});
