import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";
import { runToolCall } from "../../src/tools/tool-calls.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { openApiTools } from "../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../workflows/tools/rest-api.ts";

const NOT_RUN = "The tool was not run; call it again with arguments that match its schema.";

describe("what the model reads of arguments that fail a tool's schema", () => {
  it("says, for a body that fits none of an operation's oneOf forms, what each form lacks", async () => {
    const openApi: OpenApiDocument = {
      openapi: "3.0.3",
      paths: {
        "/pets": {
          post: {
            operationId: "addPet",
            requestBody: {
              content: {
                "application/json": {
                  schema: {
                    oneOf: [
                      {
                        type: "object",
                        required: ["kind", "barks"],
                        properties: { kind: { enum: ["dog"] }, barks: { type: "boolean" } },
                        additionalProperties: false,
                      },
                      { type: "object", required: ["kind", "lives"], properties: { kind: { enum: ["cat"] }, lives: { type: "integer" } } },
                    ],
                  },
                },
              },
            },
          },
        },
        "/visits": {
          get: { operationId: "listVisits", parameters: [{ name: "since", in: "query", schema: { anyOf: [{ type: "string" }, { type: "integer" }] } }] },
        },
      },
    };
    const tools = openApiTools({ openApi, baseURL: "http://127.0.0.1:9" }); // never reached: every call below is refused
    const pet = await runToolCall({ id: "c1", name: "addPet", input: { body: { kind: "dog", lives: 3 } } }, tools);
    expect(pet.content).toBe(
      `Invalid arguments for tool addPet: body: fits none of the 2 forms it may take: form 1 [barks: Invalid input: expected boolean, received undefined; "lives" is not a field of it], form 2 [kind: Invalid input: expected "cat"]. ${NOT_RUN}`,
    );
    const since = await runToolCall({ id: "c2", name: "listVisits", input: { since: true } }, tools);
    expect(since.content).toBe(`Invalid arguments for tool listVisits: since: Invalid input: expected string or number, received boolean. ${NOT_RUN}`);
  });

  it("tells the model of a zod union's forms too, and it corrects the call", async () => {
    let paid: unknown;
    const pay = tool({
      name: "pay",
      description: "Pay an invoice by card or by transfer.",
      parameters: z.object({
        method: z.union([z.object({ card: z.string().length(4) }).strict(), z.object({ iban: z.string() }).strict()]),
      }),
      execute: ({ method }) => ((paid = method), "paid"),
    });
    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "c1", name: "pay", input: { method: { card: "4242", iban: "NO93" } } }] },
      { toolCalls: [{ id: "c2", name: "pay", input: { method: { card: "4242" } } }] },
      { text: "Paid by card." },
    ]);
    const { sources } = await new FunctionCallingAgent({ llm, tools: [pay] }).run({ input: "Pay with my card ending 4242" });
    expect(sources[0]?.content).toBe(
      `Invalid arguments for tool pay: method: fits none of the 2 forms it may take: form 1 ["iban" is not a field of it], form 2 ["card" is not a field of it]. ${NOT_RUN}`,
    );
    expect(paid).toEqual({ card: "4242" });
  });

  it("names an argument sent in the wrong case by the name the tool takes", async () => {
    const add = tool({ name: "add", description: "Add.", parameters: z.object({ x: z.number(), y: z.number() }).strict(), execute: ({ x, y }) => x + y });
    const source = await runToolCall({ id: "c1", name: "add", input: { x: 1, Y: 2 } }, [add]);
    expect(source.content).toBe(
      `Invalid arguments for tool add: y: Invalid input: expected number, received undefined; "Y" is not an argument of add: send it as "y". ${NOT_RUN}`,
    );
  });
});
