/**
 * The agent's scenarios every provider's model class must pass against its provider's local wire
 * server: the notebook question in two tool rounds, parallel calls answered in order, memory
 * across runs, an approval that survives save and restore (the call runs once), and the usage
 * of every call; and structured output (`responseFormat`): the answer in the schema after a tool
 * round, streamed, an answer the schema refuses sent back once, a second one a typed error, and
 * a run continued after save and restore. Each provider's test file calls {@link describeProvider} with how to start its
 * server and make its model.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolCallLLM } from "@llamaindex/core/llms";
import { StreamEvent, ToolApprovalEvent, ToolApprovalRequestEvent, TokenUsageEvent } from "../../events/index.ts";
import { Context } from "../../src/index.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent, RESPOND_TOOL, StructuredOutputError } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";
import type { WireServer, WireTurn } from "./wire-server.ts";
import { saveOnEvent } from "./save-on-event.ts";

export interface ProviderUnderTest {
  /** Starts the provider's wire server with `turns`. */
  readonly start: (turns: readonly WireTurn[]) => Promise<WireServer>;
  /** The provider's model class, talking to `server`. */
  readonly model: (server: WireServer) => ToolCallLLM;
  /** The tool results at the end of a request body, in order, as the provider's format holds them. */
  readonly toolResults: (body: unknown) => string[];
  /** The prompt and completion tokens the agent should report for a turn the server answered with `usage`. */
  readonly reported?: (usage: { input: number; output: number }) => { promptTokens: number; completionTokens: number };
  /** How the model gives an answer in a schema: as its text (the provider takes the schema), or by calling the `respond` tool. */
  readonly answers: "text" | "respond";
  /** The JSON schema a request body asked the answer in: the provider's own field, or the `respond` tool's parameters. */
  readonly schemaSent: (body: unknown) => unknown;
}

/** The notebook question's turns: add, multiply, answer. */
export const NOTEBOOK_TURNS: readonly WireTurn[] = [
  { text: "Let me add those first.", calls: [{ name: "add", input: { x: 2123, y: 2321 } }], usage: { input: 310, output: 21 } },
  { calls: [{ name: "multiply", input: { x: 4444, y: 312 } }], usage: { input: 352, output: 22 } },
  { text: "(2123 + 2321) * 312 = 1386528.", usage: { input: 395, output: 15 } },
];

