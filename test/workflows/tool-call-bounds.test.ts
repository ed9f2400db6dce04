/** What the model names and what tools are named: long call ids and clashing tool names. */
import { writeFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../../events/index.ts";
import { ConfigurationError } from "../../src/index.ts";
import { toolResultIdOf } from "../../src/llm/chat-history.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { restApiSetup } from "../../src/cli/rest-api-setup.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { add, calculatorTools, multiply } from "../../workflows/tools/calculator.ts";
import { openApiTools } from "../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../workflows/tools/rest-api.ts";

describe("tool-call ids the model makes up", () => {
  it("runs calls whose ids are hundreds of characters long, approval included, and answers each under the id the model gave", async () => {
    const longIds = ["call_" + "a".repeat(300), "call_" + "a".repeat(299) + "b"]; // alike but for the end
    const llm = new ScriptedLLM([
      {
        toolCalls: [
          { id: longIds[0], name: "add", input: { x: 2, y: 3 } },
          { id: longIds[1], name: "multiply", input: { x: 4, y: 5 } },
        ],
      },
      { text: "5 and 20." },
    ]);
    const agent = new FunctionCallingAgent({ llm, tools: [add, multiply], needsApproval: ["multiply"] });
    const handler = agent.run({ input: "2 + 3, 4 × 5?" });
    for await (const ev of handler.streamEvents())
      if (ev instanceof ToolApprovalRequestEvent) handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
    const { sources, response } = await handler;
    expect(response.content).toBe("5 and 20.");
    expect(sources.map((source) => [source.toolCallId, source.content])).toEqual([
      [longIds[0], "5"],
      [longIds[1], "20"],
    ]);
    const answered = (llm.requests[1]?.messages ?? []).map(toolResultIdOf).filter((id) => id !== undefined);
    expect(answered).toEqual(longIds);
  });
});

describe("tools of one name", () => {
  it("an agent given two tools of one name refuses to start, naming them, instead of running whichever comes first", () => {
    const spec: OpenApiDocument = {
      openapi: "3.0.3",
      paths: { "/items/{id}": { delete: { operationId: "add", summary: "Delete an item (sic)." } } },
    };
    const operations = openApiTools({ openApi: spec, baseURL: "http://127.0.0.1:9" });
    const llm = new ScriptedLLM([]);
    let error: unknown;
    try {
      new FunctionCallingAgent({ llm, tools: [...calculatorTools, ...operations] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe(
      `FunctionCallingAgent: tools 1 and ${calculatorTools.length + 1} are both named "add", and the model calls tools by name. Rename one (openApiTools takes reservedNames, mcpTools a prefix).`,
    );
    const apart = openApiTools({ openApi: spec, baseURL: "http://127.0.0.1:9", reservedNames: calculatorTools.map((t) => t.metadata.name) });
    expect(apart.map((t) => t.metadata.name)).toEqual(["add_2"]);
    expect(() => new FunctionCallingAgent({ llm, tools: [...calculatorTools, ...apart] })).not.toThrow();
  });

  it("the CLI's --tool-per-operation names an operation called like a calculator tool apart, and says so", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stepflow-names-"));
    try {
      const file = join(dir, "api.json");
      writeFileSync(
        file,
        JSON.stringify({
          openapi: "3.0.3",
          info: { title: "Items" },
          paths: { "/items/{id}": { delete: { operationId: "add", summary: "Delete an item." }, get: { operationId: "getItem" } } },
        }),
      );
      const taken = new Set(calculatorTools.map((t) => t.metadata.name));
      const setup = await restApiSetup({ openapi: file, api: "http://127.0.0.1:9", toolPerOperation: true }, {}, "stepflow", taken);
      expect(setup?.tools.map((t) => t.metadata.name)).toEqual(["add_2", "getItem"]);
      expect(setup?.banner).toMatch(/ Operations named like other tools are named apart: add is add_2\.$/);
      expect(setup?.needsApproval({ id: "c", name: "add_2", input: { id: "7" } })).toBe(true);
      await setup?.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
