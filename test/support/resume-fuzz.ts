/**
 * A deterministic fuzz of save and resume for the agent (test/workflows/resume-fuzz.test.ts): one
 * trial saves a scenario's run at one point of its timeline (a microtask count, or an event of its
 * stream) and resumes the saved text twice; the test compares each end with the uninterrupted run.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../../events/index.ts";
import { Context } from "../../src/index.ts";
import type { ContextJSON } from "../../src/index.ts";
import type { ScriptedReply, ScriptedRequest } from "../../src/llm/scripted-llm.ts";
import type { AgentInput, FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

/** One trial's tools and their counters, fresh for each trial; `agent()` makes an agent from the same options each time (as another process would). */
export interface FuzzWorld {
  agent(): FunctionCallingAgent<unknown>;
  /** Real invocations of each tool, original attempt and resumes together. */
  readonly invocations: Record<string, number>;
}

/** An agent run to save and resume. */
export interface FuzzScenario {
  readonly name: string;
  world(): FuzzWorld;
  readonly input: AgentInput;
  /** The human's answer to every approval question. */
  readonly approve?: boolean;
  /** Moments (as {@link moment} writes them) the sweep must reach, besides mid-stream and mid-turn. */
  readonly covers?: readonly RegExp[];
  /** Saved only while the original attempt goes on to its end (not cancelled). */
  readonly onlyKeptRunning?: boolean;
  /** Turns run to their end on the context before the fuzzed one (a conversation continued). */
  readonly before?: readonly AgentInput[];
}

/** How a run ended, and what its context keeps (memory without ids and times, sources, usage). */
export interface FuzzEnd {
  readonly outcome: unknown;
  readonly store: unknown;
}

/**
 * Where the original attempt is saved: after `microtasks` microtasks, or at its `event`th stream
 * event. `keepRunning`: the original is not cancelled but runs to its end before the resumes
 * start (a process that resumes a run still alive elsewhere). `thenAt`: the first resume is
 * itself saved after that many microtasks and cancelled, and the second resumes that save.
 */
export type SavePoint = ({ readonly microtasks: number } | { readonly event: number }) & {
  readonly keepRunning?: boolean;
  readonly thenAt?: number;
};

type Handler = ReturnType<FunctionCallingAgent<unknown>["run"]>;

/** The messages after the newest question of the request (a user message that is not a tool result): what this turn added. */
export function turnOf(request: ScriptedRequest): ChatMessage[] {
  const messages = request.messages;
  let i = messages.length - 1;
  while (i >= 0 && !(messages[i]?.role === "user" && !(messages[i]?.options as { toolResult?: unknown } | undefined)?.toolResult)) i--;
  return messages.slice(i + 1);
}

/** The text of the tool results in `messages`, one per result, in order. */
export function resultsIn(messages: readonly ChatMessage[]): string[] {
  return messages.filter((m) => (m.options as { toolResult?: unknown } | undefined)?.toolResult).map((m) => String(m.content));
}

/** A reply streamed in several deltas, so that saves land mid-stream. */
export function streamed(text: string): ScriptedReply {
  return { text: text.match(/.{1,6}/gs) ?? [text] };
}

function normalise(store: unknown): unknown {
  const s = store as { memory?: { value?: { messages?: Record<string, unknown>[] } }; [key: string]: unknown };
  const messages = s.memory?.value?.messages?.map(({ id: _id, createdAt: _createdAt, ...rest }) => rest);
  // The structured output's retry count names the run it belongs to: each run has its own id.
  const retries = s["structured output retries"] as { run?: string } | undefined;
  return { ...s, memory: messages, ...(retries ? { "structured output retries": { ...retries, run: typeof retries.run } } : {}) };
}

async function ended(handler: Handler): Promise<FuzzEnd> {
  const outcome = await handler.then(
    (result) => ({ response: result.response, sources: result.sources, usage: result.usage, object: result.object }),
    (error: unknown) => ({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
  );
  return { outcome, store: normalise((handler.ctx.toJSON() as ContextJSON).store) };
}

/** Streams `handler`'s events, answering each approval question with `approve`; `onEvent` may stop it first. */
async function drive(handler: Handler, approve: boolean, onEvent?: (index: number) => boolean): Promise<void> {
  let index = 0;
  for await (const ev of handler.streamEvents()) {
    if (onEvent?.(index++)) return;
    if (ev instanceof ToolApprovalRequestEvent) handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: approve }));
  }
}

