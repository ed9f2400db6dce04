/**
 * The run's transitions one at a time: a state, one input, the commands that come out and the
 * state after. Synchronous: no timers, no step is called, no workflow runs.
 */
import { describe, expect, it } from "vitest";
import { Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent } from "../../src/index.ts";
import { WorkflowCancelledByUser, WorkflowRuntimeError, WorkflowTimeoutError, UnhandledEventError } from "../../src/core/errors.ts";
import { buildGraph } from "../../src/core/graph.ts";
import { defineStep } from "../../src/core/step.ts";
import type { StepConfig } from "../../src/core/step.ts";
import { StepFailedEvent } from "../../src/core/step-failed.ts";
import { idle, newRunState, slotOf } from "../../src/core/run-state.ts";
import type { RunState, StepExecution, WaitAnswer, Waiter } from "../../src/core/run-state.ts";
import { transition } from "../../src/core/run-transitions.ts";
import type { RunCommand, RunInput } from "../../src/core/run-io.ts";
import { collect } from "../../src/core/collect-events.ts";
import { pendingRun } from "../../src/core/run-save.ts";
import { Codecs } from "../../src/core/serialize.ts";

class Query extends Event<{ q: string }> {}
class Answer extends Event<{ a: string }> {}
class Lone extends Event<{ n: number }> {}
class Done extends Event<{ n: number }> {}
class Approval extends HumanResponseEvent<{ ok: boolean; id?: number }> {}

const noop = () => undefined;
const stepOf = (name: string, config: StepConfig) => defineStep(name, config, noop);

/** A state of a small graph: start → search (2 workers) → answer (its own timeout-free step), a retrying step, a recovery step. */
function newState(extra: Partial<Record<"retry" | "recover", true>> = {}): RunState {
  const steps = [
    stepOf("start", { accepts: [StartEvent], emits: [Query] }),
    stepOf("search", { accepts: [Query], emits: [Answer], numWorkers: 2 }),
    stepOf("answer", { accepts: [Answer], emits: [StopEvent], ...(extra.retry ? { retry: { maxAttempts: 3, delay: 0.5 } } : {}) }),
    stepOf("collect", { accepts: [Done], emits: [StopEvent] }),
  ];
  if (extra.recover) steps.push(stepOf("recover", { accepts: [StepFailedEvent], emits: [StopEvent], catchErrors: { forSteps: ["answer"] } }));
  return newRunState(buildGraph("Test", steps, { validate: false }), new Codecs());
}

const kinds = (commands: readonly RunCommand[]) => commands.map((c) => c.kind);
const executed = (commands: readonly RunCommand[]) =>
  commands.flatMap((c) => (c.kind === "execute" ? [`${c.execution.slot.step.name}(${(c.execution.event.constructor as { name: string }).name})`] : []));
const slot = (state: RunState, name: string) => slotOf(state, name) as NonNullable<ReturnType<typeof slotOf>>;

/** A running state with `search` executing one Query; returns the execution. */
function running(state = newState()): { state: RunState; execution: StepExecution } {
  transition(state, { kind: "start" });
  const [command] = transition(state, { kind: "send", event: new Query({ q: "x" }), target: undefined });
  if (command?.kind !== "execute") throw new Error("expected an execution");
  return { state, execution: command.execution };
}

/** Returns `execution` and each one the step starts next, `count` times: what each started execution ran and its id. */
function startedAfter(state: RunState, execution: StepExecution, count: number): [string, number | string, boolean][] {
  const started: [string, number | string, boolean][] = [];
  for (let i = 0; i < count; i++) {
    const [next] = transition(state, { kind: "stepReturned", execution, output: undefined, attempt: 1 });
    if (next?.kind !== "execute") throw new Error("expected the next queued event to execute");
    execution = next.execution;
    started.push([(execution.event as Query).q, execution.id, execution.shared !== undefined]);
  }
  return started;
}

function waiter(type: typeof Approval, execution?: StepExecution, requirements?: Record<string, unknown>): Waiter & { answers: WaitAnswer[] } {
  const answers: WaitAnswer[] = [];
  return { type, requirements, execution, answer: (a) => answers.push(a), answers };
}

