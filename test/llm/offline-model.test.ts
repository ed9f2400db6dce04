import type { ChatMessage } from "@llamaindex/core/llms";
import { describe, expect, it } from "vitest";
import { Context } from "../../src/index.ts";
import { OfflineDemoLLM, offlineReply } from "../../src/llm/offline-model.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { StreamEvent, ToolApprovalEvent, ToolApprovalRequestEvent } from "../../events/index.ts";
import { restApiTool } from "../../workflows/tools/rest-api.ts";
import { hrOpenApi, startHrApiServer } from "../../workflows/demo/hr-api-server.ts";
import type { HrApiServer } from "../../workflows/demo/hr-api-server.ts";
import { add, calculatorTools, multiply } from "../../workflows/tools/calculator.ts";

const ALL = ["add", "subtract", "multiply", "divide"];
const agent = () => new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools });
const ask = async (input: string) => (await agent().run({ input })).response.content;

describe("OfflineDemoLLM: arithmetic through the tools", () => {
  it("plans (2123 + 2321) * 312 as add, then multiply with add's result from the history", async () => {
    const { response, sources } = await agent().run({ input: "What is (2123 + 2321) * 312?" });
    expect(response.content).toBe("(2123 + 2321) * 312 = 1386528");
    expect(sources.map((s) => [s.toolName, s.input, s.output])).toEqual([
      ["add", { x: 2123, y: 2321 }, 4444],
      ["multiply", { x: 4444, y: 312 }, 1386528],
    ]);
  });

  it("calls the independent operations of one expression in parallel", () => {
    const first = offlineReply([{ role: "user", content: "What is (1 + 2) * (3 + 4)?" }], ALL);
    expect(first.toolCalls?.map((c) => [c.name, c.input])).toEqual([
      ["add", { x: 1, y: 2 }],
      ["add", { x: 3, y: 4 }],
    ]);
  });

  it("uses the tool results it finds in the history, not its own arithmetic", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "What is 2 * 3?" },
      { role: "assistant", content: "", options: { toolCall: [{ id: "c1", name: "multiply", input: { x: 2, y: 3 } }] } },
      { role: "user", content: "7", options: { toolResult: { id: "c1", result: "7", isError: false } } },
    ];
    expect(offlineReply(history, ALL)).toEqual({ text: "2 * 3 = 7" }); // a (wrong) tool result is what it reports
  });

  it("handles nesting, precedence, decimals and negative numbers", async () => {
    expect(await ask("Compute 2 + 3 * 4 - 10 / 4")).toBe("2 + 3 * 4 - 10 / 4 = 11.5");
    expect(await ask("what's ((1.5 + 2.5) * (10 - 4)) / 3?")).toBe("(1.5 + 2.5) * (10 - 4) / 3 = 8");
    expect(await ask("-3 * 4")).toBe("-3 * 4 = -12");
    expect(await ask("10 - (4 - 1)")).toBe("10 - (4 - 1) = 7");
  });

  it("reads word operators", async () => {
    expect(await ask("What is 6 times 7?")).toBe("6 * 7 = 42");
    expect(await ask("12 divided by 4 plus 1 minus 2")).toBe("12 / 4 + 1 - 2 = 2");
    expect(await ask("What is 10 \u2212 4 × 2?")).toBe("10 - 4 * 2 = 2"); // the minus sign U+2212
  });

  it("prints whole numbers exactly past 12 significant digits, and the operands as they were written", async () => {
    expect(await ask("What is 1234567 * 7654321?")).toBe("1234567 * 7654321 = 9449772114007");
    expect(await ask("What is 1000000000000 + 1?")).toBe("1000000000000 + 1 = 1000000000001");
    expect(await ask("What is 9999999999999 + 0?")).toBe("9999999999999 + 0 = 9999999999999");
    expect(await ask("What is 1e5 + 1?")).toBe("1e5 + 1 = 100001");
    expect(await ask("What is 0.50 + .25?")).toBe("0.50 + .25 = 0.75");
    // Past 2^53 JavaScript's numbers skip whole numbers: the answer says "≈".
    expect(await ask("What is 12345678901234567890 + 1?")).toBe("12345678901234567890 + 1 ≈ 12345678901234567000");
  });

  it("drops floating-point noise from a fraction but keeps every digit its inputs determine", async () => {
    expect(await ask("What is 0.1 + 0.2?")).toBe("0.1 + 0.2 = 0.3");
    expect(await ask("What is 3 - 2.9?")).toBe("3 - 2.9 = 0.1");
    expect(await ask("What is 1.15 * 100?")).toBe("1.15 * 100 = 115");
    expect(await ask("What is 1 / 3?")).toBe("1 / 3 = 0.3333333333333333");
    expect(await ask("What is 1234567.123456789 * 1?")).toBe("1234567.123456789 * 1 = 1234567.123456789");
  });

  it("says a result overflowed to Infinity, or is NaN, instead of reporting a failure", () => {
    const answer = (question: string, name: string, input: { x: number; y: number }, result: string) =>
      offlineReply(
        [
          { role: "user", content: question },
          { role: "assistant", content: "", options: { toolCall: [{ id: "c1", name, input }] } },
          { role: "user", content: result, options: { toolResult: { id: "c1", result, isError: false } } },
        ],
        ALL,
      );
    expect(answer("What is 1e200 * 1e200?", "multiply", { x: 1e200, y: 1e200 }, "Infinity")).toEqual({
      text: "1e200 * 1e200 is too large for the calculator: the result overflows to Infinity.",
    });
    expect(answer("What is -1e200 * 1e200 + 1?", "multiply", { x: -1e200, y: 1e200 }, "-Infinity")).toEqual({
      text: "-1e200 * 1e200 is too large for the calculator: the result overflows to -Infinity.",
    });
    expect(answer("What is 5 - 3?", "subtract", { x: 5, y: 3 }, "NaN")).toEqual({ text: "5 - 3 has no numeric result (the calculator returned NaN)." });
  });

  it("answers notation it cannot read with what it can do, instead of reading around it", () => {
    const help = offlineReply([{ role: "user", content: "Write me a poem about llamas" }], ALL);
    for (const question of [
      "What is 1,000 + 2,000?",
      "1,000 + 2,000",
      "What is 2^3 + 1?",
      "What is 10 % 3 + 1?",
      "What is 2 ** 3 + 1?",
      "What is 10 mod 3 + 1?",
      "What is 5x + 1?",
      "What is $5 + 1?",
      "10:30 + 5",
    ]) {
      expect(offlineReply([{ role: "user", content: question }], ALL), question).toEqual(help);
    }
    // Sentence punctuation around the arithmetic is not notation.
    for (const question of ["What is 2 + 2.", "What is 2 + 2, please?", "2+2=?", 'Compute "2 + 2"']) {
      expect(
        offlineReply([{ role: "user", content: question }], ALL).toolCalls?.map((c) => [c.name, c.input]),
        question,
      ).toEqual([["add", { x: 2, y: 2 }]]);
    }
  });

  it("reports division by zero from the divide tool's error", async () => {
    expect(await ask("What is 1 / 0?")).toBe("1 / 0 failed: Cannot divide by zero: y must not be 0.");
  });

  it("says which tool it lacks", async () => {
    const { response } = await new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: [add, multiply] }).run({ input: "What is 8 / 2?" });
    expect(response.content).toBe("I need the divide tool for 8 / 2, and it is not available.");
  });

  it("streams its answer word by word", async () => {
    const handler = agent().run({ input: "What is 6 times 7?" });
    const deltas: string[] = [];
    for await (const ev of handler.streamEvents()) if (ev instanceof StreamEvent) deltas.push(ev.delta);
    expect(deltas).toEqual(["6 ", "* ", "7 ", "= ", "42"]);
  });
});