/** The fuzzed turn's handler (in an object: a handler is a thenable, which an async function's result would be awaited for). */
async function start(scenario: FuzzScenario, agent: FunctionCallingAgent<unknown>): Promise<{ handler: Handler }> {
  const ctx = new Context(agent);
  for (const input of scenario.before ?? []) {
    const turn = agent.run(input, { ctx });
    await Promise.all([drive(turn, scenario.approve ?? true), turn]);
  }
  return { handler: agent.run(scenario.input, { ctx }) };
}

/** The uninterrupted run, in a fresh world: how it ends, and how often each tool ran. */
export async function uninterrupted(scenario: FuzzScenario): Promise<FuzzEnd & { invocations: Record<string, number> }> {
  const world = scenario.world();
  const { handler } = await start(scenario, world.agent());
  const before = { ...world.invocations };
  const [, end] = await Promise.all([drive(handler, scenario.approve ?? true), ended(handler)]);
  return { ...end, invocations: since(before, world.invocations) };
}

/**
 * One trial: the original attempt saved at `at` and cancelled, then two resumes of the saved
 * text (the first in a new agent, the second in the original agent instance). `undefined`
 * when the run had ended before `at`.
 */
export async function trial(
  scenario: FuzzScenario,
  at: SavePoint,
): Promise<{ resumes: FuzzEnd[]; invocations: Record<string, number>; saved: string } | undefined> {
  const world = scenario.world();
  const original = world.agent();
  const { handler } = await start(scenario, original);
  const before = { ...world.invocations }; // the turns before this one ran their tools once: not this turn's
  let saved: string | undefined;
  const save = () => {
    saved = JSON.stringify(handler.ctx.toJSON());
    if (!at.keepRunning) handler.cancel();
  };
  const approve = scenario.approve ?? true;
  if ("event" in at) {
    await drive(handler, approve, (index) => (index === at.event ? (save(), !at.keepRunning) : false));
  } else {
    const driven = drive(handler, approve);
    for (let i = 0; i < at.microtasks; i++) await Promise.resolve();
    save();
    await driven.catch(() => undefined);
  }
  // A run kept running must end as the uninterrupted one, too.
  const resumes: FuzzEnd[] = at.keepRunning ? [await ended(handler)] : [];
  await handler.catch(() => undefined);
  if (saved === undefined || !(JSON.parse(saved) as ContextJSON).running) return undefined;
  let from = saved;
  for (const [i, agent] of [world.agent(), original].entries()) {
    const resumed = agent.run(undefined, { ctx: Context.fromJSON(agent, from) });
    const driven = drive(resumed, approve);
    if (at.thenAt !== undefined && i === 0) {
      for (let i = 0; i < at.thenAt; i++) await Promise.resolve();
      const again = JSON.stringify(resumed.ctx.toJSON());
      resumed.cancel();
      await Promise.all([driven.catch(() => undefined), resumed.catch(() => undefined)]);
      if ((JSON.parse(again) as ContextJSON).running) from = again;
      else resumes.push(await ended(resumed)); // the resume ended before its save
      continue;
    }
    const [, end] = await Promise.all([driven, ended(resumed)]);
    resumes.push(end);
  }
  return { resumes, invocations: since(before, world.invocations), saved };
}

/** Where a run stood when it was saved: the steps queued and in flight, and the state of each `ctx.once` record. */
export function moment(saved: string): string {
  const run = (JSON.parse(saved) as ContextJSON).run as {
    queued: Record<string, unknown[]>;
    inFlight: Record<string, unknown[]>;
    waiters: unknown[];
    once?: Record<string, Record<string, { state: string }>>;
  } | null;
  if (!run) return "ended";
  const steps = (what: Record<string, unknown[]>) => Object.entries(what).map(([name, events]) => `${name}×${events.length}`);
  const records = Object.values(run.once ?? {}).flatMap((byName) => Object.entries(byName).map(([name, record]) => `${name}:${record.state}`));
  return [
    `queued ${steps(run.queued).join(",")}`,
    `in flight ${steps(run.inFlight).join(",")}`,
    `waiters ${run.waiters.length}`,
    `once ${records.sort().join(",")}`,
  ].join("; ");
}

function since(before: Record<string, number>, now: Record<string, number>): Record<string, number> {
  const invocations: Record<string, number> = {};
  for (const [name, count] of Object.entries(now)) invocations[name] = count - (before[name] ?? 0);
  return invocations;
}