describe("schedule and start", () => {
  it("schedule queues the StartEvent without executing it; start executes it", () => {
    const state = newState();
    expect(transition(state, { kind: "schedule", event: new StartEvent({}) })).toEqual([]);
    expect(state.phase).toBe("scheduled");
    expect(slot(state, "start").queue?.size).toBe(1);
    const commands = transition(state, { kind: "start" });
    expect(state.phase).toBe("running");
    expect(executed(commands)).toEqual(["start(StartEvent)"]);
    expect(slot(state, "start").busy).toBe(1);
    expect(slot(state, "start").inFlight.size).toBe(1);
  });

  it("schedule after the run ended (cancelled first) loads nothing", () => {
    const state = newState();
    transition(state, { kind: "fail", error: new WorkflowCancelledByUser("cancelled") });
    expect(transition(state, { kind: "schedule", event: new StartEvent({}) })).toEqual([]);
    expect(state.phase).toBe("failed");
    expect(slot(state, "start").queue).toBeUndefined();
  });

  it("restore loads in-flight events before queued ones, collect buffers and kept events", () => {
    const state = newState();
    const commands = transition(state, {
      kind: "restore",
      restored: {
        queued: { search: [{ event: new Query({ q: "queued" }), execution: undefined }] },
        inFlight: { search: [{ event: new Query({ q: "in flight" }), execution: "a.1" }] },
        collected: { collect: { Done: [new Done({ n: 1 })] } },
        unclaimed: [new Approval({ ok: true })],
      },
    });
    expect(commands).toEqual([]);
    expect(
      slot(state, "search")
        .queue?.executions()
        .map((e) => [(e.event as Query).q, e.id]),
    ).toEqual([
      ["in flight", "a.1"],
      ["queued", 1],
    ]);
    expect(state.collected?.get("collect")?.get("Done")?.size).toBe(1);
    expect(state.unclaimed).toHaveLength(1);
  });

  it("restore of events for a step the workflow lacks fails the run", () => {
    const state = newState();
    const commands = transition(state, {
      kind: "restore",
      restored: { queued: { gone: [{ event: new Query({ q: "x" }), execution: undefined }] }, inFlight: {}, collected: {}, unclaimed: [] },
    });
    expect(kinds(commands)).toEqual(["end"]);
    expect(state.phase).toBe("failed");
  });
});

describe("send", () => {
  it("routes to every step accepting the event's class, up to each step's workers; the rest queue", () => {
    const state = newState();
    transition(state, { kind: "start" });
    const send = (q: string) => transition(state, { kind: "send", event: new Query({ q }), target: undefined });
    expect(executed(send("1"))).toEqual(["search(Query)"]);
    expect(executed(send("2"))).toEqual(["search(Query)"]);
    expect(send("3")).toEqual([]);
    expect(slot(state, "search").busy).toBe(2);
    expect(slot(state, "search").queue?.size).toBe(1);
  });

  it("an event no step accepts is kept for a later wait", () => {
    const state = newState();
    transition(state, { kind: "start" });
    expect(transition(state, { kind: "send", event: new Lone({ n: 1 }), target: undefined })).toEqual([]);
    expect(state.unclaimed).toHaveLength(1);
  });

  it("a StopEvent writes itself to the stream and ends the run with it, answering pending waits with the end", () => {
    const { state, execution } = running();
    transition(state, { kind: "wait", waiter: waiter(Approval, execution), waiterEvent: undefined });
    const stop = new StopEvent({ result: 1 });
    const commands = transition(state, { kind: "send", event: stop, target: undefined });
    expect(kinds(commands)).toEqual(["stream", "end"]);
    const end = commands[1] as Extract<RunCommand, { kind: "end" }>;
    expect(end.outcome).toEqual({ ok: true, stop });
    expect(end.waiters).toHaveLength(1);
    expect(state.phase).toBe("succeeded");
    expect(state.waiters).toEqual([]);
  });

  it("an event sent after the end does nothing", () => {
    const state = newState();
    transition(state, { kind: "fail", error: new Error("x") });
    expect(transition(state, { kind: "send", event: new Query({ q: "x" }), target: undefined })).toEqual([]);
  });
});