/** Registers the scenarios for `name`. */
export function describeProvider(name: string, provider: ProviderUnderTest): void {
  const reported = provider.reported ?? ((usage) => ({ promptTokens: usage.input, completionTokens: usage.output }));
  const withServer = async <T>(turns: readonly WireTurn[], body: (server: WireServer, llm: ToolCallLLM) => Promise<T>): Promise<T> => {
    const server = await provider.start(turns);
    try {
      const result = await body(server, provider.model(server));
      expect(server.refused).toEqual([]);
      return result;
    } finally {
      await server.close();
    }
  };

  describe(`${name} through its wire format`, () => {
    it("answers the notebook question in two tool rounds, reporting the usage of every call", async () => {
      await withServer(NOTEBOOK_TURNS, async (server, llm) => {
        const handler = new FunctionCallingAgent({ llm, tools: calculatorTools, systemPrompt: "You are a calculator." }).run({
          input: "What is (2123 + 2321) * 312?",
        });
        const usageEvents: number[] = [];
        for await (const ev of handler.streamEvents()) if (ev instanceof TokenUsageEvent) usageEvents.push(ev.call.call);
        const { response, sources, usage } = await handler;
        expect(response.content).toBe("(2123 + 2321) * 312 = 1386528.");
        expect(sources.map((s) => [s.toolName, s.input, s.content])).toEqual([
          ["add", { x: 2123, y: 2321 }, "4444"],
          ["multiply", { x: 4444, y: 312 }, "1386528"],
        ]);
        expect(server.requests).toHaveLength(3);
        expect(provider.toolResults(server.requests[1]?.body)).toEqual(["4444"]);
        // The text of a turn that also called a tool is part of the history the model reads.
        expect(JSON.stringify(server.requests[1]?.body)).toContain("Let me add those first.");
        expect(provider.toolResults(server.requests[2]?.body)).toEqual(["1386528"]);
        expect(usageEvents).toEqual([1, 2, 3]);
        const expected = NOTEBOOK_TURNS.map((turn) => reported(turn.usage as { input: number; output: number }));
        expect(usage.calls.map((call) => call.usage && { promptTokens: call.usage.promptTokens, completionTokens: call.usage.completionTokens })).toEqual(
          expected,
        );
        expect(usage).toMatchObject({ llmCalls: 3, reportedCalls: 3, promptTokens: expected.reduce((sum, u) => sum + u.promptTokens, 0) });
      });
    });

    it("runs parallel calls and sends their results back in the order the model made them", async () => {
      const turns: WireTurn[] = [
        {
          calls: [
            { name: "add", input: { x: 1, y: 2 } },
            { name: "multiply", input: { x: 3, y: 4 } },
            { name: "subtract", input: { x: 10, y: 4 } },
          ],
        },
        { text: "3, 12 and 6." },
      ];
      await withServer(turns, async (server, llm) => {
        const { sources, response } = await new FunctionCallingAgent({ llm, tools: calculatorTools }).run({ input: "1+2, 3*4, 10-4?" });
        expect(sources.map((s) => s.content)).toEqual(["3", "12", "6"]);
        expect(provider.toolResults(server.requests[1]?.body)).toEqual(["3", "12", "6"]);
        expect(response.content).toBe("3, 12 and 6.");
      });
    });

    it("remembers the conversation across runs of one context", async () => {
      const turns: WireTurn[] = [{ text: "Hello Logan!" }, { text: "Your name is Logan." }];
      await withServer(turns, async (server, llm) => {
        const agent = new FunctionCallingAgent({ llm, tools: calculatorTools });
        const ctx = new Context(agent);
        await agent.run({ input: "Hello! My name is Logan." }, { ctx });
        const { response } = await agent.run({ input: "What is my name?" }, { ctx });
        expect(response.content).toBe("Your name is Logan.");
        const second = JSON.stringify(server.requests[1]?.body);
        expect(second).toContain("My name is Logan.");
        expect(second).toContain("Hello Logan!");
        expect(second).toContain("What is my name?");
      });
    });

    it("asks for approval, survives save and restore while the question waits, and runs the call once", async () => {
      const fired: number[] = [];
      const fire = tool({
        name: "fire_employee",
        description: "Remove an employee.",
        parameters: z.object({ id: z.number() }),
        execute: ({ id }) => (fired.push(id), `Employee ${id} removed.`),
      });
      const turns: WireTurn[] = [{ calls: [{ name: "fire_employee", input: { id: 7 } }] }, { text: "Employee 7 was removed." }];
      await withServer(turns, async (server, llm) => {
        const agent = new FunctionCallingAgent({ llm, tools: [fire], needsApproval: (call) => (call.input as { id?: unknown }).id === 7 });
        const handler = agent.run({ input: "Fire employee 7" });
        const saved = await saveOnEvent(handler, ToolApprovalRequestEvent);
        expect(saved).not.toBe("");
        expect(fired).toEqual([]);

        const restored = new FunctionCallingAgent({ llm, tools: [fire], needsApproval: ["fire_employee"] });
        const resumed = restored.run(undefined, { ctx: Context.fromJSON(restored, saved) });
        const asked: string[] = [];
        for await (const ev of resumed.streamEvents()) {
          if (ev instanceof ToolApprovalRequestEvent) {
            asked.push(ev.prefix);
            resumed.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
          }
        }
        const { response } = await resumed;
        expect(asked).toEqual(['Run fire_employee with {"id":7}? (yes/no)']);
        expect(fired).toEqual([7]);
        expect(response.content).toBe("Employee 7 was removed.");
        expect(provider.toolResults(server.requests[1]?.body)).toEqual(["Employee 7 removed."]);
      });
    });
  });

  describe(`${name}: structured output`, () => {
    const Total = z.object({ total: z.number().describe("The result"), steps: z.array(z.string()) });
    const answer = (value: unknown): WireTurn =>
      provider.answers === "text" ? { text: JSON.stringify(value) } : { calls: [{ name: RESPOND_TOOL, input: value as Record<string, unknown> }] };
    const expectSchemaIn = (server: WireServer, required = ["total", "steps"]) => {
      for (const request of server.requests) expect(provider.schemaSent(request.body)).toMatchObject({ type: "object", required });
    };

    it("answers in the schema after a tool round, streamed, with the schema in every request", async () => {
      await withServer([NOTEBOOK_TURNS[0] as WireTurn, answer({ total: 4444, steps: ["2123 + 2321"] })], async (server, llm) => {
        const agent = new FunctionCallingAgent({ llm, tools: calculatorTools, responseFormat: Total });
        const handler = agent.run({ input: "What is 2123 + 2321?" });
        let streamed = "";
        for await (const ev of handler.streamEvents()) if (ev instanceof StreamEvent) streamed += ev.delta;
        const { object, response, sources } = await handler;
        expect(object).toEqual({ total: 4444, steps: ["2123 + 2321"] });
        expect(JSON.parse(String(response.content))).toEqual(object);
        expect(sources.map((s) => s.content)).toEqual(["4444"]);
        if (provider.answers === "text") expect(streamed).toContain(String(response.content));
        expectSchemaIn(server);
      });
    });

    it("sends an answer the schema refuses back to the model once, with what was wrong", async () => {
      await withServer([answer({ total: "many" }), answer({ total: 3, steps: ["1 + 2"] })], async (server, llm) => {
        const { object } = await new FunctionCallingAgent({ llm, responseFormat: Total }).run({ input: "1 + 2?" });
        expect(object.total).toBe(3);
        const second = JSON.stringify(server.requests[1]?.body);
        expect(second).toContain("expected number");
        expect(second).toContain("steps");
        expectSchemaIn(server);
      });
    });

    it("fails with StructuredOutputError when the answer is refused again", async () => {
      await withServer([answer({ total: "many" }), answer({ total: "still many" })], async (server, llm) => {
        const error = await new FunctionCallingAgent({ llm, responseFormat: Total })
          .run({ input: "1 + 2?" })
          .then(() => undefined)
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StructuredOutputError);
        expect((error as StructuredOutputError).issues).toContain("total");
        expect((error as StructuredOutputError).answer).toContain("still many");
        expect(server.requests).toHaveLength(2);
      });
    });

    it("answers in the schema in a run restored from a saved context, and in the next run on it", async () => {
      const Removed = z.object({ removed: z.array(z.number()), note: z.string() });
      const fire = tool({
        name: "fire_employee",
        description: "Remove an employee.",
        parameters: z.object({ id: z.number() }),
        execute: ({ id }) => `Employee ${id} removed.`,
      });
      const turns = [
        { calls: [{ name: "fire_employee", input: { id: 7 } }] },
        answer({ removed: [7], note: "Done." }),
        answer({ removed: [], note: "Nobody else." }),
      ];
      await withServer(turns, async (server, llm) => {
        const make = () => new FunctionCallingAgent({ llm, tools: [fire], needsApproval: ["fire_employee"], responseFormat: Removed });
        const saved = await saveOnEvent(make().run({ input: "Fire employee 7" }), ToolApprovalRequestEvent);
        const restored = make();
        const resumed = restored.run(undefined, { ctx: Context.fromJSON(restored, saved) });
        for await (const ev of resumed.streamEvents())
          if (ev instanceof ToolApprovalRequestEvent) resumed.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
        expect((await resumed).object).toEqual({ removed: [7], note: "Done." });
        const next = await restored.run({ input: "Anyone else?" }, { ctx: resumed.ctx });
        expect(next.object).toEqual({ removed: [], note: "Nobody else." });
        // The first answer is in the history the model reads next, as the JSON it was.
        expect(JSON.stringify(server.requests[2]?.body)).toContain(JSON.stringify(JSON.stringify({ removed: [7], note: "Done." })).slice(1, -1));
        expectSchemaIn(server, ["removed", "note"]);
      });
    });
  });
}
