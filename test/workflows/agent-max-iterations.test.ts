import { describe, expect, it } from "vitest";
import { Context } from "../../src/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { AgentMaxIterationsError, FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { add } from "../../workflows/tools/calculator.ts";

describe("AgentMaxIterationsError carries the run, to continue it", () => {
  it("caught, the run continues from its context in an agent with a higher limit, without redoing a call", async () => {
    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "c1", name: "add", input: { x: 1, y: 1 } }] },
      { toolCalls: [{ id: "c2", name: "add", input: { x: 2, y: 2 } }] },
      { toolCalls: [{ id: "c3", name: "add", input: { x: 3, y: 3 } }] },
      { text: "2, 4 and 6" },
    ]);
    const strict = new FunctionCallingAgent({ llm, tools: [add], maxIterations: 2 });
    const error = await strict.run({ input: "1+1, 2+2, 3+3" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentMaxIterationsError);
    const { context, iterations } = error as AgentMaxIterationsError;
    expect(iterations).toBe(2);
    expect(context).toBeDefined();
    expect(llm.requests).toHaveLength(2);

    const patient = new FunctionCallingAgent({ llm, tools: [add], maxIterations: 10 });
    const ctx = Context.fromJSON(patient, JSON.parse(JSON.stringify(context)));
    const { response, sources } = await patient.run(undefined, { ctx });
    expect(response.content).toBe("2, 4 and 6");
    // Both tool results of the stopped run are kept, and only the third call is new.
    expect(sources.map((s) => s.content)).toEqual(["2", "4", "6"]);
    expect(llm.requests).toHaveLength(4);
    expect(llm.requests[2]?.messages.map((m) => m.content)).toEqual(["1+1, 2+2, 3+3", "", "2", "", "4"]);
    expect(response).toEqual({ role: "assistant", content: "2, 4 and 6" });
  });

  it("says how to continue in its message", async () => {
    const llm = new ScriptedLLM(() => ({ toolCalls: [{ name: "add", input: { x: 1, y: 1 } }] }));
    const error = await new FunctionCallingAgent({ llm, tools: [add], maxIterations: 1 }).run({ input: "loop" }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      "FunctionCallingAgent stopped after 1 LLM calls without a final answer (maxIterations: 1). The model kept calling tools: check the tool results it got, or raise maxIterations and continue the run from this error's context.",
    );
  });
});