describe("stepReturned", () => {
  it("frees the worker and routes the returned event", () => {
    const { state, execution } = running();
    const commands = transition(state, { kind: "stepReturned", execution, output: new Answer({ a: "y" }), attempt: 1 });
    expect(executed(commands)).toEqual(["answer(Answer)"]);
    expect(slot(state, "search").busy).toBe(0);
    expect(execution.ended).toBe(true);
  });

  it("gives the freed worker to the next queued event", () => {
    const state = newState();
    transition(state, { kind: "start" });
    const first = transition(state, { kind: "send", event: new Query({ q: "1" }), target: undefined })[0] as Extract<RunCommand, { kind: "execute" }>;
    transition(state, { kind: "send", event: new Query({ q: "2" }), target: undefined });
    transition(state, { kind: "send", event: new Query({ q: "3" }), target: undefined });
    const commands = transition(state, { kind: "stepReturned", execution: first.execution, output: undefined, attempt: 1 });
    expect(commands.map((c) => c.kind === "execute" && (c.execution.event as Query).q)).toEqual(["3"]);
  });

  it("a queued event's execution has the id given when it was queued, whatever was numbered since", () => {
    const state = newState();
    transition(state, { kind: "start" });
    const send = (event: Query | Done) => transition(state, { kind: "send", event, target: undefined });
    const [first] = send(new Query({ q: "1" })); // search: 1
    send(new Query({ q: "2" })); // search: 2 (its second worker)
    send(new Query({ q: "3" })); // queued: 3
    send(new Done({ n: 1 })); // collect: 4
    send(new Query({ q: "4" })); // queued: 5
    send(new Query({ q: "5" })); // queued: 6
    send(new Done({ n: 2 })); // queued for collect: 7
    send(new Query({ q: "6" })); // queued: 8
    const started = startedAfter(state, (first as Extract<RunCommand, { kind: "execute" }>).execution, 4).map(([q, id]) => [q, id]);
    expect(started).toEqual([
      ["3", 3],
      ["4", 5],
      ["5", 6],
      ["6", 8],
    ]);
    expect(slot(state, "collect").queue?.shift()?.id).toBe(7);
  });

  it("a save gives queued events the ids they will execute under, and marks those executions shared", () => {
    const state = newState();
    transition(state, { kind: "start" });
    const send = (event: Query | Done) => transition(state, { kind: "send", event, target: undefined });
    const [first] = send(new Query({ q: "1" })); // search: 1
    send(new Query({ q: "2" })); // search: 2
    send(new Query({ q: "3" })); // queued: 3
    send(new Done({ n: 1 })); // collect: 4
    send(new Query({ q: "4" })); // queued: 5
    const saved = pendingRun(state, "run-1", (e) => `x.${e.id}`);
    expect(saved.queued["search"]?.map((d) => [(d.event as Query).q, d.execution])).toEqual([
      ["3", "x.3"],
      ["4", "x.5"],
    ]);
    send(new Done({ n: 2 })); // queued for collect: 6
    send(new Query({ q: "5" })); // queued after the save, not shared: 7
    const started = startedAfter(state, (first as Extract<RunCommand, { kind: "execute" }>).execution, 3);
    expect(started).toEqual([
      ["3", 3, true],
      ["4", 5, true],
      ["5", 7, false],
    ]);
  });

  it("restored executions and events queued after them leave the queue in order, each with its own id", () => {
    const state = newState();
    transition(state, {
      kind: "restore",
      restored: {
        queued: {
          search: [
            { event: new Query({ q: "saved a" }), execution: "a.7" },
            { event: new Query({ q: "saved b" }), execution: "a.8" },
            { event: new Query({ q: "saved c" }), execution: "a.9" },
          ],
        },
        inFlight: {},
        collected: {},
        unclaimed: [],
      },
    });
    transition(state, { kind: "send", event: new Query({ q: "new" }), target: undefined }); // before the start: queued
    const [a] = transition(state, { kind: "start" });
    const execution = (a as Extract<RunCommand, { kind: "execute" }>).execution;
    const order = [[(execution.event as Query).q, execution.id], ...startedAfter(state, execution, 2).map(([q, id]) => [q, id])];
    expect(order).toEqual([
      ["saved a", "a.7"],
      ["saved c", "a.9"],
      ["new", 1],
    ]);
  });

  it("a value that is not an event fails the run, naming the step and what it returned", () => {
    const { state, execution } = running();
    const [end] = transition(state, { kind: "stepReturned", execution, output: [1], attempt: 1 });
    expect(end?.kind === "end" && !end.outcome.ok && (end.outcome.error as Error).message).toMatch(/Step "search" returned an array, not an event/);
  });

  it("an event nobody takes fails the run with UnhandledEventError; a HumanResponseEvent is kept instead", () => {
    const { state, execution } = running();
    const [end] = transition(state, { kind: "stepReturned", execution, output: new Lone({ n: 1 }), attempt: 1 });
    expect(end?.kind === "end" && !end.outcome.ok && end.outcome.error).toBeInstanceOf(UnhandledEventError);
    const other = running();
    expect(transition(other.state, { kind: "stepReturned", execution: other.execution, output: new Approval({ ok: true }), attempt: 1 })).toEqual([]);
    expect(other.state.unclaimed).toHaveLength(1);
  });

  it("an InputRequiredEvent goes to the stream", () => {
    const { state, execution } = running();
    const asked = new InputRequiredEvent({ prefix: "?" });
    expect(transition(state, { kind: "stepReturned", execution, output: asked, attempt: 1 })).toEqual([{ kind: "stream", event: asked }]);
  });

  it("observed, it tells the step finished with its output", () => {
    const { state, execution } = running();
    const answer = new Answer({ a: "y" });
    const commands = transition(state, { kind: "stepReturned", execution, output: answer, attempt: 1 }, true);
    expect(commands[0]).toEqual({ kind: "observe", change: { kind: "stepFinished", execution, attempt: 1, output: answer } });
  });
});

