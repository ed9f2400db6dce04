/**
 * Save and resume, fuzzed: each scenario's run is saved at every microtask of its timeline and
 * at every event of its stream, and resumed twice from the saved text (a new agent, as another
 * process would make, then the original instance). The original attempt is cancelled at the save
 * (a process that stopped), or goes on to its end (a run another process resumed while it was
 * still alive); or the first resume is itself saved and cancelled, and the second resumes that.
 * Every resume must end as the uninterrupted run does (response, sources, usage, structured
 * object or error), with the same memory, and each tool that is not safe to repeat must run as
 * often in all (original attempt and resumes) as in the uninterrupted run. An unsafe call cut off
 * mid-way by a cancel is in doubt and not made again (docs/agent.md), so unsafe tools that take
 * time are saved mid-call only in runs that go on; the others return at once.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import type { ScriptedReply, ScriptedRequest } from "../../src/llm/scripted-llm.ts";
import { annotateTool, tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent, RESPOND_TOOL } from "../../workflows/function-calling-agent.ts";
import type { FunctionCallingAgentOptions } from "../../workflows/function-calling-agent.ts";
import { moment, resultsIn, streamed, trial, turnOf, uninterrupted } from "../support/resume-fuzz.ts";
import type { FuzzScenario, FuzzWorld, SavePoint } from "../support/resume-fuzz.ts";

/** Fresh tools counting their real invocations. */
function tools() {
  const invocations: Record<string, number> = { lookup: 0, send_email: 0, charge: 0, explode: 0, fire_employee: 0, book_room: 0 };
  const lookup = annotateTool(
    tool({
      name: "lookup",
      description: "Find an employee.",
      parameters: z.object({ name: z.string() }),
      execute: async ({ name }) => {
        invocations.lookup = (invocations.lookup ?? 0) + 1;
        for (let i = 0; i < 3; i++) await Promise.resolve(); // takes a few microtasks: saves land mid-call
        return `${name} is in HR`;
      },
    }),
    { readOnlyHint: true },
  );
  const sendEmail = tool({
    name: "send_email",
    description: "Send an email.",
    parameters: z.object({ to: z.string() }),
    execute: ({ to }) => ((invocations.send_email = (invocations.send_email ?? 0) + 1), `sent to ${to}`),
  });
  const charge = tool({
    name: "charge",
    description: "Charge a card.",
    parameters: z.object({ cents: z.number() }),
    execute: ({ cents }) => ((invocations.charge = (invocations.charge ?? 0) + 1), { id: `ch_${cents}`, cents }),
  });
  const explode = tool({
    name: "explode",
    description: "Always fails.",
    parameters: z.object({}),
    execute: () => {
      invocations.explode = (invocations.explode ?? 0) + 1;
      throw new Error("the reactor is offline");
    },
  });
  const book = tool({
    name: "book_room",
    description: "Book a meeting room.",
    parameters: z.object({ room: z.string() }),
    execute: async ({ room }) => {
      invocations.book_room = (invocations.book_room ?? 0) + 1;
      for (let i = 0; i < 3; i++) await Promise.resolve(); // takes a few microtasks: saves land mid-call
      return `booked ${room}`;
    },
  });
  const fire = tool({
    name: "fire_employee",
    description: "Remove an employee.",
    parameters: z.object({ id: z.number() }),
    execute: ({ id }) => ((invocations.fire_employee = (invocations.fire_employee ?? 0) + 1), `employee ${id} removed`),
  });
  return { invocations, all: [lookup, sendEmail, charge, explode, fire, book] };
}

const NOT_REPEATABLE = ["send_email", "charge", "explode", "fire_employee", "book_room"];

/** A model that answers from the conversation alone (every resume that asks it again gets the same reply). */
function world(reply: (request: ScriptedRequest) => ScriptedReply, options: Partial<FunctionCallingAgentOptions<unknown>> = {}): () => FuzzWorld {
  return () => {
    const { invocations, all } = tools();
    return {
      invocations,
      agent: () => new FunctionCallingAgent<unknown>({ llm: new ScriptedLLM((request) => reply(request)), tools: all, timeout: null, ...options }),
    };
  };
}

/** The tool calls first, then an answer that quotes their results. */
const callsThenAnswer =
  (calls: ScriptedReply["toolCalls"]) =>
  (request: ScriptedRequest): ScriptedReply => {
    const results = resultsIn(turnOf(request));
    return results.length === 0 ? { toolCalls: calls } : streamed(`Done: ${results.join(" | ")}.`);
  };

const Receipt = z.object({ id: z.string(), cents: z.number() });

