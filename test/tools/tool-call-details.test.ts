/**
 * A tool's function is handed the call it runs for (id, name, idempotency key, signal) as an
 * argument, which stays its own across `await`s even while other calls of the same tool run.
 */
import { FunctionTool } from "@llamaindex/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { currentToolCall, tool } from "../../src/tools/tool.ts";
import type { ToolCallDetails } from "../../src/tools/tool.ts";
import { runToolCall } from "../../src/tools/tool-calls.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { gate } from "../support/gate.ts";

/** A tool whose calls each wait until `count` calls have started, then report the key they were handed. */
function keyReporter(count: number) {
  const started: string[] = [];
  const allStarted = gate();
  const seen: { id: string | undefined; keyAtStart: string | undefined; keyAfterAwait: string | undefined }[] = [];
  const reporter = tool({
    name: "charge",
    description: "Charge a card.",
    parameters: z.object({ cents: z.number() }),
    execute: async ({ cents }, _bound, call) => {
      const keyAtStart = currentToolCall()?.idempotencyKey;
      started.push(String(cents));
      if (started.length === count) allStarted.open();
      await allStarted.promise; // every other call has started (and set the process's slot) by now
      seen.push({ id: call?.id, keyAtStart, keyAfterAwait: call?.idempotencyKey });
      return `charged ${cents}`;
    },
  });
  return { reporter, seen };
}