describe("stepThrew and retrying", () => {
  function answering(extra: Parameters<typeof newState>[0]) {
    const state = newState(extra);
    transition(state, { kind: "start" });
    const [command] = transition(state, { kind: "send", event: new Answer({ a: "x" }), target: undefined });
    return { state, execution: (command as Extract<RunCommand, { kind: "execute" }>).execution };
  }

  it("without a retry policy or a recovery step, fails the run with the error, and the step leaves the in-flight list", () => {
    const { state, execution } = answering({});
    const error = new Error("boom");
    const commands = transition(state, { kind: "stepThrew", execution, error, attempt: 1, elapsed: 0 });
    expect(commands).toEqual([{ kind: "end", outcome: { ok: false, error }, reason: error, waiters: [] }]);
    expect(slot(state, "answer").inFlight.size).toBe(0);
  });

  it("a thrown non-Error becomes a NonErrorThrownError", () => {
    const { state, execution } = answering({});
    const [end] = transition(state, { kind: "stepThrew", execution, error: "nope", attempt: 1, elapsed: 0 });
    expect(end?.kind === "end" && !end.outcome.ok && (end.outcome.error as Error).name).toBe("NonErrorThrownError");
  });

  it("with a retry policy, asks for the next attempt after the policy's delay, until it gives up", () => {
    const { state, execution } = answering({ retry: true });
    expect(transition(state, { kind: "stepThrew", execution, error: new Error("1"), attempt: 1, elapsed: 0 })).toEqual([
      { kind: "retry", execution, attempt: 2, delay: 0.5 },
    ]);
    expect(transition(state, { kind: "retrying", execution, attempt: 2 })).toEqual([]);
    expect(execution.retried).toBe(true);
    expect(execution.attempt).toBe(2);
    expect(kinds(transition(state, { kind: "stepThrew", execution, error: new Error("3"), attempt: 3, elapsed: 1 }))).toEqual(["end"]);
  });

  it("with a recovery step, hands it a StepFailedEvent and the run goes on", () => {
    const { state, execution } = answering({ recover: true });
    const commands = transition(state, { kind: "stepThrew", execution, error: new Error("boom"), attempt: 1, elapsed: 0 });
    expect(executed(commands)).toEqual(["recover(StepFailedEvent)"]);
    const failed = (commands[0] as Extract<RunCommand, { kind: "execute" }>).execution.event as StepFailedEvent;
    expect(failed.step).toBe("answer");
    expect(failed.error).toEqual({ name: "Error", message: "boom" });
    expect(state.recoveries?.get("recover")).toBe(1);
    expect(state.phase).toBe("running");
  });

  it("observed, a failure that ends the run marks the steps still executing as cancelled", () => {
    const { state, execution } = answering({});
    const sibling = transition(state, { kind: "send", event: new Query({ q: "x" }), target: undefined })[0] as Extract<RunCommand, { kind: "execute" }>;
    const changes = transition(state, { kind: "stepThrew", execution, error: new Error("boom"), attempt: 1, elapsed: 0 }, true).flatMap((c) =>
      c.kind === "observe" ? [`${c.change.kind} ${"execution" in c.change ? c.change.execution.slot.step.name : ""}`] : [],
    );
    expect(changes).toEqual(["stepFailed answer", "stepCancelled search"]);
    expect(sibling.execution.ended).toBe(false);
  });

  it("after the run ended, a failure changes nothing", () => {
    const { state, execution } = answering({});
    transition(state, { kind: "fail", error: new Error("first") });
    expect(transition(state, { kind: "stepThrew", execution, error: new Error("late"), attempt: 1, elapsed: 0 })).toEqual([]);
  });
});

