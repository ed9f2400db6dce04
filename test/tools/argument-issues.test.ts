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
      `Invalid arguments for tool addPet: body: fits none of the 2 forms it may take: form 1 [barks: is required: send true or false; "lives" is not a field of it], form 2 [kind: must be "cat", got "dog"]. ${NOT_RUN}`,
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
    expect(source.content).toBe(`Invalid arguments for tool add: y: is required: send a number; "Y" is not an argument of add: send it as "y". ${NOT_RUN}`);
  });

  it("says in plain words that a number must be whole, with the value sent and what to send", async () => {
    let ran = 0;
    const repeat = tool({
      name: "repeat",
      description: "Repeat a word.",
      parameters: z.object({ word: z.string(), count: z.number().int() }),
      execute: ({ word, count }) => (ran++, word.repeat(count)),
    });
    const call = async (input: { word: string; count: number | string }) => (await runToolCall({ id: "c1", name: "repeat", input }, [repeat])).content;
    expect(await call({ word: "ha", count: 2.5 })).toBe(
      `Invalid arguments for tool repeat: count: must be a whole number (such as 2 or 3), got 2.5. ${NOT_RUN}`,
    );
    expect(await call({ word: "ha", count: "3" })).toBe(
      `Invalid arguments for tool repeat: count: must be a number, written without quotes (such as 3), got "3". ${NOT_RUN}`,
    );
    expect(ran).toBe(0);
  });

  it("says what a too small or too big value, a wrong format and an option outside an enum must be, with the value sent", async () => {
    const book = tool({
      name: "book",
      description: "Book a room.",
      parameters: z.object({
        nights: z.number().min(1).max(14),
        price: z.number().positive(),
        code: z.string().length(6),
        guests: z.array(z.string()).min(1),
        email: z.email(),
        id: z.uuid(),
        site: z.url(),
        room: z.enum(["single", "double"]),
        arrival: z.iso.date(),
      }),
      execute: () => "booked",
    });
    const source = await runToolCall(
      {
        id: "c1",
        name: "book",
        input: { nights: 30, price: 0, code: "AB12", guests: [], email: "ann at example", id: "42", site: "example", room: "suite", arrival: "next Monday" },
      },
      [book],
    );
    expect(source.content).toBe(
      `Invalid arguments for tool book: ${[
        "nights: must be at most 14, got 30",
        "price: must be greater than 0, got 0",
        'code: must be exactly 6 characters long, got 4 characters ("AB12")',
        "guests: must have at least 1 item, got 0",
        'email: must be an email address such as name@example.com, got "ann at example"',
        'id: must be a UUID such as 3f2b8c1e-9d4a-4c7b-8e2f-1a6d5c9b7e04, got "42"',
        'site: must be a URL such as https://example.com/page, got "example"',
        'room: must be one of "single", "double", got "suite"',
        'arrival: must be an ISO 8601 date such as 2026-11-29, got "next Monday"',
      ].join("; ")}. ${NOT_RUN}`,
    );
  });

  it("keeps a message the tool's author wrote, and checks that the examples it gives pass", async () => {
    const invite = tool({
      name: "invite",
      description: "Invite someone.",
      parameters: z.object({ email: z.email("Give a work email, not a private one"), seats: z.number().max(3, "At most 3 seats per invitation") }),
      execute: () => "invited",
    });
    const source = await runToolCall({ id: "c1", name: "invite", input: { email: "x", seats: 9 } }, [invite]);
    expect(source.content).toBe(
      `Invalid arguments for tool invite: email: Give a work email, not a private one; seats: At most 3 seats per invitation. ${NOT_RUN}`,
    );
    // What the model is told to send is accepted.
    const examples = z.object({ email: z.email(), id: z.uuid(), v4: z.uuidv4(), site: z.url(), at: z.iso.datetime(), day: z.iso.date(), time: z.iso.time() });
    const sent = {
      email: "name@example.com",
      id: "3f2b8c1e-9d4a-4c7b-8e2f-1a6d5c9b7e04",
      v4: "3f2b8c1e-9d4a-4c7b-8e2f-1a6d5c9b7e04",
      site: "https://example.com/page",
      at: "2026-11-29T14:30:00Z",
      day: "2026-11-29",
      time: "14:30:00",
    };
    expect(examples.safeParse(sent).success).toBe(true);
  });
});