describe("the call a tool's function is handed", () => {
  it("is its own after an await, while another call of the same tool runs", async () => {
    const { reporter, seen } = keyReporter(2);
    const results = await Promise.all([
      runToolCall({ id: "c1", name: "charge", input: { cents: 100 } }, [reporter], { idempotencyKey: "key-1" }),
      runToolCall({ id: "c2", name: "charge", input: { cents: 200 } }, [reporter], { idempotencyKey: "key-2" }),
    ]);
    expect(results.map((r) => r.content)).toEqual(["charged 100", "charged 200"]);
    expect(seen).toEqual([
      { id: "c1", keyAtStart: "key-1", keyAfterAwait: "key-1" },
      { id: "c2", keyAtStart: "key-2", keyAfterAwait: "key-2" },
    ]);
  });

  it("carries the agent's idempotency keys to parallel calls of one tool, one key each", async () => {
    const { reporter, seen } = keyReporter(2);
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { id: "a", name: "charge", input: { cents: 100 } },
          { id: "b", name: "charge", input: { cents: 200 } },
        ],
      },
      { text: "Charged twice." },
    ]);
    await new FunctionCallingAgent({ llm, tools: [reporter] }).run({ input: "Charge 100 and 200." });
    expect(seen.map((s) => s.id)).toEqual(["a", "b"]);
    for (const s of seen) expect(s.keyAfterAwait).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.map((s) => s.keyAfterAwait)).toEqual(seen.map((s) => s.keyAtStart));
    expect(new Set(seen.map((s) => s.keyAfterAwait)).size).toBe(2);
  });

  it("comes after the argument given to bind(), which a bound tool still gets", async () => {
    const calls: [string, string | undefined, string | undefined][] = [];
    const transfer = tool({
      name: "transfer",
      description: "Send money.",
      parameters: z.object({ amount: z.number() }),
      execute: async ({ amount }, account?: { id: string }, call?: ToolCallDetails) => {
        await Promise.resolve();
        calls.push([`${amount} from ${account?.id}`, call?.id, call?.idempotencyKey]);
        return "sent";
      },
    });
    const bound = transfer.bind({ id: "acct-1" });
    await runToolCall({ id: "t1", name: "transfer", input: { amount: 5 } }, [bound], { idempotencyKey: "k" });
    expect(calls).toEqual([["5 from acct-1", "t1", "k"]]);
  });

  it("is absent when the tool is called directly, which still parses the input with the tool's schema", async () => {
    const received: unknown[] = [];
    const shout = tool({
      name: "shout",
      description: "Shout.",
      parameters: z.object({ text: z.string().default("hi") }),
      execute: ({ text }, _bound, call) => (received.push(call), text.toUpperCase()),
    });
    expect(await shout.call({} as { text: string })).toBe("HI");
    expect(received).toEqual([undefined]);
  });

  it("reaches a LlamaIndex tool made elsewhere only through currentToolCall(), read before its first await", async () => {
    const keys: (string | undefined)[] = [];
    const lookup = FunctionTool.from(
      async ({ name }: { name: string }) => {
        keys.push(currentToolCall()?.idempotencyKey);
        await Promise.resolve();
        return `found ${name}`;
      },
      { name: "lookup", description: "Find a person.", parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
    );
    const source = await runToolCall({ id: "l1", name: "lookup", input: { name: "Ada" } }, [lookup], { idempotencyKey: "k-lookup" });
    expect(source.content).toBe("found Ada");
    expect(keys).toEqual(["k-lookup"]);
  });

  it("reaches a BaseTool of your own as the second argument of its call", async () => {
    const seen: (string | undefined)[] = [];
    const own = {
      metadata: { name: "ping", description: "Ping.", parameters: { type: "object", properties: {} } },
      call: async (_input: unknown, call?: ToolCallDetails) => {
        await Promise.resolve();
        seen.push(call?.idempotencyKey);
        return "pong";
      },
    };
    await runToolCall({ id: "p1", name: "ping", input: {} }, [own], { idempotencyKey: "k-ping" });
    expect(seen).toEqual(["k-ping"]);
  });

  it("has a signal that aborts when the call runs past its timeout, so the tool can stop its work", async () => {
    const reasons: unknown[] = [];
    const slow = tool({
      name: "slow",
      description: "Never answers on its own.",
      parameters: z.object({}),
      execute: (_input, _bound, call) =>
        new Promise<string>((resolve) => {
          call?.signal?.addEventListener("abort", () => {
            reasons.push((call.signal?.reason as Error).name);
            resolve("stopped");
          });
        }),
    });
    const source = await runToolCall({ id: "s1", name: "slow", input: {} }, [slow], { timeout: 0.01 });
    expect(source.content).toBe("Encountered error in tool call: slow did not finish within 0.01 seconds.");
    expect(reasons).toEqual(["TimeoutError"]);
  });

  it("has a signal that aborts with the run's reason when the run ends, and stays quiet for a call that finished", async () => {
    const run = new AbortController();
    const started = gate();
    const signals: AbortSignal[] = [];
    const wait = tool({
      name: "wait",
      description: "Waits for the run to end, or answers at once.",
      parameters: z.object({ hang: z.boolean() }),
      execute: async ({ hang }, _bound, call) => {
        const signal = call?.signal as AbortSignal;
        signals.push(signal);
        if (!hang) return "done";
        started.open();
        await new Promise((resolve) => signal.addEventListener("abort", resolve));
        return "stopped";
      },
    });
    const done = await runToolCall({ id: "w0", name: "wait", input: { hang: false } }, [wait], { signal: run.signal });
    const hanging = runToolCall({ id: "w1", name: "wait", input: { hang: true } }, [wait], { signal: run.signal });
    await started.promise;
    run.abort(new Error("cancelled by the user"));
    expect((await hanging).content).toBe("Encountered error in tool call: wait was stopped: the run ended.");
    expect(done.content).toBe("done");
    expect(signals.map((s) => s.aborted)).toEqual([false, true]);
    expect((signals[1]?.reason as Error).message).toBe("cancelled by the user");
  });

  it("comes with arguments checked once: a refinement that asks a service runs once a call", async () => {
    let asked = 0;
    const book = tool({
      name: "book",
      description: "Book a room.",
      parameters: z.object({ room: z.string().refine((room) => (asked++, room.startsWith("R")), "no such room") }),
      execute: ({ room }, _bound, call) => `${room} booked for ${call?.id}`,
    });
    expect((await runToolCall({ id: "b1", name: "book", input: { room: "R12" } }, [book])).content).toBe("R12 booked for b1");
    expect(asked).toBe(1);
  });

  it("still goes through a tool's call that was replaced, say to log", async () => {
    const logged: string[] = [];
    const add = tool({ name: "add", description: "Add.", parameters: z.object({ x: z.number(), y: z.number() }), execute: ({ x, y }) => x + y });
    const call = add.call;
    add.call = (input) => (logged.push(JSON.stringify(input)), call(input));
    expect((await runToolCall({ id: "a1", name: "add", input: { x: 1, y: 2 } }, [add])).content).toBe("3");
    expect(logged).toEqual(['{"x":1,"y":2}']);
  });
});