describe("wait and waitTimedOut", () => {
  it("a kept event that matches answers at once", () => {
    const { state, execution } = running();
    transition(state, { kind: "send", event: new Approval({ ok: true, id: 1 }), target: undefined });
    const w = waiter(Approval, execution, { id: 1 });
    const commands = transition(state, { kind: "wait", waiter: w, waiterEvent: new InputRequiredEvent({ prefix: "?" }) });
    expect(kinds(commands)).toEqual(["answer"]);
    expect(state.unclaimed).toEqual([]);
    expect(execution.waited?.map((x) => x.order)).toEqual([0]);
  });

  it("otherwise it waits: the step's worker goes to the next queued event, and the question goes to the stream", () => {
    const state = newState();
    transition(state, { kind: "start" });
    const one = transition(state, { kind: "send", event: new Query({ q: "1" }), target: undefined })[0] as Extract<RunCommand, { kind: "execute" }>;
    transition(state, { kind: "send", event: new Query({ q: "2" }), target: undefined });
    transition(state, { kind: "send", event: new Query({ q: "3" }), target: undefined });
    const question = new InputRequiredEvent({ prefix: "?" });
    const commands = transition(state, { kind: "wait", waiter: waiter(Approval, one.execution), waiterEvent: question });
    expect(kinds(commands)).toEqual(["execute", "stream"]);
    expect(state.waiters).toHaveLength(1);
    expect(one.execution.waits).toBe(1);
  });

  it("an answering event goes to the waiter, not to the steps; the waiting step waits for a free worker", () => {
    const state = newState();
    transition(state, { kind: "start" });
    const one = transition(state, { kind: "send", event: new Query({ q: "1" }), target: undefined })[0] as Extract<RunCommand, { kind: "execute" }>;
    const w = waiter(Approval, one.execution);
    transition(state, { kind: "wait", waiter: w, waiterEvent: undefined });
    transition(state, { kind: "send", event: new Query({ q: "2" }), target: undefined });
    transition(state, { kind: "send", event: new Query({ q: "3" }), target: undefined }); // both workers busy now
    const approval = new Approval({ ok: true });
    expect(transition(state, { kind: "send", event: approval, target: undefined })).toEqual([]);
    expect(slot(state, "search").resumes?.size).toBe(1);
    const other = slot(state, "search").inFlight.last as StepExecution;
    const commands = transition(state, { kind: "stepReturned", execution: other, output: undefined, attempt: 1 });
    expect(commands).toEqual([{ kind: "answer", waiter: w, answer: { ok: true, event: approval } }]);
  });

  it("a wait asked after the run ended is answered with an error", () => {
    const { state, execution } = running();
    transition(state, { kind: "fail", error: new Error("x") });
    const [command] = transition(state, { kind: "wait", waiter: waiter(Approval, execution), waiterEvent: undefined });
    expect(command?.kind === "answer" && !command.answer.ok && command.answer.error).toBeInstanceOf(WorkflowRuntimeError);
  });

  it("waitTimedOut answers the waiter with the error; a waiter answered meanwhile is left alone", () => {
    const { state } = running();
    const w = waiter(Approval);
    transition(state, { kind: "wait", waiter: w, waiterEvent: undefined });
    const error = new WorkflowTimeoutError("late");
    expect(transition(state, { kind: "waitTimedOut", waiter: w, error })).toEqual([{ kind: "answer", waiter: w, answer: { ok: false, error } }]);
    expect(state.waiters).toEqual([]);
    expect(transition(state, { kind: "waitTimedOut", waiter: w, error })).toEqual([]);
  });
});