const scenarios: FuzzScenario[] = [
  {
    name: "three calls in one reply (two unsafe to repeat, one read-only)",
    input: { input: "Find Ada, email her and charge 500." },
    covers: [/call l1:started/], // saved while the look-up ran, the other two done
    world: world(
      callsThenAnswer([
        { id: "l1", name: "lookup", input: { name: "Ada" } },
        { id: "e1", name: "send_email", input: { to: "ada@example.com" } },
        { id: "c1", name: "charge", input: { cents: 500 } },
      ]),
    ),
  },
  {
    // Saved mid-call and cancelled, an unsafe call is in doubt and not made again (docs/agent.md): only saves the run outlives are tried.
    name: "an unsafe call that takes a few microtasks, saved while the run goes on",
    input: { input: "Book room 4." },
    onlyKeptRunning: true,
    covers: [/call b1:started/],
    world: world(callsThenAnswer([{ id: "b1", name: "book_room", input: { room: "4" } }])),
  },
  {
    name: "a tool that throws, then the model answers",
    input: { input: "Blow it up." },
    world: world(callsThenAnswer([{ id: "x1", name: "explode", input: {} }])),
  },
  ...[true, false].map((approve): FuzzScenario => ({
    name: `a call a human must approve, ${approve ? "approved" : "denied"}, next to a look-up`,
    input: { input: "Fire Lawson." },
    approve,
    world: world(
      callsThenAnswer([
        { id: "l1", name: "lookup", input: { name: "Lawson" } },
        { id: "f1", name: "fire_employee", input: { id: 7 } },
      ]),
      { needsApproval: ["fire_employee"] },
    ),
  })),
  {
    name: "responseFormat: a call, a refused answer, then a good one",
    input: { input: "Charge 250 and give me the receipt." },
    world: world(
      (request) => {
        const turn = turnOf(request);
        if (turn.length === 0) return { toolCalls: [{ id: "c1", name: "charge", input: { cents: 250 } }] };
        const refused = turn.some((m) => (m.options as { toolResult?: { id: string } } | undefined)?.toolResult?.id === "r1");
        return {
          toolCalls: [{ id: refused ? "r2" : "r1", name: RESPOND_TOOL, input: refused ? { id: "ch_250", cents: 250 } : { id: "ch_250", cents: "250" } }],
        };
      },
      { responseFormat: Receipt },
    ),
  },
  {
    name: "responseFormat: refused twice, the run fails",
    input: { input: "Charge 250 and give me the receipt." },
    world: world(
      (request) => {
        // Prose each time: the feedback asking for the respond tool is a user message, so the whole request is read here.
        const results = resultsIn(request.messages);
        if (results.length === 0) return { toolCalls: [{ id: "c1", name: "charge", input: { cents: 250 } }] };
        return streamed(`The receipt is ch_250, try ${request.messages.length}.`);
      },
      { responseFormat: Receipt },
    ),
  },
  {
    name: "a second turn on the same context, saved mid-turn",
    before: [{ input: "Email bob." }],
    input: { input: "Now email carol, and charge 100." },
    world: world((request): ScriptedReply => {
      const turn = turnOf(request);
      const question = String(request.messages[request.messages.length - 1 - turn.length]?.content);
      if (turn.length > 0) return streamed(`Done: ${resultsIn(turn).join(" | ")} (history of ${request.messages.length}).`);
      return question.includes("carol")
        ? {
            toolCalls: [
              { id: "e2", name: "send_email", input: { to: "carol" } },
              { id: "c2", name: "charge", input: { cents: 100 } },
            ],
          }
        : { toolCalls: [{ id: "e1", name: "send_email", input: { to: "bob" } }] };
    }),
  },
];

/** The save points of one way of saving, from the first until the run ends before the save. */
async function sweep(scenario: FuzzScenario, point: (n: number) => SavePoint) {
  const trials = [];
  for (let n = 0; ; n++) {
    const at = point(n);
    const done = await trial(scenario, at);
    if (!done) return trials;
    trials.push({ at, ...done });
  }
}

describe("a run saved at any moment and resumed twice ends as the uninterrupted run", () => {
  for (const scenario of scenarios) {
    it(scenario.name, async () => {
      const expected = await uninterrupted(scenario);
      const notRepeatable = (counts: Record<string, number>) => Object.fromEntries(NOT_REPEATABLE.map((name) => [name, counts[name]]));
      const cancelled: Record<string, (n: number) => SavePoint> = {
        microtask: (n) => ({ microtasks: n }),
        event: (n) => ({ event: n }),
        // The first resume saved again after a few microtasks (spread over 0–44), the second resuming that.
        "microtask, the resume saved again": (n) => ({ microtasks: n, thenAt: (n * 7) % 45 }),
      };
      const ways: Record<string, (n: number) => SavePoint> = {
        ...(scenario.onlyKeptRunning ? {} : cancelled),
        "microtask, original kept running": (n) => ({ microtasks: n, keepRunning: true }),
        "event, original kept running": (n) => ({ event: n, keepRunning: true }),
      };
      const moments = new Set<string>();
      const counts: Record<string, number> = {};
      for (const [way, point] of Object.entries(ways)) {
        const trials = await sweep(scenario, point);
        counts[way] = trials.length;
        for (const { at, saved, resumes, invocations } of trials) {
          moments.add(moment(saved));
          for (const [i, resume] of resumes.entries()) {
            expect({ at, resume: i + 1, outcome: resume.outcome }).toEqual({ at, resume: i + 1, outcome: expected.outcome });
            expect({ at, resume: i + 1, store: resume.store }).toEqual({ at, resume: i + 1, store: expected.store });
          }
          expect({ at, invocations: notRepeatable(invocations) }).toEqual({ at, invocations: notRepeatable(expected.invocations) });
        }
      }
      // The sweep reached the moments that matter: mid-stream, the reply recorded before its step returned, the tool turn under way.
      const reached = (pattern: RegExp) => [...moments].some((m) => pattern.test(m));
      for (const pattern of [/reply:started/, /reply:finished/, /turn:finished/, ...(scenario.covers ?? [])])
        expect({ pattern, reached: reached(pattern) }).toEqual({ pattern, reached: true });
      for (const [way, count] of Object.entries(counts)) expect({ way, enough: count > 3 }).toEqual({ way, enough: true });
    });
  }
});