describe("OfflineDemoLLM: conversation", () => {
  it("remembers a name told earlier in the same conversation, from the history", async () => {
    const a = agent();
    const ctx = new Context(a);
    expect((await a.run({ input: "Hello! My name is Logan." }, { ctx })).response.content).toBe("Nice to meet you, Logan!");
    expect((await a.run({ input: "What is 2 + 2?" }, { ctx })).response.content).toBe("2 + 2 = 4");
    expect((await a.run({ input: "What is my name?" }, { ctx })).response.content).toBe("Your name is Logan.");
    expect(await ask("What is my name?")).toBe("You haven't told me your name yet.");
  });

  it("answers a greeting, and says what it can do otherwise", async () => {
    expect(await ask("Hello!")).toMatch(/^Hello! I'm the offline demo model/);
    const help = await ask("Write me a poem about llamas");
    expect(help).toContain("not a language model");
    expect(help).toContain("OPENAI_API_KEY");
    expect(help).toContain("OPENAI_BASE_URL");
  });
});

describe("OfflineDemoLLM: several questions in one message", () => {
  it("answers each question, one a line, after calling the tools of all of them together", async () => {
    const { response, sources } = await agent().run({ input: "What is 2 + 3? And what is 4 * 5? Thanks!" });
    expect(response.content).toBe("2 + 3 = 5\n4 * 5 = 20");
    expect(sources.map((s) => s.toolName)).toEqual(["add", "multiply"]);
  });

  it("sends the calls of both questions in one reply", () => {
    const first = offlineReply([{ role: "user", content: "What is 1 + 2, and what is 6 / 3?" }], ALL);
    expect(first.toolCalls?.map((c) => [c.id, c.name, c.input])).toEqual([
      ["call_1_0", "add", { x: 1, y: 2 }],
      ["call_1_1", "divide", { x: 6, y: 3 }],
    ]);
  });

  it("mixes kinds of question and names the one it cannot answer", async () => {
    const ctx = new Context(agent());
    const llmAgent = ctx.workflow as FunctionCallingAgent;
    const { response } = await llmAgent.run({ input: "My name is Logan. What is 10 - 4? What is the capital of France?" }, { ctx });
    expect(response.content).toBe(
      "Nice to meet you, Logan!\n10 - 4 = 6\nI can't answer \"What is the capital of France?\": I'm the offline demo model (arithmetic, your name).",
    );
    expect((await llmAgent.run({ input: "Who am I? And what is 2 * 2?" }, { ctx })).response.content).toBe("Your name is Logan.\n2 * 2 = 4");
  });

  it("keeps one question with a decimal point whole", () => {
    expect(offlineReply([{ role: "user", content: "What is 2.5 + 1.25?" }], ALL).toolCalls).toHaveLength(1);
  });
});

describe("OfflineDemoLLM: firing an employee through a REST API tool", () => {
  const fireAgent = (hr: HrApiServer) =>
    new FunctionCallingAgent({
      llm: new OfflineDemoLLM(),
      tools: [restApiTool({ baseURL: hr.baseURL, openApi: hrOpenApi })],
      needsApproval: (call) => (call.input as { method?: string }).method !== "GET",
      timeout: null,
    });
  const answering = async (hr: HrApiServer, input: string, approved: boolean) => {
    const handler = fireAgent(hr).run({ input });
    const asked: string[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        asked.push(`${String((ev.toolCall.input as { method: string }).method)} ${String((ev.toolCall.input as { path: string }).path)}`);
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved, ...(approved ? {} : { reason: "Ask HR first." }) }));
      }
    }
    return { asked, result: await handler };
  };

  it("finds Lawson on the second page and deletes him once a human approves", async () => {
    const hr = await startHrApiServer();
    try {
      const { asked, result } = await answering(hr, "Fire Lawson", true);
      expect(asked).toEqual(["DELETE /api/users/7"]);
      expect(result.response.content).toBe("Done: Michael Lawson (id 7) has been removed.");
      expect(hr.users.some((u) => u.last_name === "Lawson")).toBe(false);
      expect(hr.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /api/users?page=1", "GET /api/users?page=2", "DELETE /api/users/7"]);
    } finally {
      await hr.close();
    }
  });

  it("deletes nothing when the human says no, and says why", async () => {
    const hr = await startHrApiServer();
    try {
      const { result } = await answering(hr, "please fire Michael Lawson", false);
      expect(result.response.content).toMatch(/^I did not fire Michael Lawson: .*Ask HR first\./);
      expect(hr.users).toHaveLength(12);
      expect(hr.requests.every((r) => r.method === "GET")).toBe(true);
    } finally {
      await hr.close();
    }
  });

  it("asks which one when the name fits several employees, and says so when it fits none", async () => {
    const hr = await startHrApiServer();
    try {
      expect((await answering(hr, "Fire George", true)).result.response.content).toBe(
        '2 employees match "George": George Bluth (id 1), George Edwards (id 11). Which one should I fire? Give the full name.',
      );
      expect((await answering(hr, "Fire Nobody", true)).result.response.content).toBe("I found no employee named Nobody.");
      expect(hr.users).toHaveLength(12);
    } finally {
      await hr.close();
    }
  });

  it("does not treat it as a firing without a REST tool, or for 'remove my account'", () => {
    expect(offlineReply([{ role: "user", content: "Fire Lawson" }], ALL).text).toMatch(/^I'm the offline demo model/);
    expect(offlineReply([{ role: "user", content: "Remove my account" }], [...ALL, "call_rest_api"]).text).toMatch(/^I'm the offline demo model/);
  });
});