describe("timedOut and fail", () => {
  it("timedOut fails the run with a WorkflowTimeoutError naming the active steps and what is waited for", () => {
    const { state, execution } = running();
    transition(state, { kind: "wait", waiter: waiter(Approval, execution, { id: 7 }), waiterEvent: undefined });
    const [end] = transition(state, { kind: "timedOut", workflow: "Test", seconds: 5 });
    const error = end?.kind === "end" && !end.outcome.ok ? (end.outcome.error as WorkflowTimeoutError) : undefined;
    expect(error).toBeInstanceOf(WorkflowTimeoutError);
    expect(error?.message).toBe(
      'Workflow "Test" timed out after 5 seconds. Active steps: search. Waiting for: Approval with {"id":7} (send it with handler.ctx.sendEvent).',
    );
    expect(error?.activeSteps).toEqual(["search"]);
  });

  it("fail ends the run once", () => {
    const state = newState();
    const input: RunInput = { kind: "fail", error: new Error("x") };
    expect(kinds(transition(state, input))).toEqual(["end"]);
    expect(transition(state, input)).toEqual([]);
  });
});

describe("idle: nothing queued or executing, only events from outside can move the run on", () => {
  const checks = (commands: readonly RunCommand[]) => commands.flatMap((c) => (c.kind === "checkIdle" ? [c.period] : []));
  const told = (commands: readonly RunCommand[]) => commands.filter((c) => c.kind === "observe" && c.change.kind === "runIdle").length;

  it("a run that is not running is not idle", () => {
    const state = newState();
    expect(idle(state)).toBe(false);
    transition(state, { kind: "schedule", event: new StartEvent({}) });
    expect(idle(state)).toBe(false);
    transition(state, { kind: "fail", error: new Error("x") });
    expect(idle(state)).toBe(false);
  });

  it("a step executing, or an event queued for one, keeps a run from being idle", () => {
    const { state, execution } = running();
    expect(idle(state)).toBe(false);
    transition(state, { kind: "send", event: new Query({ q: "2" }), target: undefined });
    transition(state, { kind: "send", event: new Query({ q: "3" }), target: undefined }); // queued: both workers busy
    transition(state, { kind: "stepReturned", execution, output: undefined, attempt: 1 });
    expect(idle(state)).toBe(false);
  });

  it("a running run with nothing to do is idle, with or without a step waiting in waitForEvent", () => {
    const { state, execution } = running();
    transition(state, { kind: "wait", waiter: waiter(Approval, execution), waiterEvent: undefined });
    expect(state.waiters).toHaveLength(1);
    expect(idle(state)).toBe(true);
    const other = running();
    transition(other.state, { kind: "stepReturned", execution: other.execution, output: undefined, attempt: 1 });
    expect(other.state.waiters).toHaveLength(0);
    expect(idle(other.state)).toBe(true);
  });

  it("one step executing is enough: a wait elsewhere does not make the run idle", () => {
    const { state, execution } = running();
    const [answering] = transition(state, { kind: "send", event: new Answer({ a: "x" }), target: undefined });
    transition(state, { kind: "wait", waiter: waiter(Approval, execution), waiterEvent: undefined });
    expect(idle(state)).toBe(false);
    transition(state, { kind: "stepReturned", execution: (answering as Extract<RunCommand, { kind: "execute" }>).execution, output: undefined, attempt: 1 });
    expect(idle(state)).toBe(true);
  });

  it("observed, a step that gives back the last busy worker asks for an idle check; unobserved, nothing is checked", () => {
    const question = new InputRequiredEvent({ prefix: "?" });
    const observed = running();
    const commands = transition(observed.state, { kind: "stepReturned", execution: observed.execution, output: question, attempt: 1 }, true);
    expect(kinds(commands)).toEqual(["observe", "stream", "checkIdle"]);
    expect(checks(commands)).toEqual([1]);
    const unobserved = running();
    expect(transition(unobserved.state, { kind: "stepReturned", execution: unobserved.execution, output: question, attempt: 1 })).toEqual([
      { kind: "stream", event: question },
    ]);
  });

  it("a wait that frees the last busy worker asks for an idle check after its question; a wait answered at once does not", () => {
    const { state, execution } = running();
    const question = new InputRequiredEvent({ prefix: "?" });
    const commands = transition(state, { kind: "wait", waiter: waiter(Approval, execution), waiterEvent: question }, true);
    expect(kinds(commands)).toEqual(["stream", "checkIdle"]);
    const kept = running();
    transition(kept.state, { kind: "send", event: new Approval({ ok: true }), target: undefined });
    expect(kinds(transition(kept.state, { kind: "wait", waiter: waiter(Approval, kept.execution), waiterEvent: question }, true))).toEqual(["answer"]);
  });

  it("no idle check while work remains, nor when the step ends the run", () => {
    const { state, execution } = running();
    transition(state, { kind: "send", event: new Query({ q: "2" }), target: undefined });
    expect(checks(transition(state, { kind: "stepReturned", execution, output: undefined, attempt: 1 }, true))).toEqual([]);
    const stopping = running();
    transition(stopping.state, { kind: "wait", waiter: waiter(Approval), waiterEvent: undefined }); // a wait from outside the steps
    const commands = transition(
      stopping.state,
      { kind: "stepReturned", execution: stopping.execution, output: new StopEvent({ result: 1 }), attempt: 1 },
      true,
    );
    expect(kinds(commands)).toEqual(["observe", "stream", "end"]);
  });

  it("the idle check tells the observers once per idle period, and not if a step has run since", () => {
    const { state, execution } = running();
    const w = waiter(Approval, execution);
    const [period] = checks(transition(state, { kind: "wait", waiter: w, waiterEvent: undefined }, true));
    expect(told(transition(state, { kind: "idleCheck", period: period as number }, true))).toBe(1);
    // The answer comes: the step continues, asks again, and the run is idle a second time.
    expect(kinds(transition(state, { kind: "send", event: new Approval({ ok: true }), target: undefined }, true))).toEqual(["answer"]);
    expect(told(transition(state, { kind: "idleCheck", period: period as number }, true))).toBe(0); // executing again
    const [second] = checks(transition(state, { kind: "wait", waiter: waiter(Approval, execution), waiterEvent: undefined }, true));
    expect(second).toBe((period as number) + 1);
    expect(told(transition(state, { kind: "idleCheck", period: period as number }, true))).toBe(0); // a check of the period before
    expect(told(transition(state, { kind: "idleCheck", period: second as number }, true))).toBe(1);
    transition(state, { kind: "fail", error: new Error("x") });
    expect(transition(state, { kind: "idleCheck", period: second as number }, true)).toEqual([]);
  });

  it("a restored run that starts with nothing to execute (its question asked, its answer not come) asks for an idle check", () => {
    const state = newState();
    transition(state, { kind: "restore", restored: { queued: {}, inFlight: {}, collected: {}, unclaimed: [] } });
    expect(kinds(transition(state, { kind: "start" }, true))).toEqual(["checkIdle"]);
    const fresh = newState();
    transition(fresh, { kind: "schedule", event: new StartEvent({}) });
    expect(kinds(transition(fresh, { kind: "start" }, true))).toEqual(["execute"]);
  });
});

describe("collect and save", () => {
  it("collects a set of any length in O(1) per event, from a new array at each call", () => {
    const state = newState();
    transition(state, { kind: "start" });
    const executions = Array.from({ length: 3 }, (_, n) => transition(state, { kind: "send", event: new Done({ n }), target: undefined }));
    const execution = (executions[0]?.[0] as Extract<RunCommand, { kind: "execute" }>).execution;
    expect(collect(state, execution, new Done({ n: 0 }), Array(3).fill(Done), undefined)).toBeNull();
    expect(collect(state, execution, new Done({ n: 1 }), Array(3).fill(Done), undefined)).toBeNull();
    expect(collect(state, execution, new Done({ n: 2 }), Array(3).fill(Done), undefined)?.map((d) => (d as Done).n)).toEqual([0, 1, 2]);
    expect(state.collected?.get("collect")?.get("Done|Done|Done")?.size).toBe(0);
  });

  it("a save is the state read back: queued and in-flight executions by step, kept events, waiters", () => {
    const { state, execution } = running();
    transition(state, { kind: "send", event: new Lone({ n: 1 }), target: undefined });
    transition(state, { kind: "wait", waiter: waiter(Approval, execution, { id: 2 }), waiterEvent: undefined });
    const saved = pendingRun(state, "run-1", (e) => `x.${e.id}`);
    expect(saved.inFlight).toEqual({ search: [{ event: execution.event, execution: "x.1" }] });
    expect(saved.unclaimed).toEqual([new Lone({ n: 1 })]);
    expect(saved.waiters).toEqual([{ type: "Approval", requirements: { id: 2 } }]);
    expect(execution.shared).toBe("x.1"); // the id it was saved under: the executions it leads to get ids made from it
  });
});
